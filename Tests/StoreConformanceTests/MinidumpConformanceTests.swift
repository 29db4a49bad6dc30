import FaultlineCore
import Foundation
import TestSupport
import Testing

/// Stored minidumps (`event.minidump` attachments), on each engine: read back by their own project only, deleted in the
/// transaction that saves their report's final walked result when the project keeps dumps only until processed (the
/// default), kept while a module lacks every debug file or when the project keeps them for the retention period, and
/// counted against the project's debug-file quota.
@Suite(.tags(.endToEnd, .postgres), .provisioned) struct MinidumpConformanceTests {
    let x = BuildID("aa11")!
    let y = BuildID("bb22")!
    let executableFacts = DebugFileFacts(
        buildID: nil, kinds: [.executable], architecture: "x86_64", fileType: "executable", features: [],
        compressedDebugSections: false)

    /// A dump's bytes: the header's magic, then bytes that tell dumps apart (the stores never parse them).
    func dump(_ n: Int, size: Int = 64) -> [UInt8] {
        Array("MDMP".utf8) + (0..<(size - 4)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ n) }
    }

    /// Stores event `n` of `project` as an envelope with a minidump (`bytes`) and a log attachment.
    func storeCrash(_ db: Stores, _ project: Project, _ n: Int, dump bytes: [UInt8]) async throws {
        let event = ReportBatch(project: project.id, receivedAt: Date(), payload: payload, reports: [report(n)])
        let outcomes = try await db.ingest.commit([
            .envelope(
                EnvelopeWrite(
                    project: project.id, receivedAt: Date(), event: event, sessions: [], discarded: [],
                    attachments: [
                        Attachment(
                            filename: "upload_file_minidump.dmp", contentType: "application/x-dmp",
                            attachmentType: "event.minidump", bytes: bytes),
                        Attachment(
                            filename: "log.txt", contentType: "text/plain", attachmentType: "event.attachment",
                            bytes: Array("a log".utf8)),
                    ],
                    eventID: eventID(n)))
        ])
        #expect(outcomes == [.envelope(stored: [eventID(n)], duplicates: [], sessionsApplied: 0, attachments: 2)])
    }

    /// A walked result whose one frame fell in `buildID`: resolved (`missing` false) or in a module without any file.
    func walked(_ buildID: BuildID, missing: Bool, walk: Bool = true) -> SymbolicatedReport {
        SymbolicatedReport(
            state: missing ? .missing : .complete,
            threads: [
                [
                    SymbolicatedFrameSlot(
                        frames: missing ? [] : [ResolvedFrame(function: "crash", file: "crash.c", line: 3)],
                        buildID: buildID.rawValue, status: missing ? "missing_debug_file" : "dwarf", offset: 4)
                ]
            ],
            missing: missing ? [MissingModule(buildID: buildID.rawValue, module: "app")] : [],
            walk: walk
                ? WalkedStacks(threads: [
                    WalkedStacks.Thread(
                        id: 1, name: nil, crashed: true,
                        frames: [WalkedStacks.Frame(address: 0x1004, trust: .context)], end: "outermost frame")
                ]) : nil)
    }

    func outcome(_ reportID: Int64, _ result: SymbolicatedReport, seen: Int64? = nil) -> SymbolicationOutcome {
        SymbolicationOutcome(
            reportID: reportID, result: result, grouping: StoreRows.grouping("crash() \(reportID)"), filesSeen: seen,
            modules: [x.rawValue: "app", y.rawValue: "lib"])
    }

    func uploadExecutable(_ db: Stores, _ text: String, _ id: BuildID, _ project: ProjectID, quota: UInt64 = 1 << 20)
        async throws -> DebugFileStoreOutcome
    {
        try await db.debugFiles.store(
            try upload(db.debugFiles, text), facts: executableFacts, buildID: id, project: project, name: nil,
            quotaBytes: quota, at: Date())
    }

    func minidumps(_ db: Stores) throws -> any MinidumpStore {
        try #require(db.ingest as? any MinidumpStore)
    }

    @Test(arguments: Engine.allCases) func aDumpIsReadBackByItsOwnProjectOnly(_ engine: Engine) async throws {
        try await withStores(engine) { db in
            let a = try await createProject(db)
            let b = try await createProject(db, "other")
            let dumps = try minidumps(db)
            try await storeCrash(db, a, 1, dump: dump(1, size: 100))
            try await storeCrash(db, b, 2, dump: dump(2, size: 40))

            #expect(try await dumps.minidump(eventID: eventID(1), project: a.id) == dump(1, size: 100))
            #expect(try await dumps.minidump(eventID: eventID(2), project: b.id) == dump(2, size: 40))
            // Never across projects, whatever the event id: b cannot read a's dump, nor a b's.
            #expect(try await dumps.minidump(eventID: eventID(1), project: b.id) == nil)
            #expect(try await dumps.minidump(eventID: eventID(2), project: a.id) == nil)
            #expect(try await dumps.minidump(eventID: eventID(3), project: a.id) == nil)
            // Each project is charged for its own dumps only; the log attachment is not a dump.
            #expect(try await dumps.minidumpBytes(project: a.id) == 100)
            #expect(try await dumps.minidumpBytes(project: b.id) == 40)
            #expect(try await db.debugFiles.bytesUsed(project: a.id, excluding: nil) == 100)
            // The default setting, read back with the project.
            #expect(try await db.projects.project(id: a.id)?.minidumps == .untilProcessed)
        }
    }

    @Test(arguments: Engine.allCases) func aDumpIsDeletedWithItsReportsFinalWalkedResult(_ engine: Engine)
        async throws
    {
        try await withStores(engine) { db in
            let a = try await createProject(db)
            let dumps = try minidumps(db)
            try await storeCrash(db, a, 1, dump: dump(1))
            let r1 = try await db.reportID(eventID(1))
            guard case .stored = try await uploadExecutable(db, "x executable", x, a.id) else {
                Issue.record("not stored")
                return
            }

            // A result without a walk (no walker ran) leaves the dump: it was never walked.
            try await db.symbolication.saveAll([outcome(r1, walked(x, missing: false, walk: false))], at: Date())
            #expect(try await dumps.minidump(eventID: eventID(1), project: a.id) == dump(1))

            // When the walked result is saved and every module it touched has a file, the dump goes in its transaction…
            try await db.symbolication.saveAll([outcome(r1, walked(x, missing: false))], at: Date())
            #expect(try await dumps.minidump(eventID: eventID(1), project: a.id) == nil)
            #expect(try await dumps.minidumpBytes(project: a.id) == 0)
            // …and only the dump: the event's other attachment stays, and so does the walk, with the result.
            #expect(try await db.texts("SELECT filename FROM attachments") == ["log.txt"])
            #expect(try await db.symbolication.result(reportID: r1).report?.walk != nil)
        }
    }

    @Test(arguments: Engine.allCases) func aDumpIsKeptWhileAModuleLacksEveryFile(_ engine: Engine) async throws {
        try await withStores(engine) { db in
            let a = try await createProject(db)
            let dumps = try minidumps(db)
            try await storeCrash(db, a, 1, dump: dump(1))
            try await storeCrash(db, a, 2, dump: dump(2))
            let (r1, r2) = (try await db.reportID(eventID(1)), try await db.reportID(eventID(2)))

            // Given a batch: r1 walked through x, which has no file (rank 0); r2 through y, which has none either.
            try await db.symbolication.saveAll(
                [outcome(r1, walked(x, missing: true)), outcome(r2, walked(y, missing: true))], at: Date())
            #expect(try await dumps.minidump(eventID: eventID(1), project: a.id) == dump(1))
            #expect(try await dumps.minidump(eventID: eventID(2), project: a.id) == dump(2))

            // When x's executable arrives, r1 is queued again (a late file may change the walk), and its dump is there.
            guard case .stored = try await uploadExecutable(db, "x executable", x, a.id) else {
                Issue.record("not stored")
                return
            }
            #expect(try await db.texts("SELECT id FROM reports WHERE symbolication = 'pending'") == ["\(r1)"])

            // Then r1's walk with the file is final: its dump goes; r2 still lacks y, so its dump stays.
            try await db.symbolication.saveAll([outcome(r1, walked(x, missing: false))], at: Date())
            #expect(try await dumps.minidump(eventID: eventID(1), project: a.id) == nil)
            #expect(try await dumps.minidump(eventID: eventID(2), project: a.id) == dump(2))
            #expect(try await dumps.minidumpBytes(project: a.id) == UInt64(dump(2).count))
        }
    }

    @Test(arguments: Engine.allCases) func aResultMadeBeforeAFileArrivedKeepsTheDump(_ engine: Engine) async throws {
        try await withStores(engine) { db in
            let a = try await createProject(db)
            let dumps = try minidumps(db)
            try await storeCrash(db, a, 1, dump: dump(1))
            let r1 = try await db.reportID(eventID(1))
            let seen = try #require(try await db.symbolication.pending(limit: 10).first?.filesSeen)
            guard case .stored = try await uploadExecutable(db, "x executable", x, a.id) else {
                Issue.record("not stored")
                return
            }
            // The result was made before x's file was stored (its batch saw an older sequence): the report stays
            // queued, to be walked again with the file, so the dump stays even though the result names no missing module.
            try await db.symbolication.saveAll([outcome(r1, walked(x, missing: false), seen: seen)], at: Date())
            #expect(try await db.texts("SELECT id FROM reports WHERE symbolication = 'pending'") == ["\(r1)"])
            #expect(try await dumps.minidump(eventID: eventID(1), project: a.id) == dump(1))
        }
    }

    @Test(arguments: Engine.allCases) func aProjectKeepingDumpsForRetentionKeepsThem(_ engine: Engine) async throws {
        try await withStores(engine) { db in
            let a = try await createProject(db)
            let b = try await createProject(db, "other")
            let dumps = try minidumps(db)
            #expect(try await db.projects.setMinidumpRetention(.retentionPeriod, for: a.id))
            #expect(try await db.projects.project(id: a.id)?.minidumps == .retentionPeriod)
            #expect(try await db.projects.project(id: b.id)?.minidumps == .untilProcessed)
            #expect(!(try await db.projects.setMinidumpRetention(.retentionPeriod, for: ProjectID(999))))
            try await storeCrash(db, a, 1, dump: dump(1))
            try await storeCrash(db, b, 2, dump: dump(2))
            let (r1, r2) = (try await db.reportID(eventID(1)), try await db.reportID(eventID(2)))
            for project in [a.id, b.id] {
                guard case .stored = try await uploadExecutable(db, "x executable", x, project) else {
                    Issue.record("not stored")
                    return
                }
            }

            // When both reports' final results are saved in one batch, and again alone (`save`)…
            try await db.symbolication.saveAll(
                [outcome(r1, walked(x, missing: false)), outcome(r2, walked(x, missing: false))], at: Date())
            _ = try await db.symbolication.save(
                walked(x, missing: false), grouping: StoreRows.grouping("crash() \(r1)"), reportID: r1, at: Date())

            // …a's dump is kept for download, b's (the default) is gone.
            #expect(try await dumps.minidump(eventID: eventID(1), project: a.id) == dump(1))
            #expect(try await dumps.minidump(eventID: eventID(2), project: b.id) == nil)

            // Back to the default: the next final result of a's report deletes its dump.
            #expect(try await db.projects.setMinidumpRetention(.untilProcessed, for: a.id))
            _ = try await db.symbolication.save(
                walked(x, missing: false), grouping: StoreRows.grouping("crash() \(r1)"), reportID: r1, at: Date())
            #expect(try await dumps.minidump(eventID: eventID(1), project: a.id) == nil)
        }
    }

    @Test(arguments: Engine.allCases) func storedDumpsCountAgainstTheDebugFileQuota(_ engine: Engine) async throws {
        try await withStores(engine) { db in
            let a = try await createProject(db)
            let b = try await createProject(db, "other")
            try await storeCrash(db, a, 1, dump: dump(1, size: 100))
            // a holds a 100-byte dump: a 12-byte file does not fit a 110-byte quota, it fits a 112-byte one.
            #expect(
                try await uploadExecutable(db, "x executable", x, a.id, quota: 110) == .quotaExceeded(wouldUse: 112))
            guard case .stored = try await uploadExecutable(db, "x executable", x, a.id, quota: 112) else {
                Issue.record("not stored")
                return
            }
            #expect(try await db.debugFiles.bytesUsed(project: a.id, excluding: nil) == 112)
            // The replaced build-id's files are left out, the dumps are not.
            #expect(try await db.debugFiles.bytesUsed(project: a.id, excluding: x) == 100)
            // Another project's dump is not a's: b is charged for nothing of a's.
            #expect(try await db.debugFiles.bytesUsed(project: b.id, excluding: nil) == 0)
        }
    }
}
