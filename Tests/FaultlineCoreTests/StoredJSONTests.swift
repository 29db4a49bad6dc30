import FaultlineCore
import Foundation
import Testing

/// `StoredJSON` must write exactly what `JSONEncoder` with sorted keys wrote before it (stored results and issue
/// groupings are compared and decoded by readers that never changed), for any value a hostile report can carry.
@Suite struct StoredJSONTests {
    /// Strings a report can carry: every ASCII character (control characters, quotes, slashes, backslashes),
    /// multi-byte UTF-8, a NUL, line and paragraph separators, and ordinary symbol names and paths.
    static let hostile: [String] = {
        var strings = [
            "", "main", "App.CheckoutViewModel.pay() -> ()", "/home/ci/work/Sources/App/File.swift", #"C:\src\a.cpp"#,
            "quote \" and backslash \\ and slash /", "é ü 日本語 🚀 \u{2028}\u{2029}\u{FFFD}", "nul\u{0}inside",
            "\u{7F}del",
            "std::vector<int, std::allocator<int> >::push_back(int const&)", "</script><b>&amp;",
        ]
        strings.append(String(decoding: (0..<128).map { UInt8($0) }, as: UTF8.self))
        for byte in 0..<32 { strings.append("a\(Character(Unicode.Scalar(UInt8(byte))))b") }
        return strings
    }()

