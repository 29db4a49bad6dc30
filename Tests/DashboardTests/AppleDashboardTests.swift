import FaultlineCore
import Foundation
import Testing

@testable import Dashboard

/// The dashboard's Apple parts: the missing-dSYM banner, UUIDs in Apple's spelling, device names in context rows.
@Suite struct AppleDashboardTests {
    static let appID = BuildID("4c4c447355553144a157542d2ecda82a")!
    static let kitID = BuildID("4c4c44a1555531 44b2075c1d2e3f4a5b".replacingOccurrences(of: " ", with: ""))!
    static let elfID = BuildID("aba11aeff7e7e9e2e1bc84464f53a7e183a8930a")!
    static let uiKitID = BuildID("9e0c1a2b3c4d3e5fa6b7c8d9e0f1a2b3")!

    func report() -> Report {
        Report(
            eventID: EventID("0c1d2e3f4a5b4c6d8e9fa0b1c2d3e4f5")!, kind: .crash,
            timestamp: Date(timeIntervalSince1970: 1_790_000_000),
            app: AppInfo(version: "com.example.shop@2.3.0+417", displayVersion: "2.3.0", displayBuild: "417"),
            device: DeviceInfo(
                model: "iPhone15,2", os: "iOS", osVersion: "17.4.1", arch: "arm64e", osBuild: "21E236", simulator: false
            ),
            threads: [
                ThreadInfo(
                    crashed: true, frames: [Frame(address: 1), Frame(address: 2), Frame(address: 3), Frame(address: 4)])
            ],
            modules: [
                LoadedModule(
                    name: "Shop", path: "/x/Shop.app/Shop", buildID: Self.appID, baseAddress: 0, size: 10,
                    format: .macho, arch: "arm64"),
                LoadedModule(
                    name: "ShopKit", path: "/x/Shop.app/Frameworks/ShopKit.framework/ShopKit", buildID: Self.kitID,
                    baseAddress: 10, size: 10, format: .macho),
                LoadedModule(
                    name: "libfoo.so", path: "/opt/libfoo.so", buildID: Self.elfID, baseAddress: 20, size: 10,
                    format: .elf),
                LoadedModule(
                    name: "UIKitCore", path: "/System/Library/PrivateFrameworks/UIKitCore.framework/UIKitCore",
                    buildID: Self.uiKitID,
                    baseAddress: 30, size: 10, format: .macho),
            ])
    }

    func symbols(_ statuses: [(BuildID, String)]) -> SymbolicatedReport {
        SymbolicatedReport(
            state: .partial,
            threads: [statuses.map { SymbolicatedFrameSlot(frames: [], buildID: $0.0.rawValue, status: $0.1) }],
            missing: [])
    }

