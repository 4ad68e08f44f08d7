import Curl
import Foundation
import Testing
@testable import ImgBake
import ImgBakeTestSupport

/// The SSRF part of the fault suite: private, loopback and link-local destinations — however they are
/// spelled, whatever a name resolves to, wherever a redirect points — are refused by default, each with
/// the address it would have reached, and reached only with `--allow-private-networks`.
///
/// Two mechanisms. In the test's own network namespace only loopback is ever a destination: spellings
/// of loopback addresses, names that resolve to it (/etc/hosts, curl's `*.localhost`), and a Curl-level
/// check that every address of a name is judged, with curl's `--resolve`. Other private ranges, DNS
/// that answers public then private, and redirects from a public-looking host are tested in a network
/// namespace of the test's own (`ip netns`, needs root; skipped with the reason otherwise), where those
/// addresses exist and lead nowhere else.
@Suite(.hangGuard) struct SSRFTests {
    static func refusal(_ url: String, _ address: String) -> String {
        "\(url): refused to connect to private address \(address) (use --allow-private-networks)"
    }

    /// One small variant per image: what is tested is the fetching, and the suite shares two cores.
    static func small(_ config: Configuration) -> Configuration {
        var config = config
        config.images.widths = [64]
        config.images.formats = [.original]
        return config
    }

    @Test func loopbackHoweverSpelledIsRefusedUnlessAllowed() async throws {
        let origin = try Origin(bind: ["127.0.0.1", "::1"])
        let site = TestSite()
        let p = origin.port
        // URL → the address curl would connect to (curl normalises the numeric IPv4 spellings).
        let cases: [(String, String)] = [
            ("http://127.0.0.1:\(p)/img/coffee.png", "127.0.0.1"),
            ("http://[::1]:\(p)/img/coffee.png", "::1"),
            ("http://0.0.0.0:\(p)/img/coffee.png", "0.0.0.0"),                  // Linux connects it to this host
            ("http://[::]:\(p)/img/coffee.png", "::"),
            ("http://[::ffff:127.0.0.1]:\(p)/img/coffee.png", "::ffff:127.0.0.1"),
            ("http://2130706433:\(p)/img/coffee.png", "127.0.0.1"),              // decimal
            ("http://0x7f000001:\(p)/img/coffee.png", "127.0.0.1"),              // hexadecimal
            ("http://0177.0.0.1:\(p)/img/coffee.png", "127.0.0.1"),              // octal
            ("http://0x7f.0.0.1:\(p)/img/coffee.png", "127.0.0.1"),              // hexadecimal byte
            ("http://127.1:\(p)/img/coffee.png", "127.0.0.1"),                   // short form
            ("http://localhost:\(p)/img/coffee.png", "*"),                       // /etc/hosts: ::1 and 127.0.0.1
            ("http://images.localhost:\(p)/img/coffee.png", "*"),                // curl resolves *.localhost itself
        ]
        site.page("a.html", cases.map { "<img src=\"\($0.0)\" alt=x>" }.joined(separator: "\n"))
        let refused = try await site.build(Self.small(site.configuration(origin: nil)))
        let messages = refused.diagnostics.map(\.message)
        #expect(messages.count == cases.count, "\(messages)")
        for ((url, address), message) in zip(cases, messages) {
            #expect(matches(message, Self.refusal(url, address)), "\(message)")
        }
        #expect(try await origin.stats().requests_total == 0)
        #expect(site.output("a.html") == site.folder.text("site/a.html"))
        try expectNothingCached(site, failures: 0) // refusals are final, not remembered: the opt-in works at once

        var allowed = Self.small(site.configuration(origin: nil))
        allowed.fetch.allowPrivateNetworks = true
        let result = try await site.build(allowed)
        #expect(result.diagnostics.isEmpty && result.summary.imagesDownloaded == cases.count, "\(result.diagnostics)")
        #expect(try await origin.stats().requests_total == cases.count)
    }

    /// DNS may answer a usable address first and a private one after it; curl falls back to the next
    /// address when one does not connect, so each is judged as it is tried. 127.0.0.2 stands for the
    /// public answer here (nothing listens there), the origin's 127.0.0.1 for the private one.
    @Test func everyAddressANameResolvesToIsJudgedWhenItIsTried() async throws {
        let origin = try Origin()
        let session = CurlSession()
        var request = TransferRequest(url: "http://twofaced.test:\(origin.port)/img/coffee.png")
        request.resolve = ["twofaced.test:\(origin.port):127.0.0.2,127.0.0.1"]
        request.allowAddress = { $0.description != "127.0.0.1" }
        guard case .failure(.addressRefused("127.0.0.1")) = await session.perform(request) else {
            Issue.record("the second address was not refused"); return
        }
        #expect(try await origin.stats().requests_total == 0)

        request.allowAddress = { _ in true } // the same, allowed: the second address is the one that answers
        guard case .success(let response) = await session.perform(request) else { Issue.record("not fetched"); return }
        #expect(response.status == 200 && response.body == Paths.image("coffee.png"))
    }

