import DataFolder
import FaultlineCore
import Foundation
import SQLiteStorage
import Testing

/// sentry-cli's chunks on disk (the `dif_uploads` table is in StoreConformanceTests, on both engines).
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
        // Sizes and first bytes, read before a file is assembled: absent chunks are left out, or missing.
        #expect(
            try store.sizes([checksum(1), checksum(3), checksum(2), checksum(1)], project: one) == [
                checksum(1): 3, checksum(2): 2,
            ])
        #expect(try store.sizes([checksum(1)], project: two).isEmpty)
        #expect(try store.head(of: checksum(1), project: one, maxBytes: 2) == [1, 2])
        #expect(try store.head(of: checksum(2), project: one, maxBytes: 64) == [4, 5])
        #expect(throws: ChunkStoreError.missing(checksum(1))) {
            try store.head(of: checksum(1), project: two, maxBytes: 4)
        }

        let out = db.folder + "/assembled"
        FileManager.default.createFile(atPath: out, contents: Data([9, 9, 9, 9, 9, 9, 9]))
        var seen: [[UInt8]] = []
        let size = try await store.concatenate(
            [checksum(2), checksum(1), checksum(2)], project: one, into: out, maxBytes: 100
        ) { seen.append($0) }
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
}
