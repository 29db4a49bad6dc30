import Foundation
import Symbolication
import TestSupport
import Testing

/// A crash message's `file:line` resolved in real DWARF: a release build's `fatalError` stops inside libswiftCore
/// and its stack ends there, but the message the runtime printed names the line, and the split debug file knows
/// which function holds it.
@Suite struct SourceLineLookupTests {
    @Test func theFatalErrorLineOfAReleaseBuildResolvesToItsFunction() throws {
        let scratch = try TempFolder("source-line")
        let build = try CrashCorpus.buildSwift("o", flags: ["-O"], in: scratch)
        let crash = try CrashCorpus.crashSwift(build, site: "fatal", in: scratch)
        let line = CrashCorpus.swiftSites.first { $0.name == "fatal" }!.line(in: CrashCorpus.swiftSource)
        // What the runtime printed: "app/main.swift:17: Fatal error: missing configuration db2".
        #expect(crash.stderr.contains("app/main.swift:\(line): Fatal error: missing configuration db2"))

        let module = try DebugModule(path: build.debugFile)
        let resolution = try #require(module.resolve(sourceFile: "app/main.swift", line: line))
        #expect(resolution.source == .dwarf)
        let function = try #require(resolution.frames.last?.function)
        #expect(function.contains("static app.Config.load("), "\(function)")  // a -O build calls a specialization of it
        #expect(resolution.frames.first?.line == line)
        // A file name alone matches too; a line with no code, or another file, does not.
        #expect(module.resolve(sourceFile: "main.swift", line: line) != nil)
        #expect(module.resolve(sourceFile: "app/other.swift", line: line) == nil)
        #expect(module.resolve(sourceFile: "app/main.swift", line: 100_000) == nil)
        #expect(module.resolve(sourceFile: "app/main.swift", line: 0) == nil)
        // The stripped executable has no line tables.
        #expect(try DebugModule(path: build.stripped).resolve(sourceFile: "app/main.swift", line: line) == nil)
    }
}
