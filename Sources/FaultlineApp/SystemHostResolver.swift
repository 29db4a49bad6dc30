import Pipeline

#if canImport(Glibc)
import Glibc
#endif

/// Host names to addresses with the system resolver (`getaddrinfo`), as the HTTP client will resolve them.
///
/// `getaddrinfo` blocks its thread; it runs once per webhook delivery attempt and per change of alert settings.
public struct SystemHostResolver: HostResolving {
    public init() {}

    struct Unresolvable: Error {}

    public func addresses(of host: String) async throws -> [[UInt8]] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &list) == 0, let first = list else { throw Unresolvable() }
        defer { freeaddrinfo(first) }
        var out: [[UInt8]] = []
        var node: UnsafeMutablePointer<addrinfo>? = first
        var seen = 0
        while let current = node, seen < 256 {
            seen += 1
            if let address = current.pointee.ai_addr {
                switch Int32(address.pointee.sa_family) {
                case AF_INET:
                    address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { v4 in
                        var raw = v4.pointee.sin_addr
                        out.append(withUnsafeBytes(of: &raw) { Array($0) })
                    }
                case AF_INET6:
                    address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { v6 in
                        var raw = v6.pointee.sin6_addr
                        out.append(withUnsafeBytes(of: &raw) { Array($0) })
                    }
                default:
                    out.append([])  // an address family we cannot judge: refused by the rules
                }
            }
            node = current.pointee.ai_next
        }
        return out
    }
}
