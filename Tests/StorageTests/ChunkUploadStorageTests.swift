import FaultlineCore
import Foundation
import Storage
import Testing

/// sentry-cli's chunks on disk and the `dif_uploads` table.
@Suite struct ChunkUploadStorageTests {
    func checksum(_ n: Int) -> ChunkChecksum { ChunkChecksum(String(format: "%040x", n))! }

    @Test func chunksAreStoredPerProjectConcatenatedAndRemoved() async throws {
        let db = try TempDatabase()
        let root = db.folder + "/chunks"
        let store = try FileChunkStore(root: root)
        let (one, two) = (ProjectID(1), ProjectID(2))
        #expect(try store.put(checksum(1), bytes: [1, 2, 3], project: one))
        #expect(try !store.put(checksum(1), bytes: [1, 2, 3], project: one))  // already there
        #expect(try store.put(checksum(2), bytes: [4, 5], project: one))
        // Named by the checksum only, under the project: another project does not see them.
        #expect(FileManager.default.fileExists(atPath: root + "/1/00/" + checksum(1).rawValue))
        #expect(try store.missing([checksum(1), checksum(3), checksum(2)], project: one) == [checksum(3)])
        #expect(try store.missing([checksum(1)], project: two) == [checksum(1)])

        let out = db.folder + "/assembled"
        FileManager.default.createFile(atPath: out, contents: Data([9, 9, 9, 9, 9, 9, 9]))
        var seen: [[UInt8]] = []
        let size = try await store.concatenate([checksum(2), checksum(1), checksum(2)], project: one, into: out, maxBytes: 100) { seen.append($0) }
        #expect(size == 7)
        #expect(seen == [[4, 5], [1, 2, 3], [4, 5]])
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: out))) == [4, 5, 1, 2, 3, 4, 5])  // truncated first

        await #expect(throws: ChunkStoreError.tooLarge) {
            try await store.concatenate([checksum(1), checksum(2)], project: one, into: out, maxBytes: 4) { _ in }
        }
        await #expect(throws: ChunkStoreError.missing(checksum(1))) {
            try await store.concatenate([checksum(1)], project: two, into: out, maxBytes: 100) { _ in }
        }
        store.remove([checksum(1), checksum(9)], project: one)
        #expect(try store.missing([checksum(1), checksum(2)], project: one) == [checksum(1)])
    }

    @Test func sweepRemovesOnlyChunksUnusedSinceTheCutoff() throws {
        let db = try TempDatabase()
        let root = db.folder + "/chunks"
        let store = try FileChunkStore(root: root)
        let p = ProjectID(7)
        _ = try store.put(checksum(1), bytes: [1], project: p)
        _ = try store.put(checksum(2), bytes: [2], project: p)
        let old = Date(timeIntervalSinceNow: -7200)
        for n in [1, 2] {
            let path = root + "/7/00/" + checksum(n).rawValue
            try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: path)
        }
        // A chunk asked about again counts as used (it is about to be assembled).
        #expect(try store.missing([checksum(2)], project: p).isEmpty)
        // Files the store did not make are left alone.
        try Data([0]).write(to: URL(fileURLWithPath: root + "/7/00/README"))
        try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: root + "/7/00/README")

        #expect(try store.sweep(unusedSince: Date(timeIntervalSinceNow: -3600)) == 1)
        #expect(try store.missing([checksum(1), checksum(2)], project: p) == [checksum(1)])
        #expect(FileManager.default.fileExists(atPath: root + "/7/00/README"))
    }

    @Test func difUploadsRoundTripAndStoredBuildIDsAreFoundByDebugIDPrefix() async throws {
        let db = try TempDatabase()
        let project = try await SQLiteProjectStore(database: db.database).createProject(
            slug: ProjectSlug("app")!, ingestKeyHash: SecretHash(hex: String(repeating: "a", count: 64)),
            uploadTokenHash: SecretHash(hex: String(repeating: "b", count: 64)), createdAt: Date(timeIntervalSince1970: 1),
            rateLimitPerSecond: 50)
        let store = SQLiteDifUploadStore(database: db.database)
        #expect(try await store.record(project: project.id, checksum: checksum(1)) == nil)

        let buildID = BuildID("aba11aeff7e7e9e2e1bc84464f53a7e183a8930a")!
        let dif = DifDescription(
            id: checksum(1).rawValue, debugID: "ef1aa1ab-e7f7-e2e9-e1bc-84464f53a7e1", codeID: buildID, cpuName: "x86_64",
            objectName: "crashy", size: 10, sha1: checksum(1), createdAt: Date(timeIntervalSince1970: 1_795_000_000),
            objectClass: .lib, features: ["symtab", "debug", "unwind"])
        let failed = DifUploadRecord(
            project: project.id, checksum: checksum(1), name: "crashy", debugID: dif.debugID, buildID: nil, state: .error,
            detail: "not stored: no build-id", dif: nil, updatedAt: Date(timeIntervalSince1970: 1_795_000_000))
        try await store.save(failed)
        #expect(try await store.record(project: project.id, checksum: checksum(1)) == failed)
        var ok = failed
        ok.state = .ok
        ok.detail = nil
        ok.buildID = buildID
        ok.dif = dif
        try await store.save(ok)  // replaces
        #expect(try await store.record(project: project.id, checksum: checksum(1)) == ok)

        // Debug files stored by symupload are found by the first 16 bytes of their build-id.
        let files = try SQLiteDebugFileStore(database: db.database, root: db.folder + "/debug-files")
        for id in [buildID, BuildID("abcdef0123456789")!, BuildID("ffff" + String(buildID.rawValue.dropFirst(4)))!] {
            let upload = try files.temporaryUpload()
            try Data(id.rawValue.utf8).write(to: URL(fileURLWithPath: upload.path))
            let hash = ContentHash(String(repeating: id.rawValue, count: 64).prefix(64))!
            _ = try await files.store(
                ReceivedDebugFile(upload: upload, sha256: hash, size: UInt64(id.rawValue.utf8.count)),
                facts: DebugFileFacts(buildID: id, kinds: [.debuginfo], architecture: "x86_64", fileType: "shared_object",
                                      features: [], compressedDebugSections: false),
                buildID: id, project: project.id, name: nil, quotaBytes: 1 << 30, at: Date())
        }
        #expect(try await store.storedBuildIDs(project: project.id, hexPrefix: String(buildID.rawValue.prefix(32)), limit: 8) == [buildID])
        // A short build-id appears zero-padded in a debug id.
        #expect(try await store.storedBuildIDs(project: project.id, hexPrefix: "abcdef01234567890000000000000000", limit: 8)
                == [BuildID("abcdef0123456789")!])
        #expect(try await store.storedBuildIDs(project: ProjectID(99), hexPrefix: String(buildID.rawValue.prefix(32)), limit: 8).isEmpty)
        #expect(try await store.storedBuildIDs(project: project.id, hexPrefix: "'; DROP TABLE x; --", limit: 8).isEmpty)
    }
}
