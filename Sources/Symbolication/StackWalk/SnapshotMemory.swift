import FaultlineCore

/// The captured memory of a snapshot, as the unwinder reads it: 8-byte little-endian words at any address.
///
/// The regions come from a hostile file, so they are sorted here and any region that overlaps one before it is
/// dropped (the snapshot promises sorted, disjoint regions, but a reader must not depend on a promise it cannot
/// check). A read that leaves the captured bytes fails; it never wraps around or reads another region's bytes.
struct SnapshotMemory {
    private let starts: [UInt64]
    private let regions: [ProcessSnapshot.MemoryRegion]

    init(_ regions: [ProcessSnapshot.MemoryRegion]) {
        var kept: [ProcessSnapshot.MemoryRegion] = []
        var end: UInt64 = 0
        for region in regions.sorted(by: { $0.start < $1.start }) where !region.bytes.isEmpty {
            // A region past the top of the address space is dropped, as is one overlapping the previous one.
            let (last, overflow) = region.start.addingReportingOverflow(UInt64(region.bytes.count))
            guard !overflow, kept.isEmpty || region.start >= end else { continue }
            kept.append(region)
            end = last
        }
        self.regions = kept
        self.starts = kept.map(\.start)
    }

    /// The captured bytes `[address, address + count)`, or nil when any of them was not captured.
    func bytes(at address: UInt64, count: Int) -> ArraySlice<UInt8>? {
        guard count >= 0 else { return nil }
        var lo = 0
        var hi = starts.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if starts[mid] <= address { lo = mid + 1 } else { hi = mid }
        }
        guard lo > 0 else { return nil }
        let region = regions[lo - 1]
        let offset = address - region.start
        guard offset <= UInt64(region.bytes.count), UInt64(count) <= UInt64(region.bytes.count) - offset else {
            return nil
        }
        let from = Int(offset)
        return region.bytes[from..<(from + count)]
    }

    /// The little-endian 64-bit word at `address`, or nil when its 8 bytes were not all captured.
    func word(at address: UInt64) -> UInt64? {
        guard let bytes = bytes(at: address, count: 8) else { return nil }
        return bytes.reversed().reduce(0) { $0 << 8 | UInt64($1) }
    }
}
