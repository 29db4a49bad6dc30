import FaultlineCore
import Foundation
import TestSupport
import Testing

/// `text` written to a new temporary upload of `store`, hashed: what the HTTP edge hands the store.
func upload(_ store: any DebugFileStore, _ text: String) throws -> ReceivedDebugFile {
    let upload = try store.temporaryUpload()
    try Data(text.utf8).write(to: URL(fileURLWithPath: upload.path))
    return ReceivedDebugFile(
        upload: upload, sha256: try CoreutilsSHA256().sha256(ofFileAt: upload.path), size: UInt64(text.utf8.count))
}

func facts(_ kinds: Set<DebugFileKind>) -> DebugFileFacts {
    DebugFileFacts(
        buildID: nil, kinds: kinds, architecture: "x86_64",
        fileType: kinds == [.sources] ? "source_bundle" : "executable",
        features: kinds.contains(.debuginfo) ? ["debug"] : [], compressedDebugSections: false)
}

/// The debug-file store (rows in the database, content-addressed blobs in a folder), on each engine.
@Suite(.tags(.endToEnd, .postgres), .provisioned) struct DebugFileConformanceTests {
    @Test(arguments: Engine.allCases) func projectsOwnTheirFilesAndAreChargedForTheirOwnBlobs(_ engine: Engine)
        async throws
    {
        try await withStores(engine) { stores in
            let store = stores.debugFiles
            let a = try await createProject(stores).id
            let b = try await createProject(stores, "other").id
            let both = facts([.debuginfo, .executable])
            let id = BuildID("aabbccdd")!
            let now = Date(timeIntervalSince1970: 1_795_000_000)
            guard
                case .stored(_, let replacedA) = try await store.store(
                    try upload(store, "project a's file"), facts: both, buildID: id, project: a, name: nil,
                    quotaBytes: 1000, at: now)
            else { Issue.record("not stored"); return }
            #expect(!replacedA)
            _ = try await store.store(
                try upload(store, "project b's different file"), facts: both, buildID: id, project: b, name: nil,
                quotaBytes: 1000, at: now)
            // Each project's path holds its own bytes; the admin path (no project) the oldest project's.
            #expect(
                try String(
                    contentsOfFile: try #require(try await store.path(of: id, kind: .debuginfo, project: a)),
                    encoding: .utf8) == "project a's file")
            #expect(
                try String(
                    contentsOfFile: try #require(try await store.path(of: id, kind: .executable, project: b)),
                    encoding: .utf8) == "project b's different file")
            #expect(
                try String(
                    contentsOfFile: try #require(try await store.path(of: id, kind: .debuginfo, project: nil)),
                    encoding: .utf8) == "project a's file")
            #expect(try await store.kinds(of: id, project: a) == [.debuginfo, .executable])
            #expect(try await store.kinds(of: BuildID("ee")!, project: a).isEmpty)
            // One blob serving two kinds is charged once.
            #expect(try await store.bytesUsed(project: a, excluding: nil) == 16)
            #expect(try await store.bytesUsed(project: a, excluding: id) == 0)
            // Replacing: newest wins, reported as a replacement; the quota counts the file after the change.
            guard
                case .stored(let rows, let replaced) = try await store.store(
                    try upload(store, "a's second file"), facts: both, buildID: id, project: a, name: "second.debug",
                    quotaBytes: 15, at: now)
            else { Issue.record("not stored"); return }
            #expect(replaced && rows.count == 2)
            #expect(try await store.bytesUsed(project: a, excluding: nil) == 15)
            #expect(try await store.list(project: a, limit: 10).map(\.name) == ["second.debug", "second.debug"])
            let tooBig = try upload(store, "this one is far too large for a")
            #expect(
                try await store.store(
                    tooBig, facts: both, buildID: BuildID("ee")!, project: a, name: nil, quotaBytes: 30, at: now)
                    == .quotaExceeded(wouldUse: 15 + 31))
            // Two blobs remain (a's first was released), and nothing is left in tmp.
            let blobs = try FileManager.default.subpathsOfDirectory(atPath: stores.blobRoot + "/blobs").filter {
                $0.count > 3
            }
            #expect(blobs.count == 2)
            #expect(try FileManager.default.contentsOfDirectory(atPath: stores.blobRoot + "/tmp").isEmpty)
        }
    }

    /// Late symbols: a file that changes what the project holds for a build-id takes the next change sequence value and
    /// queues the project's reports it outranks, in the transaction that stores it; the same bytes again and a source
    /// bundle change nothing; another project's reports are never touched.
    @Test(arguments: Engine.allCases)
    func aFileThatChangesWhatTheProjectHoldsTakesTheNextSequenceAndQueuesItsOutrankedReports(
        _ engine: Engine
    ) async throws {
        try await withStores(engine) { stores in
            let files = stores.debugFiles
            let a = try await createProject(stores).id
            let b = try await createProject(stores, "other").id
            let x = BuildID("aa11")!
            _ = try await stores.ingest.commit([
                .reports(
                    ReportBatch(project: a, receivedAt: Date(), payload: payload, reports: [report(1), report(2)])),
                .reports(ReportBatch(project: b, receivedAt: Date(), payload: payload, reports: [report(3)])),
            ])
            // Given: every report was symbolicated without any file of X (rank 0). PostgreSQL's report_modules rows carry
            // their report's week.
            let week = engine == .postgres ? ", received_at" : ""
            try await stores.execute(
                "INSERT INTO report_modules (report_id, project_id, build_id, module, rank\(week)) SELECT id, project_id, 'aa11', 'app', 0\(week) FROM reports"
            )
            func symbolicated(rank: Int) async throws {
                try await stores.execute("UPDATE reports SET symbolication = 'missing'")
                try await stores.execute("UPDATE report_modules SET rank = \(rank) WHERE project_id = \(a.rawValue)")
            }
            try await symbolicated(rank: 0)
            func pending() async throws -> [String] {
                try await stores.texts("SELECT project_id FROM reports WHERE symbolication = 'pending'")
            }
            func sequence() async throws -> [String] {
                try await stores.texts("SELECT value FROM counters WHERE name = 'debug_files'")
            }
            func put(_ text: String, _ kinds: Set<DebugFileKind>) async throws -> Bool {
                guard
                    case .stored(_, let replaced) = try await files.store(
                        try upload(files, text), facts: facts(kinds), buildID: x, project: a, name: nil,
                        quotaBytes: 1 << 20, at: Date())
                else { throw StorageError(.openFailed, "not stored") }
                return replaced
            }
            let inA = String(a.rawValue)

            // When A's stripped executable of X arrives: A's reports are queued, B's not.
            #expect(try await put("executable", [.executable]) == false)
            #expect(try await sequence() == ["1"])
            #expect(try await stores.texts("SELECT kind || ':' || stored_seq FROM debug_files") == ["executable:1"])
            #expect(try await pending() == [inA, inA])

            // The same bytes again, and a source bundle (it resolves no address): no sequence value, nothing queued.
            try await symbolicated(rank: 1)
            #expect(try await put("executable", [.executable]) == false)
            #expect(try await put("sources", [.sources]) == false)
            #expect(try await sequence() == ["1"])
            #expect(try await pending().isEmpty)

            // Other bytes of the same kind (rebuilt with the same build-id): a replacement; the reports made with the old
            // file are redone.
            #expect(try await put("executable, rebuilt", [.executable]) == true)
            #expect(try await sequence() == ["2"])
            #expect(
                try await stores.texts("SELECT kind || ':' || stored_seq FROM debug_files") == [
                    "executable:2", "sources:0",
                ])
            #expect(try await pending() == [inA, inA])

            // The debug information outranks the executable.
            try await symbolicated(rank: 1)
            #expect(try await put("debuginfo", [.debuginfo]) == false)
            #expect(try await sequence() == ["3"])
            #expect(try await pending() == [inA, inA])
        }
    }

    /// The files of one upload (a fat Mach-O's slices) are stored all or none: a slice past the quota, counted with
    /// the slices before it, refuses the upload and leaves nothing behind (rows, blobs, temporary files); a quota they
    /// fit stores them all, and an upload that replaces the project's own files is charged after the change.
    @Test(arguments: Engine.allCases) func theFilesOfAnUploadAreStoredAllOrNone(_ engine: Engine) async throws {
        try await withStores(engine) { stores in
            let store = stores.debugFiles
            let a = try await createProject(stores).id
            let both = facts([.debuginfo, .executable])
            let ids = [BuildID("a1")!, BuildID("a2")!, BuildID("a3")!]
            let now = Date(timeIntervalSince1970: 1_795_000_000)
            // Three slices of 10 bytes each; the project already keeps 10 bytes of another file.
            _ = try await store.store(
                try upload(store, "kept file!"), facts: both, buildID: BuildID("ff")!, project: a, name: nil,
                quotaBytes: 1000, at: now)
            func slices(_ tag: String) throws -> [DebugFileToStore] {
                try ids.enumerated().map { index, id in
                    DebugFileToStore(
                        try upload(store, "slice \(index) \(tag)"), facts: both, buildID: id, name: "App.dSYM")
                }
            }
            // 30 of quota: the first two slices fit beside the kept file, the third does not.
            #expect(
                try await store.storeAll(try slices("v1"), project: a, quotaBytes: 30, at: now)
                    == [.quotaExceeded(wouldUse: 40)])
            for id in ids { #expect(try await store.kinds(of: id, project: a).isEmpty) }
            #expect(try await store.bytesUsed(project: a, excluding: nil) == 10)
            let blobs = { () throws -> Int in
                try FileManager.default.subpathsOfDirectory(atPath: stores.blobRoot + "/blobs").filter { $0.count > 3 }
                    .count
            }
            #expect(try blobs() == 1)
            #expect(try FileManager.default.contentsOfDirectory(atPath: stores.blobRoot + "/tmp").isEmpty)
            // 40 of quota: all three are stored, in order.
            let stored = try await store.storeAll(try slices("v1"), project: a, quotaBytes: 40, at: now)
            #expect(stored.count == 3)
            for (outcome, id) in zip(stored, ids) {
                guard case .stored(let rows, let replaced) = outcome else { Issue.record("not stored"); continue }
                #expect(!replaced && rows.map(\.buildID) == [id, id])
            }
            #expect(try await store.bytesUsed(project: a, excluding: nil) == 40)
            #expect(try blobs() == 4)
            // The same build-ids again with other bytes replace them: charged after the change, so 40 still fits.
            let again = try await store.storeAll(try slices("v2"), project: a, quotaBytes: 40, at: now)
            #expect(again.allSatisfy { if case .stored(_, let replaced) = $0 { replaced } else { false } })
            #expect(try await store.bytesUsed(project: a, excluding: nil) == 40)
            #expect(try blobs() == 4)
        }
    }

    /// Labels a client sent (a file name, a source bundle's architecture) may hold any character: the file is stored.
    @Test(arguments: Engine.allCases) func hostileLabelsAreStored(_ engine: Engine) async throws {
        try await withStores(engine) { stores in
            let a = try await createProject(stores).id
            var labels = facts([.sources])
            labels.architecture = "x86\u{0}64"
            let outcome = try await stores.debugFiles.store(
                try upload(stores.debugFiles, "bundle"), facts: labels, buildID: BuildID("ab")!, project: a,
                name: "evil\u{0}name",
                quotaBytes: 1 << 20, at: Date())
            guard case .stored = outcome else { Issue.record("not stored: \(outcome)"); return }
            let listed = try await stores.debugFiles.list(project: a, limit: 10)
            #expect(listed.count == 1)
            #expect(listed.first?.name?.hasPrefix("evil") == true)
        }
    }
}