    @Test func addressRangesAndSpellings() {
        func address(_ text: String) -> ResolvedAddress {
            var v4 = in_addr(), v6 = in6_addr()
            if inet_pton(AF_INET, text, &v4) == 1 { return ResolvedAddress(family: .ipv4, bytes: withUnsafeBytes(of: v4) { Array($0) }, port: 80) }
            precondition(inet_pton(AF_INET6, text, &v6) == 1, text)
            return ResolvedAddress(family: .ipv6, bytes: withUnsafeBytes(of: v6) { Array($0) }, port: 80)
        }
        let refused = ["127.0.0.1", "127.255.255.254", "0.0.0.0", "10.0.0.1", "10.255.255.255", "172.16.0.0", "172.31.255.255",
                       "192.168.0.1", "169.254.169.254", "100.64.0.1", "192.0.0.170", "198.18.0.1", "224.0.0.1", "255.255.255.255",
                       "::1", "::", "::ffff:127.0.0.1", "::ffff:10.1.2.3", "::ffff:169.254.169.254", "::127.0.0.1", "::8.8.8.8",
                       "fc00::1", "fd12:3456::1", "fe80::1", "ff02::1", "64:ff9b::a9fe:a9fe", "64:ff9b::127.0.0.1", "64:ff9b:1::1"]
        let allowed = ["8.8.8.8", "1.1.1.1", "172.15.255.255", "172.32.0.0", "192.167.255.255", "100.128.0.1", "203.0.113.10",
                       "2606:4700:4700::1111", "2001:4860:4860::8888", "::ffff:8.8.8.8", "64:ff9b::808:808"]
        for text in refused { #expect(AddressPolicy.isPrivate(address(text)), "\(text) should be refused") }
        for text in allowed { #expect(!AddressPolicy.isPrivate(address(text)), "\(text) should be allowed") }
        // Printed as written: the warning names the address people would recognise.
        #expect(address("::ffff:127.0.0.1").description == "::ffff:127.0.0.1" && address("fe80::1").description == "fe80::1")
    }

    /// The real binary in a namespace with private hosts: each refused, the public one fetched, and all
    /// of them with the opt-in.
    @Test(.enabled(if: NetworkNamespace.unavailable == nil, Comment(rawValue: NetworkNamespace.unavailable ?? "")))
    func privateHostsNamesAndRedirectsInANetworkNamespace() async throws {
        let namespace = try await NetworkNamespace.make(
            addresses: ["10.20.30.40", "172.16.5.4", "192.168.7.8", "169.254.169.254", "203.0.113.10", "203.0.113.20"],
            hosts: """
            127.0.0.1 localhost
            127.0.0.1 loop.test
            10.20.30.40 ten.test
            203.0.113.10 public.test
            203.0.113.20 twofaced.test
            10.20.30.40 twofaced.test

            """)
        // twofaced.test's public address has no listener (its connection is refused), so curl goes on to
        // the private one. Check the premise: the resolver answers public first.
        let answers = try await run(namespace.exec + ["getent", "ahostsv4", "twofaced.test"], in: "/")
        #expect(answers.stdout.split(separator: "\n").first?.hasPrefix("203.0.113.20 ") == true, "\(answers.stdout)")
        let origin = try Origin(bind: ["127.0.0.1", "10.20.30.40", "172.16.5.4", "192.168.7.8", "169.254.169.254", "203.0.113.10"],
                                namespace: namespace)
        let cases: [(String, String?)] = [
            ("http://10.20.30.40/img/coffee.png", "10.20.30.40"),
            ("http://172.16.5.4/img/coffee.png", "172.16.5.4"),
            ("http://192.168.7.8/img/coffee.png", "192.168.7.8"),
            ("http://169.254.169.254/latest/meta-data/coffee.png", "169.254.169.254"),
            ("http://loop.test/img/coffee.png", "127.0.0.1"),
            ("http://ten.test/img/coffee.png", "10.20.30.40"),
            ("http://twofaced.test/img/coffee.png", "10.20.30.40"),
            ("http://public.test/fault/redirect-to/10.20.30.40:80/coffee.png", "10.20.30.40"),
            ("http://public.test/fault/redirect-to/169.254.169.254:80/hubble.jpg", "169.254.169.254"),
            ("http://public.test/img/hubble.jpg", nil), // public: fetched, so the network itself works
        ]
        let site = TestSite()
        site.page("a.html", cases.map { "<img src=\"\($0.0)\" alt=x>" }.joined(separator: "\n"))
        site.page("imgbake.toml", "[images]\nwidths = [64]\nformats = [\"original\"]\n")
        func build(_ extra: [String], out: String) async throws -> CommandResult {
            try await run(namespace.exec + [Paths.binary, "build", site.site, "--out", out, "--cache-dir", site.cache] + extra, in: "/")
        }

        let refused = try await build([], out: site.out)
        #expect(refused.status == 0)
        let warnings = refused.stdout.split(separator: "\n").filter { $0.contains(": warning: ") }
            .map { String($0.split(separator: ": warning: ", maxSplits: 1)[1]) }
        #expect(warnings == cases.compactMap { url, address in address.map { Self.refusal(url, $0) } }, "\(refused.stdout)")
        #expect(try await origin.stats().paths == ["/img/hubble.jpg": 1, "/fault/redirect-to/10.20.30.40:80/coffee.png": 1,
                                                   "/fault/redirect-to/169.254.169.254:80/hubble.jpg": 1])
        #expect(site.folder.files(under: "out/_img").allSatisfy { $0.hasPrefix("hubble-") })

        try await origin.reset()
        let allowed = try await build(["--allow-private-networks"], out: site.folder.path + "/out-allowed")
        #expect(allowed.status == 0 && !allowed.stdout.contains("warning:"), "\(allowed.stdout)")
        #expect(allowed.stdout.contains("\(cases.count) of \(cases.count) image references localised"), "\(allowed.stdout)")
        _ = origin // ended before the namespace goes
    }
}
