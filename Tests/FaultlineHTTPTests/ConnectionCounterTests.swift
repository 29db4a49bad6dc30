import FaultlineCore
import NIOCore
import Synchronization
import Testing

@testable import FaultlineHTTP

/// The shared connection count under concurrency, and the address a peer is counted under.
@Suite struct ConnectionCounterTests {
    /// What the test's clients hold at once, and the most they ever held.
    final class Held: Sendable {
        let state = Mutex<(total: Int, byAddress: [Int], worst: Int, worstShare: Int)>((0, [0, 0, 0, 0], 0, 0))
    }

    @Test func concurrentOpensAndClosesNeitherLeakNorPassTheLimits() async {
        // Given 8 tasks, each holding 3 connections at a time from 4 addresses (24 wanted at once), 1,000 times,
        // against a cap of 10 and a share of 3.
        let counter = ConnectionCounter(limit: 10, perAddress: 3)
        let held = Held()
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for round in 0..<1_000 {
                        var mine: [Int] = []
                        for k in 0..<3 {
                            let address = (task + round + k) % 4
                            guard counter.opened(from: ConnectionSource(ipv4: 10, 0, 0, UInt8(address))) == .admitted
                            else { continue }
                            mine.append(address)
                            held.state.withLock {
                                $0.total += 1
                                $0.byAddress[address] += 1
                                $0.worst = max($0.worst, $0.total)
                                $0.worstShare = max($0.worstShare, $0.byAddress[address])
                            }
                        }
                        await Task.yield()
                        for address in mine {
                            // Counted out before the slot is released, so the test never sees more than the counter allowed.
                            held.state.withLock {
                                $0.total -= 1
                                $0.byAddress[address] -= 1
                            }
                            counter.closed(from: ConnectionSource(ipv4: 10, 0, 0, UInt8(address)))
                        }
                    }
                }
            }
        }
        // Then the limits held at every moment, they were reached, and everything was released.
        let seen = held.state.withLock { $0 }
        #expect(seen.worst <= 10)
        #expect(seen.worstShare <= 3)
        // (The tasks overlapped: more than one task's three were held at once, so the bounds were tested.)
        #expect(seen.worst > 3)
        #expect(counter.current == 0)
        #expect(counter.sources == 0)
    }

    @Test func aPeerIsCountedByItsIPv4AddressOrIPv6Slash64() throws {
        let v4 = try SocketAddress(ipAddress: "192.0.2.7", port: 5000)
        #expect(ConnectionCounter.source(of: v4) == ConnectionSource(ipv4: 192, 0, 2, 7))
        let v6 = try SocketAddress(ipAddress: "2001:db8:0:1::42", port: 5000)
        let sibling = try SocketAddress(ipAddress: "2001:db8:0:1:ffff::1", port: 6000)
        #expect(ConnectionCounter.source(of: v6) == .ipv6Prefix(0x2001_0db8_0000_0001))
        #expect(ConnectionCounter.source(of: v6) == ConnectionCounter.source(of: sibling))
        let mapped = try SocketAddress(ipAddress: "::ffff:192.0.2.7", port: 5000)
        #expect(ConnectionCounter.source(of: mapped) == ConnectionSource(ipv4: 192, 0, 2, 7))
        #expect(ConnectionCounter.source(of: nil) == .other)
    }
}
