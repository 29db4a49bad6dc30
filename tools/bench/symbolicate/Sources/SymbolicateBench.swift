import Foundation
import Symbolication

/// Resolves a file of addresses with the libdw symbolicator and prints timings as JSON:
/// `symbolicate-bench BINARY ADDRESSES [WARM_ROUNDS]` (ADDRESSES: one hex file address per line).
@main
struct SymbolicateBench {
    static func main() throws {
        let args = CommandLine.arguments
        guard args.count >= 3 else {
            FileHandle.standardError.write(Data("usage: symbolicate-bench BINARY ADDRESSES [WARM_ROUNDS]\n".utf8))
            exit(64)
        }
        let rounds = args.count > 3 ? Int(args[3]) ?? 3 : 3
        let addresses = try String(contentsOfFile: args[2], encoding: .utf8).split(separator: "\n").compactMap {
            UInt64($0.hasPrefix("0x") ? $0.dropFirst(2) : $0[...], radix: 16)
        }
        let clock = ContinuousClock()
        let t0 = clock.now
        let module = try DebugModule(path: args[1])
        let first = module.resolve(fileAddress: addresses[0])
        let open = clock.now - t0
        let afterFirst = (units: module.indexedUnitCount, bytes: module.indexedBytes)
        var resolved = first == nil ? 0 : 1
        let t1 = clock.now
        for address in addresses.dropFirst() where module.resolve(fileAddress: address) != nil { resolved += 1 }
        let cold = clock.now - t1
        var best = Duration.seconds(1_000_000)
        for _ in 0..<rounds {
            let t = clock.now
            for address in addresses { _ = module.resolve(fileAddress: address) }
            best = min(best, clock.now - t)
        }
        func seconds(_ d: Duration) -> Double { Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18 }
        let out: [String: Double] = [
            "addresses": Double(addresses.count), "resolved": Double(resolved),
            "open_and_first_lookup_ms": seconds(open) * 1000,
            "first_pass_addresses_per_second": Double(addresses.count - 1) / seconds(cold),
            "warm_addresses_per_second": Double(addresses.count) / seconds(best),
            "warm_us_per_address": seconds(best) / Double(addresses.count) * 1e6,
            "units": Double(module.unitCount),
            "units_indexed_after_first_lookup": Double(afterFirst.units),
            "indexed_mb_after_first_lookup": Double(afterFirst.bytes) / 1e6,
            "units_indexed_at_end": Double(module.indexedUnitCount),
            "indexed_mb_at_end": Double(module.indexedBytes) / 1e6,
        ]
        let data = try JSONSerialization.data(withJSONObject: out, options: [.sortedKeys])
        print(String(decoding: data, as: UTF8.self))
    }
}
