import AsyncHTTPClient
import FaultlineCore
import Foundation
import NIOHTTP1
import Symbolication
import TestSupport
import Testing

/// The whole path with real parts: binaries built here, split and stripped with objcopy, uploaded by the
/// real symupload to a real server; a native report with hundreds of raw addresses; the server's
/// symbolication compared with llvm-symbolizer's answers for the same addresses.
@Suite(.serialized, .tags(.endToEnd), .provisioned) struct ServerSymbolicationAgreementTests {
    struct Expected: Decodable {
        struct Symbol: Decodable {
            var FunctionName: String
            var FileName: String
            var Line: Int
        }
        var Symbol: [Symbol]
    }

    @Test(arguments: [("c", "gcc", ELFFixtures.crashyC), ("cpp", "g++", ELFFixtures.ordersCpp)])
    func serverAnswersAgreeWithLLVMSymbolizer(_ language: String, _ compiler: String, _ source: String) async throws {
        let tree = try TempFolder("agree")
        let src = try tree.write("prog.\(language)", source)
        let full = tree.file("prog.full")
        try Command.check(compiler, ["-O2", "-g", "-o", full, src])
        try FileManager.default.createDirectory(atPath: tree.file("upload"), withIntermediateDirectories: true)
        try Command.check("objcopy", ["--only-keep-debug", full, tree.file("upload/prog.debug")])
        try Command.check("objcopy", ["--strip-debug", "--strip-unneeded", full, tree.file("upload/prog")])
        let buildID = try #require(try ELFFixtures.readelfBuildID(full))

        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("agree", in: folder)
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }
        let symupload = URL(fileURLWithPath: ServerProcess.binary).deletingLastPathComponent().appendingPathComponent(
            "symupload"
        ).path
        let uploaded = try Command.run(
            symupload, [tree.file("upload"), "--check"],
            environment: ["FAULTLINE_URL": server.baseURL, "FAULTLINE_UPLOAD_TOKEN": project.upload])
        #expect(uploaded.status == 0, "\(uploaded.out)\(uploaded.err)")

        // Every third byte of every function, as program counters of a process loaded at 0x7f0000000000.
        let nm = try Command.check("nm", ["--defined-only", "-S", full])
        var addresses: [UInt64] = []
        for line in nm.split(separator: "\n") {
            let p = line.split(separator: " ")
            guard p.count == 4, p[2] == "t" || p[2] == "T", let start = UInt64(p[0], radix: 16),
                let size = UInt64(p[1], radix: 16)
            else { continue }
            addresses += stride(from: start, to: start + size, by: 3).map { $0 }
        }
        addresses = Array(addresses.prefix(1000))
        let base: UInt64 = 0x7f00_0000_0000
        let threads = stride(from: 0, to: addresses.count, by: 250).map { chunk in
            let frames = addresses[chunk..<min(chunk + 250, addresses.count)].map {
                #"{"address":"0x\#(String(base + $0, radix: 16))","kind":"pc"}"#
            }
            return #"{"frames":[\#(frames.joined(separator: ","))]}"#
        }
        let report = """
            {"event_id":"7077e450fa6f4594850bfed9428d1d98","kind":"crash","timestamp":1795000000,
             "modules":[{"name":"prog","build_id":"\(buildID)","base_address":"0x\(String(base, radix: 16))","size":16777216}],
             "threads":[\(threads.joined(separator: ","))]}
            """
        let http = HTTP(client: HTTPClient.shared)
        let posted = try await http.postReports(server.baseURL, key: project.ingest, report)
        #expect(posted.status == 202)

        var symbolication: [String: Any] = [:]
        let deadline = ContinuousClock.now + .seconds(60) * waitMargin
        while ContinuousClock.now < deadline {
            let answer = try await http.send(
                .GET, server.baseURL + "/api/v1/reports/7077e450fa6f4594850bfed9428d1d98",
                headers: [("Authorization", "Bearer \(project.upload)")])
            symbolication = answer.json["symbolication"] as? [String: Any] ?? [:]
            if symbolication["state"] as? String != "pending" { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        // C runtime glue (_start, frame_dummy, …) has no DWARF, so the state is partial, not complete.
        #expect(symbolication["state"] as? String == "partial")
        let slots = (symbolication["threads"] as? [[[String: Any]]] ?? []).flatMap { $0 }
        #expect(slots.count == addresses.count)

        let llvm = try Command.check(
            "llvm-symbolizer",
            ["--obj=" + full, "--inlining", "--output-style=JSON"] + addresses.map { "0x" + String($0, radix: 16) })
        let expected = try JSONDecoder().decode([Expected].self, from: Data(llvm.utf8))
        var mismatches: [String] = []
        for (i, (slot, want)) in zip(slots, expected).enumerated() {
            let got = (slot["frames"] as? [[String: Any]] ?? []).map {
                "\($0["function"] as? String ?? "??") \($0["file"] as? String ?? "??"):\($0["line"] as? Int ?? 0)"
            }
            let wanted = want.Symbol.map {
                let name = Demangler.demangle($0.FunctionName).replacingOccurrences(of: " (.cold)", with: "")
                return
                    "\(name.hasSuffix(".cold") ? String(name.dropLast(5)) : name) \($0.FileName.isEmpty ? "??" : $0.FileName):\($0.Line)"
            }
            if got != wanted { mismatches.append("0x\(String(addresses[i], radix: 16)): \(got) vs \(wanted)") }
            // Exactly the addresses llvm-symbolizer answers from DWARF (a source path with directories) are
            // DWARF answers here; the rest (C runtime glue) come from the symbol table.
            let llvmUsedDWARF = want.Symbol.first?.FileName.contains("/") == true
            if (slot["status"] as? String == "dwarf") != llvmUsedDWARF {
                mismatches.append("0x\(String(addresses[i], radix: 16)): status \(slot["status"] ?? "?")")
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.count) of \(addresses.count): \(mismatches.prefix(3))")

        // Beside each full name, the readable one (`function_short`), e.g. `shop::payments::charge`.
        let frames = slots.flatMap { $0["frames"] as? [[String: Any]] ?? [] }
        var shorts: Set<String> = []
        for frame in frames {
            guard let function = frame["function"] as? String else { continue }
            let short = frame["function_short"] as? String
            #expect(short == FunctionNames.simplified(function), "\(function)")
            if let short { shorts.insert(short) }
        }
        #expect(!shorts.isEmpty)
        if language == "cpp" {
            #expect(shorts.contains("shop::payments::charge"), "\(shorts.sorted().prefix(20))")
            #expect(!shorts.contains { $0.contains("(shop::Basket") })
        }
    }
}
