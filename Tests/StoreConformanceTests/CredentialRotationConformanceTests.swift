import FaultlineCore
import Foundation
import Testing

/// Replacing a project's secrets (`ProjectStore.replaceCredential`, migrations `v38-rotation` / `pg23-rotation`) on
/// each engine: an old ingest key is accepted until its end and refused from then on, the new one at once; a
/// rotation without an end (the upload token, `--keep-old-days 0`) refuses the old secret at once; a second rotation
/// never lengthens an old key's end; another project's secrets are untouched.
@Suite(.tags(.endToEnd, .postgres), .provisioned) struct CredentialRotationConformanceTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)
    static let day: TimeInterval = 86_400

    func hash(_ digit: String) -> SecretHash { SecretHash(hex: String(repeating: digit, count: 64)) }
    func at(days: Double) -> Date { Self.start.addingTimeInterval(days * Self.day) }

    @Test(arguments: Engine.allCases) func oldIngestKeyEndsAtItsTimeAndUploadTokenAtOnce(_ engine: Engine) async throws
    {
        try await withStores(engine) { stores in
            let store = stores.projects
            let app = try await createProject(stores)  // ingest "a…", upload "b…"
            let other = try await createProject(stores, "other")  // ingest "c…", upload "d…"

            // When: the ingest key is replaced, the old one kept for 7 days.
            #expect(
                try await store.replaceCredential(
                    .ingest, of: app.id, with: hash("e"), oldAcceptedUntil: at(days: 7), at: Self.start))

            // Then: both keys are accepted until the end, only the new one from then on.
            #expect(try await store.project(credential: hash("a"), kind: .ingest, at: at(days: 6.9))?.id == app.id)
            #expect(try await store.project(credential: hash("e"), kind: .ingest, at: Self.start)?.id == app.id)
            #expect(try await store.project(credential: hash("a"), kind: .ingest, at: at(days: 7)) == nil)
            #expect(try await store.project(credential: hash("e"), kind: .ingest, at: at(days: 400))?.id == app.id)
            // The upload token and the other project are untouched.
            #expect(try await store.project(credential: hash("b"), kind: .upload, at: at(days: 8))?.id == app.id)
            #expect(try await store.project(credential: hash("c"), kind: .ingest, at: at(days: 8))?.id == other.id)

            // When: the upload token is replaced (no end for the old one).
            #expect(
                try await store.replaceCredential(
                    .upload, of: app.id, with: hash("f"), oldAcceptedUntil: nil, at: at(days: 1)))
            // Then: the old token is refused at once, the new one accepted; it is no ingest key.
            #expect(try await store.project(credential: hash("b"), kind: .upload, at: at(days: 1)) == nil)
            #expect(try await store.project(credential: hash("f"), kind: .upload, at: at(days: 1))?.id == app.id)
            #expect(try await store.project(credential: hash("f"), kind: .ingest, at: at(days: 1)) == nil)
            #expect(try await store.project(credential: hash("d"), kind: .upload, at: at(days: 1))?.id == other.id)

            // When: the ingest key is replaced again on day 2 with a 30-day end.
            #expect(
                try await store.replaceCredential(
                    .ingest, of: app.id, with: hash("1"), oldAcceptedUntil: at(days: 32), at: at(days: 2)))
            // Then: the first key keeps its earlier end, the second gets the new one.
            #expect(try await store.project(credential: hash("a"), kind: .ingest, at: at(days: 6))?.id == app.id)
            #expect(try await store.project(credential: hash("a"), kind: .ingest, at: at(days: 7.5)) == nil)
            #expect(try await store.project(credential: hash("e"), kind: .ingest, at: at(days: 31))?.id == app.id)
            #expect(try await store.project(credential: hash("e"), kind: .ingest, at: at(days: 32)) == nil)

            // When: it is replaced once more with no end (`--keep-old-days 0`).
            #expect(
                try await store.replaceCredential(
                    .ingest, of: app.id, with: hash("2"), oldAcceptedUntil: nil, at: at(days: 3)))
            // Then: every earlier key is refused at once; only the newest is accepted.
            for old in ["a", "e", "1"] {
                #expect(try await store.project(credential: hash(old), kind: .ingest, at: at(days: 3)) == nil)
            }
            #expect(try await store.project(credential: hash("2"), kind: .ingest, at: at(days: 3))?.id == app.id)
            #expect(try await store.project(credential: hash("c"), kind: .ingest, at: at(days: 3))?.id == other.id)

            // An unknown project: nothing is written.
            #expect(
                try await !store.replaceCredential(
                    .ingest, of: ProjectID(9_999), with: hash("3"), oldAcceptedUntil: nil, at: at(days: 3)))
            #expect(try await store.project(credential: hash("3"), kind: .ingest, at: at(days: 3)) == nil)
        }
    }
}
