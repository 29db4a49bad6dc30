import FaultlineCore
import Foundation
import TestSupport
import Testing

/// A project's crash-free targets (`ProjectStore.setCrashFreeTargets`), on each engine: the defaults on a new project,
/// set per project and read back by slug, id and in the list, and a value outside 0…100 refused by the database.
@Suite(.tags(.endToEnd, .postgres), .provisioned) struct CrashFreeTargetsConformanceTests {
    @Test(arguments: Engine.allCases) func targetsAreSetPerProjectAndReadBack(_ engine: Engine) async throws {
        try await withStores(engine) { db in
            let app = try await createProject(db)
            let other = try await createProject(db, "other")
            // A new project has the defaults, from the columns' defaults.
            #expect(try await db.projects.project(id: app.id)?.targets == CrashFreeTargets(users: 99.5, sessions: 99.9))

            let own = CrashFreeTargets(users: 99.25, sessions: 99.95)
            #expect(try await db.projects.setCrashFreeTargets(own, for: app.id))
            #expect(try await db.projects.project(id: app.id)?.targets == own)
            #expect(try await db.projects.project(slug: app.slug)?.targets == own)
            #expect(try await db.projects.allProjects().first { $0.id == app.id }?.targets == own)
            // The other project keeps its own, and the other settings are untouched.
            #expect(try await db.projects.project(id: other.id)?.targets == CrashFreeTargets())
            #expect(try await db.projects.project(id: app.id)?.privacy == PrivacySettings())
            #expect(try await db.projects.project(id: app.id)?.minidumps == .untilProcessed)
            // The ends of the range are targets too.
            let ends = CrashFreeTargets(users: 0, sessions: 100)
            #expect(try await db.projects.setCrashFreeTargets(ends, for: other.id))
            #expect(try await db.projects.project(id: other.id)?.targets == ends)

            // No such project: false, nothing written.
            #expect(try await db.projects.setCrashFreeTargets(own, for: ProjectID(9_999)) == false)
        }
    }

    @Test(arguments: Engine.allCases) func theDatabaseRefusesATargetOutsideTheRange(_ engine: Engine) async throws {
        try await withStores(engine) { db in
            let app = try await createProject(db)
            for bad in [CrashFreeTargets(users: 100.5, sessions: 99.9), CrashFreeTargets(users: 99.5, sessions: -1)] {
                await #expect(throws: (any Error).self) { try await db.projects.setCrashFreeTargets(bad, for: app.id) }
            }
            await #expect(throws: (any Error).self) {
                try await db.execute("UPDATE projects SET crash_free_users_target = 101 WHERE id = \(app.id.rawValue)")
            }
            // Nothing changed.
            #expect(try await db.projects.project(id: app.id)?.targets == CrashFreeTargets())
        }
    }
}
