import Curl
import Foundation

/// Decides, for each address libcurl is about to connect to (also after redirects and whatever DNS
/// said), whether imgbake may: public addresses yes; private, loopback and link-local ones only with
/// `allow_private_networks`, or when the user routed there with `--connect-to`.
public struct AddressPolicy: Sendable {
    public var allowPrivateNetworks: Bool
    /// Destinations named by `--connect-to` (address and port), trusted because the user chose them.
    public var routed: Set<ResolvedAddress>

    public init(allowPrivateNetworks: Bool, connectTo: [String]) {
        self.allowPrivateNetworks = allowPrivateNetworks
        routed = Set(connectTo.flatMap(Self.destinations(ofConnectTo:)))
    }

    public func allows(_ address: ResolvedAddress) -> Bool {
        allowPrivateNetworks || !Self.isPrivate(address) || routed.contains(address)
    }

    /// Loopback, private (RFC 1918, unique-local), link-local, carrier-grade NAT, unspecified,
    /// multicast and reserved ranges. IPv6 addresses that lead to an IPv4 one — IPv4-mapped
    /// (`::ffff:10.0.0.1`) and NAT64's well-known prefix (`64:ff9b::10.0.0.1`, translated by a gateway on
    /// IPv6-only networks) — are judged by their IPv4 part; IPv4-compatible ones (`::10.0.0.1`,
    /// deprecated) and local-use NAT64 (`64:ff9b:1::/48`) are refused outright.
    public static func isPrivate(_ address: ResolvedAddress) -> Bool {
        let b = address.bytes
        switch address.family {
        case .ipv4:
            guard b.count == 4 else { return true }
            return b[0] == 0 || b[0] == 10 || b[0] == 127 || b[0] >= 224
                || (b[0] == 100 && b[1] & 0xC0 == 64) || (b[0] == 169 && b[1] == 254)
                || (b[0] == 172 && b[1] & 0xF0 == 16) || (b[0] == 192 && b[1] == 168)
                || (b[0] == 192 && b[1] == 0 && b[2] == 0) || (b[0] == 198 && b[1] & 0xFE == 18)
        case .ipv6:
            guard b.count == 16 else { return true }
            let mapped = b[0..<10].allSatisfy { $0 == 0 } && b[10] == 0xFF && b[11] == 0xFF
            let nat64 = b[0..<12].elementsEqual([0, 0x64, 0xFF, 0x9B, 0, 0, 0, 0, 0, 0, 0, 0])
            if mapped || nat64 {
                return isPrivate(ResolvedAddress(family: .ipv4, bytes: Array(b[12..<16]), port: address.port))
            }
            let compatibleUnspecifiedOrLoopback = b[0..<12].allSatisfy { $0 == 0 }
            let localNAT64 = b[0..<6].elementsEqual([0, 0x64, 0xFF, 0x9B, 0, 1])
            return compatibleUnspecifiedOrLoopback || localNAT64 || b[0] & 0xFE == 0xFC
                || (b[0] == 0xFE && b[1] & 0xC0 == 0x80) || b[0] == 0xFF
        }
    }

    /// The addresses a `HOST:PORT:CONNECT_HOST:CONNECT_PORT` entry sends traffic to.
    static func destinations(ofConnectTo entry: String) -> [ResolvedAddress] {
        let parts = ConnectTo.split(entry)
        guard parts.count == 4 else { return [] }
        var host = parts[2]
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty, let port = Int(parts[3].isEmpty ? parts[1] : parts[3]) else { return [] }
        return resolve(host: host, port: port)
    }


    private static func resolve(host: String, port: Int) -> [ResolvedAddress] {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var result: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &result) == 0 else { return [] }
        defer { freeaddrinfo(result) }
        var addresses: [ResolvedAddress] = []
        var current = result
        while let info = current {
            if info.pointee.ai_family == AF_INET, let raw = info.pointee.ai_addr {
                let sin = UnsafeRawPointer(raw).assumingMemoryBound(to: sockaddr_in.self).pointee
                addresses.append(ResolvedAddress(family: .ipv4, bytes: withUnsafeBytes(of: sin.sin_addr) { Array($0) }, port: port))
            } else if info.pointee.ai_family == AF_INET6, let raw = info.pointee.ai_addr {
                let sin6 = UnsafeRawPointer(raw).assumingMemoryBound(to: sockaddr_in6.self).pointee
                addresses.append(ResolvedAddress(family: .ipv6, bytes: withUnsafeBytes(of: sin6.sin6_addr) { Array($0) }, port: port))
            }
            current = info.pointee.ai_next
        }
        return addresses
    }
}
