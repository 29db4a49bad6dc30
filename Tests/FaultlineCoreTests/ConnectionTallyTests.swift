import FaultlineCore
import Testing

/// The per-address share of the connection cap, as a rule book (the end-to-end tests run it on real sockets).
@Suite struct ConnectionTallyTests {
    let a = ConnectionSource(ipv4: 127, 0, 0, 1)
    let b = ConnectionSource(ipv4: 127, 0, 0, 2)

    @Test func oneAddressAtItsShareDoesNotStopAnother() {
        var tally = ConnectionTally(limit: 6, perSource: 2)
        #expect(tally.opened(from: a) == .admitted)
        #expect(tally.opened(from: a) == .admitted)
        #expect(tally.opened(from: a) == .overShare)
        #expect(tally.opened(from: a) == .overShare)
        #expect(tally.opened(from: b) == .admitted)
        // Refused connections are not counted.
        #expect(tally.open == 3)
        #expect(tally.bySource == [a: 2, b: 1])
    }

    @Test func theCapStillHoldsAcrossAddresses() {
        var tally = ConnectionTally(limit: 3, perSource: 2)
        for source in [a, a, b] { #expect(tally.opened(from: source) == .admitted) }
        #expect(tally.opened(from: .ipv4(9)) == .overCap)
        tally.closed(from: a)
        #expect(tally.opened(from: .ipv4(9)) == .admitted)
    }

    @Test func closingReleasesTheSlotAndForgetsTheAddress() {
        var tally = ConnectionTally(limit: 4, perSource: 1)
        #expect(tally.opened(from: a) == .admitted)
        tally.closed(from: a)
        #expect(tally == ConnectionTally(limit: 4, perSource: 1))
        // A release without a slot (twice, or a source never admitted) changes nothing.
        tally.closed(from: a)
        tally.closed(from: b)
        #expect(tally.open == 0)
        #expect(tally.opened(from: a) == .admitted)
    }

    @Test func theShareIsBetweenOneAndTheCap() {
        #expect(ConnectionTally(limit: 4, perSource: 100).perSource == 4)
        #expect(ConnectionTally(limit: 4, perSource: 0).perSource == 1)
        #expect(ConnectionTally(limit: 0, perSource: 0).limit == 1)
        #expect(ConnectionBudget.defaultPerAddressShare(maxConnections: 384) == 48)
        #expect(ConnectionBudget.defaultPerAddressShare(maxConnections: 16) == 8)
        #expect(ConnectionBudget.defaultPerAddressShare(maxConnections: 3) == 3)
        #expect(ConnectionBudget.defaultPerAddressShare(maxConnections: 0) == 1)
    }

    @Test func anIPv6ClientIsItsSlash64AndAMappedIPv4ClientIsIPv4() throws {
        let one: [UInt8] = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1] + [0, 0, 0, 0, 0, 0, 0, 1]
        let other: [UInt8] = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1] + [0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4]
        let nextNet: [UInt8] = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 2] + [0, 0, 0, 0, 0, 0, 0, 1]
        #expect(ConnectionSource(ipv6: one) == ConnectionSource(ipv6: other))
        #expect(ConnectionSource(ipv6: one) != ConnectionSource(ipv6: nextNet))
        #expect(ConnectionSource(ipv6: one) == .ipv6Prefix(0x2001_0db8_0000_0001))
        let mapped: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1]
        #expect(ConnectionSource(ipv6: mapped) == a)
        #expect(ConnectionSource(ipv6: [1, 2, 3]) == nil)
        #expect(a == .ipv4(0x7f00_0001))
    }
}