    @Test("the banner counts frames per Mach-O module without a dSYM, names its UUID, module and architecture")
    func banner() {
        let lines = MissingDSYMNotes.lines(
            report: report(),
            symbols: symbols([
                (Self.appID, "missing_debug_file"), (Self.kitID, "symbol_table"), (Self.appID, "missing_debug_file"),
                (Self.elfID, "missing_debug_file"), (Self.uiKitID, "missing_debug_file"),
            ]))
        #expect(
            lines == [
                "2 frames lack a dSYM for UUID 4C4C4473-5555-3144-A157-542D2ECDA82A (Shop, arm64).",
                "1 frame lacks a dSYM for UUID 4C4C44A1-5555-3144-B207-5C1D2E3F4A5B (ShopKit, arm64e).",
            ])
        #expect(MissingDSYMNotes.lines(report: report(), symbols: symbols([(Self.appID, "dwarf")])).isEmpty)
        #expect(MissingDSYMNotes.lines(report: report(), symbols: nil).isEmpty)
    }

    @Test("missing debug files: Mach-O UUIDs in Apple's spelling, called dSYMs, listed per release")
    func missingPage() {
        let page = MissingDebugFilesPage(
            slug: ProjectSlug("shop")!,
            missing: [
                MissingDebugFileSummary(buildID: Self.appID, module: "Shop", reports: 3, releases: ["2.3.0", "2.2.0"]),
                MissingDebugFileSummary(
                    buildID: Self.kitID, module: "ShopKit", reports: 1, releases: ["2.3.0"], has: [.executable]),
                MissingDebugFileSummary(buildID: Self.elfID, module: "libfoo.so", reports: 1, releases: []),
                MissingDebugFileSummary(buildID: Self.uiKitID, module: "UIKitCore", reports: 4, releases: ["2.3.0"]),
            ],
            now: Date(timeIntervalSince1970: 1_790_000_000))
        #expect(
            page.rows.map(\.buildID) == [
                "4C4C4473-5555-3144-A157-542D2ECDA82A", "4C4C44A1-5555-3144-B207-5C1D2E3F4A5B", Self.elfID.rawValue,
                "9E0C1A2B-3C4D-3E5F-A6B7-C8D9E0F1A2B3",
            ])
        #expect(page.rows.map(\.fileKind) == ["dSYM", "dSYM", "debug file", "dSYM"])
        #expect(
            page.rows.map(\.holds) == [
                "no dSYM", "executable only, no dSYM (names, no files or lines)", "nothing",
                "an Apple system library (its symbols are Apple's; nothing to upload)",
            ])
        #expect(page.releaseGroups.map(\.releaseName) == ["2.3.0", "2.2.0"])
        #expect(page.releaseGroups[0].lacking.map(\.moduleName) == ["Shop", "ShopKit"])
        #expect(page.releaseGroups[1].lackingCount == 1)
    }

    @Test("a release's page names the app's UUIDs its reports lacked the dSYM of, not Apple's nor other releases'")
    func releaseBanner() {
        let now = Date(timeIntervalSince1970: 1_790_000_000)
        let row = ReleaseRow(
            release: "2.3.0", firstSeen: now, lastSeen: now, health: ReleaseHealth(), adoption: nil, recentSessions: 0,
            newIssues: 1)
        func page(_ row: ReleaseRow, _ missing: [MissingDebugFileSummary]) -> ReleasePage {
            ReleasePage(
                slug: ProjectSlug("shop")!, row: row,
                trend: HealthTrend.make(series: [], last: DayNumber(now), length: 30), top: [],
                releases: [], now: now, missing: missing)
        }
        let missing = [
            MissingDebugFileSummary(buildID: Self.appID, module: "Shop", reports: 3, releases: ["2.3.0"]),
            MissingDebugFileSummary(
                buildID: Self.kitID, module: "ShopKit", reports: 1, releases: ["2.2.0"], has: [.executable]),
            MissingDebugFileSummary(buildID: Self.uiKitID, module: "UIKitCore", reports: 4, releases: ["2.3.0"]),
            MissingDebugFileSummary(buildID: Self.elfID, module: "libfoo.so", reports: 1, releases: ["2.3.0"]),
        ]
        let current = page(row, missing)
        #expect(current.missingDSYMs == ["No dSYM for UUID 4C4C4473-5555-3144-A157-542D2ECDA82A (Shop)."])
        #expect(current.hasMissingDSYMs)
        #expect(current.missingDebugFilesHref.hasSuffix("missing-debug-files.html"))
        var older = row
        older.release = "2.2.0"
        #expect(
            page(older, missing).missingDSYMs == [
                "No dSYM for UUID 4C4C44A1-5555-3144-B207-5C1D2E3F4A5B (ShopKit); the server has: executable only, no dSYM (names, no files or lines)."
            ])
        older.release = "2.1.0"
        #expect(!page(older, missing).hasMissingDSYMs)
    }

    @Test("the event's context shows the device by name, the OS build, simulator or not, the app's version and build")
    func contextRows() {
        let view = SampleEventView(report: report(), symbols: nil)
        let rows = Dictionary(view.contextRows.map { ($0.infoLabel, $0.infoValue) }, uniquingKeysWith: { a, _ in a })
        #expect(rows["Device"] == "iPhone 14 Pro (iPhone15,2)")
        #expect(rows["Operating system"] == "iOS 17.4.1 (21E236)")
        #expect(rows["Simulator"] == "no (a real device)")
        #expect(rows["App version (build)"] == "2.3.0 (417)")
        #expect(rows["Architecture"] == "arm64e")
    }

    @Test("a frame of a Mach-O image without its dSYM says so; Apple's libraries have none to upload")
    func frameStatus() {
        let modules = report().modules.sorted { $0.baseAddress < $1.baseAddress }
        func status(_ address: UInt64, _ buildID: BuildID) -> String? {
            SampleEventView.frameView(
                Frame(address: address, instructionKind: .programCounter), number: 0,
                slot: SymbolicatedFrameSlot(frames: [], buildID: buildID.rawValue, status: "missing_debug_file"),
                modules: modules
            ).frameStatus
        }
        #expect(status(5, Self.appID) == "dSYM missing: upload it with symupload or sentry-cli")
        #expect(status(35, Self.uiKitID) == "Apple system library: no dSYM to upload")
        #expect(status(25, Self.elfID) == "debug file missing: upload it with symupload")
    }

    @Test("the device breakdown reads machine ids as names")
    func deviceBreakdown() {
        let breakdowns = IssuePage.breakdowns([
            "device": [BreakdownEntry(value: "iPhone15,2", events: 3), BreakdownEntry(value: "Pixel 8", events: 1)],
            "os": [BreakdownEntry(value: "iOS 17.4.1", events: 4)],
        ])
        let devices = breakdowns.first { $0.breakdownHeading == "Devices" }
        #expect(devices?.entries.map(\.entryValue) == ["iPhone 14 Pro (iPhone15,2)", "Pixel 8"])
        #expect(
            breakdowns.first { $0.breakdownHeading == "Operating systems" }?.entries.map(\.entryValue) == ["iOS 17.4.1"]
        )
    }
}
