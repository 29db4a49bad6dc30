import FaultlineCore
import Testing

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

    @Test func hostileSizesNeitherTrapNorGoNegative() {
        let plan = UpgradePlan.make(
            current: "", pending: [("v1", "x", .rewrite(["a", "b"]))], tableBytes: ["a": .max, "b": .max],
            databaseBytes: -5, rates: Self.rates)
        #expect(plan.steps[0].bytes == .max)
        #expect(plan.rendered.hasPrefix("schema: (new database), 0 B"))
    }
}
