import FaultlineCore
import Foundation
import Testing

/// sentry-cli's assembled files (`dif_uploads`), on each engine.
@Suite(.tags(.endToEnd, .postgres), .provisioned) struct DifUploadConformanceTests {
    func checksum(_ n: Int) -> ChunkChecksum { ChunkChecksum(String(format: "%040x", n))! }

    @Test(arguments: Engine.allCases) func difUploadsRoundTripAndStoredBuildIDsAreFoundByDebugIDPrefix(_ engine: Engine)
        async throws
    {
        try await withStores(engine) { stores in
            let project = try await createProject(stores)
            let store = stores.difUploads
            #expect(try await store.record(project: project.id, checksum: checksum(1)) == nil)

            let buildID = BuildID("aba11aeff7e7e9e2e1bc84464f53a7e183a8930a")!
            let dif = DifDescription(
                id: checksum(1).rawValue, debugID: "ef1aa1ab-e7f7-e2e9-e1bc-84464f53a7e1", codeID: buildID,
                cpuName: "x86_64",
                objectName: "crashy", size: 10, sha1: checksum(1),
                createdAt: Date(timeIntervalSince1970: 1_795_000_000),
                objectClass: .lib, features: ["symtab", "debug", "unwind"])
            let failed = DifUploadRecord(
                project: project.id, checksum: checksum(1), name: "crashy", debugID: dif.debugID, buildID: nil,
                state: .error,
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
            // Another project's record of the same checksum is its own.
            let other = try await createProject(stores, "other")
            #expect(try await store.record(project: other.id, checksum: checksum(1)) == nil)

            // Debug files stored by symupload are found by the first 16 bytes of their build-id.
            let files = stores.debugFiles
            for id in [buildID, BuildID("abcdef0123456789")!, BuildID("ffff" + String(buildID.rawValue.dropFirst(4)))!]
            {
                _ = try await files.store(
                    try upload(files, id.rawValue), facts: facts([.debuginfo]), buildID: id, project: project.id,
                    name: nil,
                    quotaBytes: 1 << 30, at: Date())
            }
            #expect(
                try await store.storedBuildIDs(
                    project: project.id, hexPrefix: String(buildID.rawValue.prefix(32)), limit: 8) == [buildID])
            // A short build-id appears zero-padded in a debug id.
            #expect(
                try await store.storedBuildIDs(
                    project: project.id, hexPrefix: "abcdef01234567890000000000000000", limit: 8)
                    == [BuildID("abcdef0123456789")!])
            #expect(
                try await store.storedBuildIDs(project: project.id, hexPrefix: "ab", limit: 8)
                    == [buildID, BuildID("abcdef0123456789")!])
            #expect(
                try await store.storedBuildIDs(
                    project: other.id, hexPrefix: String(buildID.rawValue.prefix(32)), limit: 8
                ).isEmpty)
            #expect(
                try await store.storedBuildIDs(project: project.id, hexPrefix: "'; DROP TABLE x; --", limit: 8).isEmpty)
        }
    }

    /// A client's name, debug id and the failure's detail may hold any character: the record is stored.
    @Test(arguments: Engine.allCases) func hostileLabelsAreStored(_ engine: Engine) async throws {
        try await withStores(engine) { stores in
            let project = try await createProject(stores)
            let record = DifUploadRecord(
                project: project.id, checksum: checksum(2), name: "a\u{0}b", debugID: "\u{0}", buildID: nil,
                state: .error,
                detail: "bad\u{0}", dif: nil, updatedAt: Date(timeIntervalSince1970: 1_795_000_000))
            try await stores.difUploads.save(record)
            #expect(try await stores.difUploads.record(project: project.id, checksum: checksum(2))?.state == .error)
        }
    }
}