    static func sortedKeysEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }

    func text(_ rng: inout SplitMix) -> String { Self.hostile[Int(rng.next() % UInt64(Self.hostile.count))] }
    func maybe<T>(_ rng: inout SplitMix, _ make: (inout SplitMix) -> T) -> T? { rng.next() % 3 == 0 ? nil : make(&rng) }

    func slot(_ rng: inout SplitMix) -> SymbolicatedFrameSlot {
        let frames = (0..<Int(rng.next() % 4)).map { _ in
            ResolvedFrame(
                function: maybe(&rng) { text(&$0) }, file: maybe(&rng) { text(&$0) },
                line: maybe(&rng) { [0, 1, 900, -1, Int.max, Int.min][Int($0.next() % 6)] },
                column: maybe(&rng) { Int($0.next() % 200) }, inlined: rng.next() % 2 == 0)
        }
        return SymbolicatedFrameSlot(
            frames: frames, buildID: maybe(&rng) { text(&$0) },
            status: ["dwarf", "symbol_table", "missing_debug_file", "not_found", "no_module", "client"][
                Int(rng.next() % 6)],
            offset: maybe(&rng) { [0, 0x1234, UInt64.max, $0.next()][Int($0.next() % 4)] })
    }

    func report(_ rng: inout SplitMix) -> SymbolicatedReport {
        SymbolicatedReport(
            state: SymbolicationState.allCases[Int(rng.next() % UInt64(SymbolicationState.allCases.count))],
            threads: (0..<Int(rng.next() % 4)).map { _ in (0..<Int(rng.next() % 12)).map { _ in slot(&rng) } },
            missing: (0..<Int(rng.next() % 3)).map { _ in MissingModule(buildID: text(&rng), module: text(&rng)) },
            failure: maybe(&rng) { text(&$0) }, messageSite: maybe(&rng) { slot(&$0) },
            walk: maybe(&rng) { walk(&$0) })
    }

    func walk(_ rng: inout SplitMix) -> WalkedStacks {
        WalkedStacks(
            threads: (0..<Int(rng.next() % 3)).map { _ in
                WalkedStacks.Thread(
                    id: [0, 42, UInt64.max, rng.next()][Int(rng.next() % 4)], name: maybe(&rng) { text(&$0) },
                    crashed: rng.next() % 2 == 0,
                    frames: (0..<Int(rng.next() % 5)).map { _ in
                        WalkedStacks.Frame(
                            address: [0, 0x4011d6, UInt64.max, rng.next()][Int(rng.next() % 4)],
                            trust: FrameTrust.allCases[Int(rng.next() % UInt64(FrameTrust.allCases.count))])
                    }, end: maybe(&rng) { text(&$0) })
            })
    }

    @Test func resultsAreJSONEncodersBytes() throws {
        let encoder = Self.sortedKeysEncoder()
        var rng = SplitMix(seed: 13)
        for _ in 0..<400 {
            let value = report(&rng)
            let ours = StoredJSON.encode(value)
            #expect(ours == (try encoder.encode(value)))
            #expect(try JSONDecoder().decode(SymbolicatedReport.self, from: ours) == value)
        }
        // The empty and the failed result (the two shapes without threads).
        for value in [
            SymbolicatedReport(state: .notNeeded, threads: [], missing: []), .failed("the server stopped \"3\" times"),
        ] {
            #expect(StoredJSON.encode(value) == (try encoder.encode(value)))
        }
    }

    /// The writer sizes its buffer from the number of frames; strings far longer than that estimate (and escapes
    /// that grow them sixfold) make it grow many times, and nothing written before may be lost or moved.
    @Test func aResultFarLargerThanItsEstimateIsWrittenWhole() throws {
        let escaped = String(repeating: "\u{1}\"/", count: 3_000)
        let long = String(repeating: "SomeType.someFunction(with:) ", count: 400)
        let frames = (0..<20).map { index in
            ResolvedFrame(
                function: index % 2 == 0 ? escaped : long, file: long, line: index, column: index, inlined: index > 0)
        }
        let value = SymbolicatedReport(
            state: .partial,
            threads: [[SymbolicatedFrameSlot(frames: frames, buildID: "ab", status: "dwarf", offset: UInt64.max)]],
            missing: [MissingModule(buildID: escaped, module: long)], failure: escaped + long)
        let ours = StoredJSON.encode(value)
        #expect(ours.count > 20 * 18_000)
        #expect(ours == (try Self.sortedKeysEncoder().encode(value)))
    }

    /// Strings are scanned eight bytes at a time up to the first byte to escape: every byte value, at every offset
    /// of a word and past the first words, among plain ASCII and among multi-byte UTF-8, is escaped as before.
    @Test func everyByteAtEveryOffsetIsEscapedAsJSONEncoderDoes() throws {
        let encoder = Self.sortedKeysEncoder()
        for special in (0..<0x80).map({ Character(Unicode.Scalar(UInt8($0))) }) {
            for offset in 0..<20 {
                for filler in ["abcdefgh", "é日ü🚀"] {
                    let padding = String(String(repeating: filler, count: 4).prefix(offset))
                    let text = padding + String(special) + String(repeating: filler, count: 3) + String(special)
                    let value = SymbolicatedReport(state: .complete, threads: [], missing: [], failure: text)
                    #expect(
                        StoredJSON.encode(value) == (try encoder.encode(value)),
                        "byte \(special.asciiValue ?? 0) at \(offset)")
                }
            }
        }
    }

    @Test func everyHostileStringIsEscapedAsJSONEncoderDoes() throws {
        let encoder = Self.sortedKeysEncoder()
        for text in Self.hostile {
            let value = SymbolicatedReport(state: .partial, threads: [], missing: [], failure: text)
            #expect(StoredJSON.encode(value) == (try encoder.encode(value)), "\(Array(text.utf8))")
        }
    }

    @Test func groupingsAreJSONEncodersBytes() throws {
        let encoder = Self.sortedKeysEncoder()
        var rng = SplitMix(seed: 7)
        for _ in 0..<200 {
            let hash = String(rng.next(), radix: 16)
            let value = GroupingResult(
                fingerprint: Fingerprint(
                    version: Int(rng.next() % 3) + 1, hash: String(repeating: "0", count: 16 - hash.count) + hash),
                source: [.client, .stack, .error, .message][Int(rng.next() % 4)],
                components: (0..<Int(rng.next() % 5)).map { _ in text(&rng) }, title: text(&rng),
                culprit: maybe(&rng) { text(&$0) },
                titleRank: [0, 1, 5, -3, Int.max][Int(rng.next() % 5)])
            let ours = StoredJSON.encode(value)
            #expect(ours == String(decoding: try encoder.encode(value), as: UTF8.self))
            #expect(try JSONDecoder().decode(GroupingResult.self, from: Data(ours.utf8)) == value)
        }
    }

    @Test func alertReasonsAreJSONEncodersBytes() throws {
        let encoder = Self.sortedKeysEncoder()
        let values: [Double] = [
            0, -0.0, 1, -1, 2.5, 0.1, 1.0 / 3, 0.05, 1e-5, 123_456.789, 1_795_000_000_123, 0x1p53 - 1, 0x1p53,
            0x1p53 + 2,
            1e20, -1e21, 1.5e300, .leastNonzeroMagnitude, .greatestFiniteMagnitude, Double(Int64.max),
            Double(Int64.min),
        ]
        var rng = SplitMix(seed: 11)
        for _ in 0..<300 {
            var reason: [String: Double] = [:]
            for _ in 0..<Int(rng.next() % 5) {
                let value =
                    rng.next() % 2 == 0
                    ? values[Int(rng.next() % UInt64(values.count))]
                    : Double(bitPattern: rng.next() & 0x7FEF_FFFF_FFFF_FFFF)
                reason[text(&rng)] = value
            }
            let ours = StoredJSON.encode(reason: reason)
            #expect(ours == String(decoding: try encoder.encode(reason), as: UTF8.self), "\(reason)")
            #expect(try JSONDecoder().decode([String: Double].self, from: Data(ours.utf8)) == reason)
        }
        // What JSONEncoder refuses is left out rather than failing the transaction.
        #expect(StoredJSON.encode(reason: ["share": .nan, "users": 3, "ratio": .infinity]) == #"{"users":3}"#)
    }
}
