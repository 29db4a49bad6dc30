import AsyncHTTPClient
import Foundation
import TestSupport
import Testing

/// Crash events shaped as the Sentry Cocoa SDK sends them, through the real server: Mach-O images keyed by their
/// UUID, titles from the Mach exception, Apple's frames never blamed, the device context on the API and the pages.
@Suite(.serialized, .tags(.endToEnd), .provisioned) struct SentryCocoaEndToEndTests {
    typealias C = SentryCocoaEvents
    let http = HTTP(client: HTTPClient.shared)
    static let appUUID = "4C4C4473-5555-3144-A157-542D2ECDA82A"
    static let appBuildID = "4c4c447355553144a157542d2ecda82a"

    /// The app's image at `base` (a different ASLR slide per launch).
    static func app(_ base: UInt64) -> C.Image {
        C.Image(path: C.appPath("Shop"), debugID: appUUID, address: base, size: 0x8_0000)
    }

    /// Posts one Cocoa-shaped event in an envelope, as the SDK does.
    static func send(
        _ http: HTTP, _ server: ServerProcess, _ project: (ingest: String, upload: String, id: Int), _ event: String,
        id: String
    ) async throws {
        let sent = try await http.send(
            .POST, server.baseURL + "/api/\(project.id)/envelope/",
            headers: [("X-Sentry-Auth", "Sentry sentry_key=\(project.ingest), sentry_client=sentry.cocoa/8.40.1")],
            body: C.envelope(eventID: id, event: event))
        #expect(sent.status == 200, "\(String(decoding: sent.body, as: UTF8.self))")
    }

    func issueOf(_ server: ServerProcess, _ id: String, _ read: [(String, String)]) async throws -> Int {
        let url = server.baseURL + "/api/v1/reports/\(id)"
        var issue: Int?
        _ = try await eventually {
            issue = try await http.send(.GET, url, headers: read).json["issue_id"] as? Int
            return issue != nil
        }
        return try #require(issue, "report \(id) was never grouped")
    }

    @Test func cocoaCrashesAreTitledAndBlamedAsCrashlyticsWouldAndShowTheirDevice() async throws {
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("shop", in: folder)
        let server = try await ServerProcess(folder: folder, environment: InsightsEndToEndTests.fastServices)
        defer { server.cleanUp() }
        let read = [("Authorization", "Bearer \(project.upload)")]

        // Two launches of the same build, at different slides, on two devices: the same bad access.
        var ipad = C.Device()
        ipad.model = "iPad13,18"
        ipad.osVersion = "17.3"
        ipad.osBuild = "21D50"
        let launches: [(id: String, base: UInt64, device: C.Device)] = [
            ("a1d2e3f4a5b64c7d8e9fa0b1c2d3e4f5", 0x1_0234_8000, C.Device()),
            ("b1d2e3f4a5b64c7d8e9fa0b1c2d3e4f5", 0x1_04c0_0000, ipad),
        ]
        for launch in launches {
            let app = Self.app(launch.base)
            let event = C.event(
                eventID: launch.id, crash: .badAccess(address: 0x10),
                frames: [
                    C.Frame(app, launch.base + 0x21c4), C.Frame(app, launch.base + 0x1f00),
                    C.Frame(C.uiKitCore, 0x1_9c12_3456, function: "-[UIApplication sendAction:to:from:forEvent:]"),
                    C.Frame(C.dyld, 0x1_bd00_1f2c, function: "start"),
                ],
                device: launch.device)
            try await Self.send(http, server, project, event, id: launch.id)
        }
        // An uncaught NSException: thrown inside CoreFoundation, blamed on the app's method.
        let nsID = "c1d2e3f4a5b64c7d8e9fa0b1c2d3e4f5"
        let app = Self.app(0x1_0234_8000)
        try await Self.send(
            http, server, project,
            C.event(
                eventID: nsID,
                crash: .nsException(
                    name: "NSInvalidArgumentException",
                    reason: "-[__NSCFNumber length]: unrecognized selector sent to instance 0x8"),
                frames: [
                    C.Frame(C.coreFoundation, 0x1_9a1c_4f2c, function: "__exceptionPreprocess"),
                    C.Frame(C.libobjc, 0x1_9a0a_1234, function: "objc_exception_throw"),
                    C.Frame(
                        C.coreFoundation, 0x1_9a1d_0000, function: "-[NSObject(NSObject) doesNotRecognizeSelector:]"),
                    C.Frame(app, 0x1_0234_b000, function: "-[CartViewController checkout:]"),
                    C.Frame(C.uiKitCore, 0x1_9c12_3456, function: "-[UIApplication sendAction:to:from:forEvent:]"),
                ]),
            id: nsID)

        // A Swift trap whose runtime left its message in libswiftCore's crash info, in the simulator.
        let trapID = "d1d2e3f4a5b64c7d8e9fa0b1c2d3e4f5"
        var simulator = C.Device()
        simulator.model = "iPhone16,1"
        simulator.simulator = true
        simulator.arch = "arm64"
        try await Self.send(
            http, server, project,
            C.event(
                eventID: trapID,
                crash: .swiftTrap(
                    message:
                        "Shop/CartModel.swift:42: Fatal error: Unexpectedly found nil while unwrapping an Optional value"
                ),
                frames: [C.Frame(app, 0x1_0234_c004), C.Frame(app, 0x1_0234_9f00)], device: simulator),
            id: trapID)

        // The API: the device context and the app's image by its UUID.
        let badAccess = try await issueOf(server, launches[0].id, read)
        #expect(
            try await issueOf(server, launches[1].id, read) == badAccess, "one crash site at two slides is one issue")
        let report = try await http.send(.GET, server.baseURL + "/api/v1/reports/\(launches[0].id)", headers: read).json
        let device = report["device"] as? [String: Any] ?? [:]
        #expect(device["model"] as? String == "iPhone15,2")
        #expect(device["os"] as? String == "iOS")
        #expect(device["os_version"] as? String == "17.4.1")
        #expect(device["os_build"] as? String == "21E236")
        #expect(device["simulator"] as? Bool == false)
        #expect(device["arch"] as? String == "arm64e")
        let modules = report["modules"] as? [[String: Any]] ?? []
        #expect(
            modules.contains { $0["build_id"] as? String == Self.appBuildID && $0["name"] as? String == "Shop" },
            "\(modules)")

        let issue = try await http.send(.GET, server.baseURL + "/api/v1/issues/\(badAccess)", headers: read).json
        let summary = issue["issue"] as? [String: Any] ?? [:]
        #expect(summary["title"] as? String == "EXC_BAD_ACCESS (KERN_INVALID_ADDRESS) at 0x0000000000000010")
        let breakdowns = issue["breakdowns"] as? [String: Any] ?? [:]
        let devices = (breakdowns["device"] as? [[String: Any]] ?? []).compactMap { $0["value"] as? String }
        #expect(Set(devices) == ["iPhone15,2", "iPad13,18"], "\(breakdowns)")
        let systems = (breakdowns["os"] as? [[String: Any]] ?? []).compactMap { $0["value"] as? String }
        #expect(Set(systems) == ["iOS 17.4.1", "iOS 17.3"], "\(breakdowns)")

        let nsIssue = try await issueOf(server, nsID, read)
        #expect(nsIssue != badAccess)
        let ns =
            try await http.send(.GET, server.baseURL + "/api/v1/issues/\(nsIssue)", headers: read).json["issue"]
            as? [String: Any] ?? [:]
        #expect(
            ns["title"] as? String
                == "NSInvalidArgumentException: -[__NSCFNumber length]: unrecognized selector sent to instance 0x8")
        #expect(ns["culprit"] as? String == "-[CartViewController checkout:]")

        let trapIssue = try await issueOf(server, trapID, read)
        let trap =
            try await http.send(.GET, server.baseURL + "/api/v1/issues/\(trapIssue)", headers: read).json["issue"]
            as? [String: Any] ?? [:]
        #expect(trap["title"] as? String == "Fatal error: Unexpectedly found nil while unwrapping an Optional value")
        let trapReport = try await http.send(.GET, server.baseURL + "/api/v1/reports/\(trapID)", headers: read).json
        #expect((trapReport["device"] as? [String: Any])?["simulator"] as? Bool == true)
        #expect((trapReport["error"] as? [String: Any])?["type"] as? String == "EXC_BREAKPOINT")

        // The pages: devices by name, the OS build, and the UUID that lacks a dSYM (not Apple's libraries).
        let page = folder + "/site/shop/issues/\(badAccess).html"
        #expect(
            try await eventually {
                (try? String(contentsOfFile: page, encoding: .utf8))?.contains("iPad (10th generation) (iPad13,18)")
                    == true
            })
        let html = try String(contentsOfFile: page, encoding: .utf8)
        #expect(html.contains("EXC_BAD_ACCESS (KERN_INVALID_ADDRESS) at 0x0000000000000010"))
        #expect(html.contains("iPhone 14 Pro (iPhone15,2)"))
        #expect(html.contains("iOS 17.") && html.contains("(21"), "the OS build is shown")
        #expect(html.contains("2 frames lack a dSYM for UUID \(Self.appUUID) (Shop, arm64)."), "\(html)")
        #expect(!html.contains("a dSYM for UUID 9E0C1A2B"), "UIKitCore is Apple's: no dSYM to ask for")
        let missing = folder + "/site/shop/missing-debug-files.html"
        #expect(
            try await eventually {
                (try? String(contentsOfFile: missing, encoding: .utf8))?.contains(Self.appUUID) == true
            })
        let missingHTML = try String(contentsOfFile: missing, encoding: .utf8)
        #expect(missingHTML.contains("<h3>Release 2.3.0</h3>"))
        #expect(missingHTML.contains("dSYM for <code class=\"build-id\">\(Self.appUUID)</code> (Shop): no dSYM"))
    }
}
