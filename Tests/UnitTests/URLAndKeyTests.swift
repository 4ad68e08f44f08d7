import Curl
import Testing
@testable import ImgBake
import ImgBakeTestSupport

@Suite struct RemoteURLTests {
    @Test(arguments: [
        ("HTTP://Example.COM:80/a/./b/../c.jpg#frag", "http://example.com/a/c.jpg"),
        ("https://example.com:443/x.jpg?b=2&a=1", "https://example.com/x.jpg?b=2&a=1"),
        ("https://example.com:8443/x.jpg", "https://example.com:8443/x.jpg"),
        ("  https://example.com/a b.jpg\n", "https://example.com/a%20b.jpg"),
        ("https://example.com/caf\u{E9}.jpg", "https://example.com/caf%C3%A9.jpg"),
        ("https://example.com/already%20encoded.jpg", "https://example.com/already%20encoded.jpg"),
        ("https://example.com\\pics\\a.jpg", "https://example.com/pics/a.jpg"),
        ("//cdn.example.com/p.png", "https://cdn.example.com/p.png"),
        ("https://user:pw@example.com/p.png", "https://user:pw@example.com/p.png"),
        ("https://[::1]:8080/p.png", "https://[::1]:8080/p.png"),
    ])
    func absoluteURLsAreNormalised(written: String, expected: String) {
        #expect(RemoteURL.resolve(written)?.string == expected)
    }

    @Test(arguments: ["/local.jpg", "local.jpg", "data:image/png;base64,AA", "mailto:a@b.c", "ftp://x/y.jpg",
                      "javascript:alert(1)", "https://", "https://exa mple.com/x", "https://example.com:99999/x", "#top", ""])
    func nonRemoteReferencesAreNil(written: String) {
        #expect(RemoteURL.resolve(written) == nil)
    }

    @Test func relativeReferencesResolveAgainstARemoteBase() throws {
        let base = try #require(RemoteURL.resolve("https://b.test/blog/post/index.html?x=1"))
        #expect(RemoteURL.resolve("img/a.jpg", against: base)?.string == "https://b.test/blog/post/img/a.jpg")
        #expect(RemoteURL.resolve("../a.jpg", against: base)?.string == "https://b.test/blog/a.jpg")
        #expect(RemoteURL.resolve("/a.jpg", against: base)?.string == "https://b.test/a.jpg")
        #expect(RemoteURL.resolve("?v=2", against: base)?.string == "https://b.test/blog/post/index.html?v=2")
        #expect(RemoteURL.resolve("//other.test/a.jpg", against: base)?.string == "https://other.test/a.jpg")
        #expect(RemoteURL.resolve("#frag", against: base) == nil)
    }

    @Test func descriptionHidesCredentials() {
        #expect(RemoteURL.resolve("https://user:secret@example.com/p.png")?.description == "https://example.com/p.png")
    }
}

@Suite struct KeyFilterTests {
    let filter = KeyFilter(stripQuery: ["utm_*", "fbclid", "gclid"],
                           hostRules: ["cdn.test": .keepOnly(["w"]), "Static.test": .ignoreQuery])

    func key(_ url: String) -> String { filter.key(for: RemoteURL.resolve(url)!).string }

    @Test func configuredParametersAreRemovedFromTheKey() {
        #expect(key("https://a.test/p.jpg?utm_source=x&id=3&utm_medium=y&fbclid=z") == "https://a.test/p.jpg?id=3")
        #expect(key("https://a.test/p.jpg?utm_source=x") == "https://a.test/p.jpg")
        #expect(key("https://a.test/p.jpg?gclid=1&v=2") == "https://a.test/p.jpg?v=2")
    }

    @Test func hostRulesKeepOnlyListedParametersOrIgnoreTheQuery() {
        #expect(key("https://cdn.test/p.jpg?w=400&sig=abc&h=3") == "https://cdn.test/p.jpg?w=400")
        #expect(key("https://static.test/p.jpg?v=123") == "https://static.test/p.jpg")
    }

    @Test func globs() {
        #expect(Glob.matches("utm_*", "utm_source"))
        #expect(!Glob.matches("utm_*", "xutm_source"))
        #expect(Glob.matches("a?c*", "abcdef"))
        #expect(Glob.matches("*", ""))
    }
}

@Suite struct AddressPolicyTests {
    func v4(_ a: UInt8, _ b: UInt8, _ c: UInt8, _ d: UInt8, port: Int = 80) -> ResolvedAddress {
        ResolvedAddress(family: .ipv4, bytes: [a, b, c, d], port: port)
    }

    func v6(_ groups: [UInt16]) -> ResolvedAddress {
        ResolvedAddress(family: .ipv6, bytes: groups.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }, port: 443)
    }

    @Test func privateLoopbackAndLinkLocalAreRecognised() {
        for address in [v4(127, 0, 0, 1), v4(10, 1, 2, 3), v4(172, 16, 0, 1), v4(172, 31, 255, 255), v4(192, 168, 1, 1),
                         v4(169, 254, 169, 254), v4(0, 0, 0, 0), v4(100, 64, 0, 1),
                         v6([0, 0, 0, 0, 0, 0, 0, 1]), v6([0xfe80, 0, 0, 0, 0, 0, 0, 1]), v6([0xfd00, 0, 0, 0, 0, 0, 0, 1]),
                         v6([0, 0, 0, 0, 0, 0xffff, 0x7f00, 0x0001])] {
            #expect(AddressPolicy.isPrivate(address), "\(address)")
        }
        for address in [v4(93, 184, 216, 34), v4(172, 32, 0, 1), v4(8, 8, 8, 8), v6([0x2606, 0x4700, 0, 0, 0, 0, 0, 0x1111])] {
            #expect(!AddressPolicy.isPrivate(address), "\(address)")
        }
    }

    @Test func connectToDestinationsAreTrustedOnlyOnTheirPort() {
        let policy = AddressPolicy(allowPrivateNetworks: false, connectTo: ["images.test:80:127.0.0.1:8080", "[::1]:443:[::1]:8443"])
        #expect(policy.allows(v4(127, 0, 0, 1, port: 8080)))
        #expect(!policy.allows(v4(127, 0, 0, 1, port: 9)))
        #expect(policy.allows(ResolvedAddress(family: .ipv6, bytes: Array(repeating: 0, count: 15) + [1], port: 8443)))
        #expect(AddressPolicy(allowPrivateNetworks: true, connectTo: []).allows(v4(10, 0, 0, 1)))
    }
}
