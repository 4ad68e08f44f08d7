import Foundation
import Glibc

/// A network namespace of the test's own (`ip netns`, iproute2) holding test hosts: addresses on its
/// loopback interface, and names from a hosts file of its own (`ip netns exec` bind-mounts
/// /etc/netns/NAME/hosts over /etc/hosts). It has no other interface and no route out, so whatever a
/// test sends to 10.x, 169.254.169.254 or a "public" address stays inside it. Removed when the value
/// goes away.
package final class NetworkNamespace: @unchecked Sendable {
    package let name: String

    /// Why namespaces cannot be made here, or nil. `ip netns add` needs root; make test and CI run as
    /// root, a developer's unprivileged run skips what needs one (the in-process SSRF tests cover the
    /// same properties on loopback).
    package static var unavailable: String? {
        geteuid() == 0 ? nil : "network namespaces need root (ip netns add); run the tests as root to include this test"
    }

    /// `exec + arguments` runs a command inside.
    package var exec: [String] { ["ip", "netns", "exec", name] }

    /// Makes the namespace, brings its loopback up, adds `addresses` to it and writes `hosts`.
    /// Throws (the test fails, loudly) when any step does not work although it should.
    package static func make(addresses: [String], hosts: String) async throws -> NetworkNamespace {
        let name = "imgbake-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: "/etc/netns/\(name)", withIntermediateDirectories: true)
        try hosts.write(toFile: "/etc/netns/\(name)/hosts", atomically: true, encoding: .utf8)
        let namespace = NetworkNamespace(name: name)
        try await namespace.ip(["netns", "add", name])
        try await namespace.ip(["-n", name, "link", "set", "lo", "up"])
        for address in addresses {
            try await namespace.ip(["-n", name, "addr", "add", address + (address.contains(":") ? "/128" : "/32"), "dev", "lo"])
        }
        return namespace
    }

    private init(name: String) { self.name = name }

    private func ip(_ arguments: [String]) async throws {
        let result = try await run(["ip"] + arguments, in: "/")
        guard result.status == 0 else {
            throw SetupError(message: "ip \(arguments.joined(separator: " ")) failed (\(result.status)): \(result.stdout)")
        }
    }

    package struct SetupError: Error, CustomStringConvertible {
        let message: String
        package var description: String { message }
    }

    deinit {
        // Processes started inside are ended by their owners first (an Origin goes before this).
        _ = try? ChildProcess("/usr/bin/env", ["ip", "netns", "del", name], stderr: .null).wait()
        try? FileManager.default.removeItem(atPath: "/etc/netns/\(name)")
    }
}
