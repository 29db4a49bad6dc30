import Testing

@testable import FaultlineCore

/// `faultline migrate --check`'s estimate (`UpgradePlan`): time and extra disk from the sizes of the tables each pending
/// step touches, by the kind of work it does.
@Suite struct UpgradePlanTests {
    static let rates = UpgradeRates(rewriteBytesPerSecond: 100e6, indexBytesPerSecond: 250e6)

    @Test func eachKindOfWorkIsEstimatedFromTheTablesItTouches() {
        let plan = UpgradePlan.make(
            current: "v20-x",
            pending: [
                ("v21-a", "a column", .schema),
                ("v22-b", "an index", .index("issues")),
                ("v27-c", "a rewrite", .rewrite(["reports", "sessions", "absent"])),
            ],
            tableBytes: ["issues": 500_000_000, "reports": 300_000_000, "sessions": 100_000_000],
            databaseBytes: 1_000_000_000, rates: Self.rates)

        // A schema step costs nothing; an index reads its table (500 MB at 250 MB/s) and needs a quarter of it; a
        // rewrite copies its tables (a table not there counts as empty: 400 MB at 100 MB/s) and needs their size.
        #expect(plan.steps.map(\.seconds) == [0, 2, 4])
        #expect(plan.steps.map(\.extraBytes) == [0, 125_000_000, 400_000_000])
        #expect(plan.seconds == 6)
        // Each step's copy is freed when it commits: the peak is the largest step's, not the sum.
        #expect(plan.extraBytes == 400_000_000)
        #expect(plan.rendered.contains("  v27-c: a rewrite — rewrites reports, sessions, absent (400.0 MB), ~4 s"))
        #expect(plan.rendered.contains("  v21-a: a column — schema only\n"))
        #expect(plan.rendered.contains("estimate: ~6 s, up to 400.0 MB of extra disk"))
    }

    @Test func anUpToDateDatabaseHasNothingToDo() {
        let plan = UpgradePlan.make(
            current: "v27-c", pending: [], tableBytes: [:], databaseBytes: 4096, rates: Self.rates)
        #expect(plan.steps.isEmpty && plan.seconds == 0 && plan.extraBytes == 0)
        #expect(plan.rendered == "schema: v27-c, 4.0 KB\nup to date: nothing to do")
    }

    @Test func pendingStepsAreTheKnownMigrationsNotAppliedAndANewerDatabaseIsRefused() throws {
        let known = ["v1-a", "v2-b", "v3-c"]
        let steps: [String: (summary: String, work: UpgradePlan.Work)] = ["v3-c": ("c", .index("reports"))]

        let (current, pending) = try UpgradePlan.pending(known: known, applied: ["v2-b", "v1-a"], steps: steps)
        #expect(current == "v2-b")
        #expect(pending.map(\.identifier) == ["v3-c"] && pending.first?.work == .index("reports"))
        let new = try UpgradePlan.pending(known: known, applied: [], steps: steps)
        #expect(new.current == "" && new.pending.map(\.summary) == ["(no description)", "(no description)", "c"])

        // A migration this binary does not know: a newer faultline upgraded the database.
        #expect {
            try UpgradePlan.pending(known: known, applied: ["v1-a", "v9-z", "v4-y"], steps: steps)
        } throws: { error in
            let storage = error as? StorageError
            return storage?.code == .newerSchema && storage?.message.contains("its migration v4-y is unknown") == true
        }
    }

    @Test func hostileSizesNeitherTrapNorGoNegative() {
        let plan = UpgradePlan.make(
            current: "", pending: [("v1", "x", .rewrite(["a", "b"]))], tableBytes: ["a": .max, "b": .max],
            databaseBytes: -5, rates: Self.rates)
        #expect(plan.steps[0].bytes == .max)
        #expect(plan.rendered.hasPrefix("schema: (new database), 0 B"))
    }
}

/// The cursor both engines walk a batched rewrite with (`BatchedRewriteCursor`): bounds, budget and progress.
@Suite struct BatchedRewriteCursorTests {
    @Test func aCursorWalksToTheEndItStartedWithAndReportsEachBatch() {
        // Given a table of 5 rows whose largest id is 30
        var cursor = BatchedRewriteCursor(migration: "v900-x", end: 30, total: 5)
        #expect(cursor.hasBatch && cursor.last == .min && !cursor.resumed)

        // The batch ends at the table's n-th id, or at the end when fewer are left (or ids past the end were added).
        #expect(cursor.through(nth: 12) == 12)
        #expect(cursor.through(nth: nil) == 30)
        #expect(cursor.through(nth: 45) == 30)

        let first = cursor.advance(through: 12, count: 3)
        #expect(
            first
                == BatchedRewriteProgress(
                    migration: "v900-x", rows: 3, batch: 3, total: 5, resumed: false, finished: false))
        #expect(first.line == "upgrade: v900-x: 3/5 rows (60 %)")
        _ = cursor.advance(through: 30, count: 2)
        #expect(!cursor.hasBatch && !cursor.finished)
        let last = cursor.finish()
        #expect(last.finished && last.rows == 5 && last.batch == 0 && !cursor.hasBatch)
        #expect(last.line == "upgrade: v900-x: 5/5 rows (100 %), done")
    }

    @Test func aStoredCursorResumesAndAnEmptyTableHasNoBatch() {
        let stored = BatchedRewriteCursor(migration: "v900-x", last: 12, end: 30, rows: 3, total: 5, finished: false)
        #expect(stored.resumed && stored.hasBatch)
        #expect(
            !BatchedRewriteCursor(migration: "v900-x", last: 30, end: 30, rows: 5, total: 5, finished: true).hasBatch)
        let empty = BatchedRewriteCursor(migration: "v900-x", end: nil, total: 0)
        #expect(!empty.hasBatch)
        #expect(empty.progress(batch: 0).line == "upgrade: v900-x: 0/0 rows (100 %)")
    }

    @Test func aBudgetStopsARunAfterThatManyBatches() {
        var budget: Int? = 2
        #expect(BatchedRewriteCursor.spend(&budget) && BatchedRewriteCursor.spend(&budget))
        #expect(!BatchedRewriteCursor.spend(&budget) && budget == 0)
        var unlimited: Int? = nil
        #expect((0..<100).allSatisfy { _ in BatchedRewriteCursor.spend(&unlimited) } && unlimited == nil)
    }
}
