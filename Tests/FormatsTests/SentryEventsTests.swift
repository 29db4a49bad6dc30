import FaultlineCore
import Formats
import Foundation
import Testing

@Suite struct SentryEventsTests {
    typealias F = SentryFixtures
    let limits = IngestLimits()

    func event(
        _ json: String, fallbackEventID: EventID? = nil, fallbackTime: Date = SentryFixtures.receivedAt,
        limits: IngestLimits = IngestLimits()
    ) throws -> Report {
        let bytes = Array(json.utf8)
        return try SentryEvents.report(
            bytes, range: 0..<bytes.count, fallbackEventID: fallbackEventID, fallbackTime: fallbackTime, limits: limits)
    }

    func key(_ report: Report, _ name: String) -> CustomValue? {
        report.customKeys.first { $0.key == name }?.value
    }

    func tag(_ report: Report, _ name: String) -> String? {
        report.tags.first { $0.key == name }?.value
    }

    @Test func pythonHandledException() throws {
        let report = try event(F.pythonHandled)

        #expect(report.eventID == EventID("9ec79c33ec9942ab8353589fcb2e04dc"))
        #expect(report.kind == .nonfatal)
        #expect(report.timestamp == Timestamps.parseISO8601("2026-11-22T05:08:09.152247Z"))
        #expect(report.error == ErrorInfo(type: "ZeroDivisionError", message: "division by zero"))
        #expect(report.release == "1.4.0")
        #expect(report.environment == "production")
        #expect(report.userID == "user-2")
        #expect(report.device == DeviceInfo())  // Python sends no os/device/app contexts

        // One thread, innermost frame first; Python frames have no addresses, so no instruction kinds.
        #expect(report.threads.count == 1)
        let frames = report.threads[0].frames
        #expect(frames.map(\.function) == ["average_price", "<module>"])
        #expect(frames[0] == Frame(module: "shop.cart", function: "average_price", file: "shop/cart.py", line: 12))
        #expect(frames[1].file == "app.py")
        #expect(report.threads[0].crashed == false)

        // Tags: the event's own facts and the sent tags, as strings, in key order; none of them a custom key.
        #expect(
            report.tags.map(\.key) == [
                "level", "mechanism", "payment", "platform", "retries", "server_name", "shop",
            ])
        #expect(tag(report, "level") == "error")
        #expect(tag(report, "mechanism") == "generic")
        #expect(tag(report, "platform") == "python")
        #expect(tag(report, "server_name") == "build-host")
        #expect(tag(report, "shop") == "eu-1")
        #expect(tag(report, "retries") == "3")
        // The SDK apart, with its integrations and packages.
        #expect(
            report.sdk
                == SDKInfo(
                    name: "sentry.python", version: "2.75.0",
                    integrations: [
                        "argv", "atexit", "dedupe", "excepthook", "logging", "modules", "stdlib", "threading",
                    ],
                    packages: [SDKInfo.Package(name: "pypi:sentry-sdk", version: "2.75.0")]))
        // Every context but device/os/app/culture its own block in name order, values as text, nested as JSON, nulls
        // dropped.
        #expect(
            report.contexts == [
                ReportContext(name: "order", values: [("id", "42"), ("items", #"["sku-1"]"#)]),
                ReportContext(
                    name: "runtime",
                    values: [
                        ("build", "3.11.7 (main, Dec  8 2023, 14:22:46) [GCC 12.2.0]"), ("name", "CPython"),
                        ("version", "3.11.7"),
                    ]),
                ReportContext(
                    name: "trace",
                    values: [("span_id", "a1b2c3d4e5f6a7b8"), ("trace_id", "1b8e1d4f3a2c4e5f8a9b0c1d2e3f4a5b")]),
            ])
        // Custom keys: only the scalar extras, prefixed; nested extras (sys.argv) skipped.
        #expect(report.customKeys.map(\.key) == ["extra.gift", "extra.note", "extra.order_total"])
        #expect(key(report, "extra.order_total") == .number(99.5))
        #expect(key(report, "extra.note") == .string("vip"))
        #expect(key(report, "extra.gift") == .bool(true))
        #expect(key(report, "extra.sys.argv") == nil)
        #expect(report.customKeys.map(\.key) == report.customKeys.map(\.key).sorted())
        #expect(report.trimmed.isEmpty)

        // Breadcrumbs: ISO and float timestamps, data values as strings, nested as JSON text, nulls dropped.
        #expect(report.breadcrumbs.count == 2)
        let cart = report.breadcrumbs[0]
        #expect(cart.category == "cart" && cart.level == "info" && cart.message == "cart loaded")
        #expect(cart.timestamp == Timestamps.parseISO8601("2026-11-22T05:08:08Z"))
        #expect(cart.data == ["items": "3", "nested": #"{"a":[1,2]}"#])
        let http = report.breadcrumbs[1]
        #expect(http.timestamp == Date(timeIntervalSince1970: 1_795_324_088.5))
        #expect(http.data["status_code"] == "500")
        #expect(http.data["method"] == "POST")
    }

    @Test func unhandledExceptionIsACrash() throws {
        let report = try event(F.pythonUnhandled)
        #expect(report.kind == .crash)
        #expect(report.error?.type == "PaymentDeclined")
        #expect(report.threads.count == 1)
        #expect(report.threads[0].crashed)
        #expect(report.threads[0].frames.map(\.function) == ["charge", "main"])
        #expect(tag(report, "mechanism") == "excepthook")
        #expect(tag(report, "exception_module") == "shop.payments")
        #expect(report.customKeys.isEmpty)
        // Sub-second ISO timestamps with one fractional digit.
        #expect(report.timestamp == Date(timeIntervalSince1970: 1_795_324_090.5))
    }

    @Test func levelFatalIsACrashEvenWithoutMechanism() throws {
        let report = try event(
            #"{"level":"fatal","exception":{"values":[{"type":"Abort","value":"boom"}]},"timestamp":0}"#)
        #expect(report.kind == .crash)
        #expect(report.threads.isEmpty)  // no stack, nothing to show
        #expect(report.error == ErrorInfo(type: "Abort", message: "boom"))
    }

    @Test func chainedExceptionsTakeTheLastValueAsTheError() throws {
        let report = try event(F.pythonChain)
        #expect(report.kind == .nonfatal)
        #expect(report.error == ErrorInfo(type: "LookupFailed", message: "no price for sku-9"))
        // The stack is the captured exception's, not the cause's.
        #expect(report.threads.count == 1)
        #expect(report.threads[0].frames.map(\.function) == ["price_of", "main"])
        #expect(tag(report, "mechanism") == "generic")
    }

    @Test func captureMessage() throws {
        let report = try event(F.pythonMessage)
        #expect(report.kind == .nonfatal)
        #expect(report.error == ErrorInfo(message: "nightly export failed"))
        #expect(report.threads.isEmpty)
        #expect(report.environment == "staging")
        #expect(tag(report, "level") == "warning")
    }

    @Test func sentryCLILogentryWithHeaderIDAndUnixTimestamp() throws {
        let header = try #require(EventID("7077e450-fa6f-4594-850b-fed9428d1d98"))
        let report = try event(F.cliEvent, fallbackEventID: header)
        // The payload has no event_id: the envelope header's, normalised to 32 hex.
        #expect(report.eventID.rawValue == "7077e450fa6f4594850bfed9428d1d98")
        #expect(report.timestamp == Date(timeIntervalSince1970: 1_795_324_473.581085))
        #expect(report.error == ErrorInfo(message: "nightly job backup failed"))
        #expect(report.userID == "cron")
        #expect(report.device.os == "Linux" && report.device.osVersion == "6.1.0" && report.device.arch == "x86_64")
        #expect(report.sdk == SDKInfo(name: "sentry-cli", version: "3.8.2"))
        // A context whose type is not its name says both; the device and OS contexts are not blocks.
        #expect(
            report.contexts == [
                ReportContext(name: "rust", type: "runtime", values: [("name", "rustc"), ("version", "1.90.0")])
            ])
        #expect(report.release == "2026.11")
    }

    @Test func messageFormatting() throws {
        let cases: [(String, String)] = [
            (#"{"logentry":{"message":"%s of %d done, 100%% sure","params":["3",7]}}"#, "3 of 7 done, 100% sure"),
            (#"{"logentry":{"message":"left %s and %s","params":["one"]}}"#, "left one and %s"),
            (#"{"logentry":{"message":"raw %s","formatted":"already formatted"}}"#, "already formatted"),
            (#"{"logentry":{"message":"named %(x)s","params":{"x":"1"}}}"#, "named %(x)s"),
            (#"{"message":{"message":"legacy %s","params":[{"k":1}]}}"#, #"legacy {"k":1}"#),
            (#"{"logentry":{"message":"new"},"message":"old"}"#, "new"),
            (#"{"message":"old","logentry":{"message":"new"}}"#, "new"),
        ]
        for (json, expected) in cases {
            #expect(try event(json).error?.message == expected, "\(json)")
        }
    }

    @Test func nativeCrashWithDebugImages() throws {
        let report = try event(F.nativeCrash())
        #expect(report.kind == .crash)
        #expect(report.error == ErrorInfo(type: "SIGSEGV", code: "11", message: "Segfault"))
        // `crashy@1.0.0` + dist 42: release 1.0.0, as its sessions name it, with build 42 beneath it.
        #expect(
            report.app
                == AppInfo(
                    id: "com.example.crashy", version: "1.0.0", build: "42", displayVersion: "1.0.0",
                    displayBuild: "42"))
        #expect(report.release == "1.0.0")
        #expect(report.build == "42")
        #expect(report.customKeys.first { $0.key == "dist" } == nil)
        #expect(
            report.device
                == DeviceInfo(
                    model: "ThinkPad X1", os: "Linux", osVersion: "6.1.0", arch: "x86_64", memoryBytes: 17_179_869_184,
                    freeDiskBytes: 120_000_000_000, locale: "de-DE"))

        // Frames reversed (crashing PC first), the crashing frame a PC and its callers return addresses.
        let thread = try #require(report.threads.first)
        #expect(report.threads.count == 1)
        #expect(thread.crashed)
        #expect(
            thread.frames.map(\.address) == [0x5581_a2b3_c4d0, 0x5581_a2b3_c5a2, 0x5581_a2b3_c6f0, 0x7f3a_1c02_a1ca])
        #expect(
            thread.frames.map(\.instructionKind) == [.programCounter, .returnAddress, .returnAddress, .returnAddress])
        #expect(
            thread.registers == [
                Register(name: "rip", value: 0x5581_a2b3_c4d0), Register(name: "rsp", value: 0x7ffd_5a1e_2f30),
                Register(name: "rbp", value: 0x7ffd_5a1e_2f50),
            ])

        // Modules: build-ids from code_id, hex and numeric base addresses; a debug_id-only image kept without a
        // build-id; the source map (no image_addr) is not a module.
        #expect(
            report.modules == [
                LoadedModule(
                    name: "crashy", path: "/opt/crashy/bin/crashy", buildID: BuildID(F.crashyBuildID),
                    baseAddress: 0x5581_a2b3_0000, size: 20480, format: .elf),
                LoadedModule(
                    name: "libc.so.6", path: "/usr/lib/x86_64-linux-gnu/libc.so.6", buildID: BuildID(F.libcBuildID),
                    baseAddress: 0x7f3a_1c00_0000, size: 1_994_752, format: .elf),
                LoadedModule(
                    name: "libstripped.so", path: "/usr/lib/libstripped.so", baseAddress: 0x7f3a_1d00_0000, size: 4096,
                    format: .elf),
            ])
        #expect(report.sdk?.label == "sentry.native/0.7.20")
        #expect(tag(report, "mechanism") == "signalhandler")
        #expect(report.contexts.isEmpty)  // device, os, app and culture only
    }

    @Test(arguments: [("none", InstructionKind.programCounter), ("all", .returnAddress)])
    func instructionAddressAdjustment(_ adjustment: String, _ kind: InstructionKind) throws {
        let frames = try event(F.nativeCrash(adjustment: adjustment)).threads[0].frames
        #expect(frames.count == 4)
        #expect(frames.allSatisfy { $0.instructionKind == kind })
    }

    @Test func threadsValuesGetTheExceptionStackOnTheirThread() throws {
        // Given two threads, the exception naming the second, which has no stack of its own
        let json = #"""
            {"level":"fatal","timestamp":1,"exception":{"values":[{"type":"SIGABRT","thread_id":2,"mechanism":{"handled":false},"stacktrace":{"frames":[{"instruction_addr":"0x20"},{"instruction_addr":"0x10"}]}}]},"threads":{"values":[{"id":1,"name":"main","crashed":false,"current":false,"stacktrace":{"frames":[{"instruction_addr":"0x100"}]}},{"id":2,"name":"worker","crashed":false,"current":true}]}}
            """#
        let report = try event(json)
        // Then the named thread comes first, crashed, with the exception's frames innermost first
        #expect(report.threads.map(\.name) == ["worker", "main"])
        #expect(report.threads[0].crashed)
        #expect(report.threads[0].frames.map(\.address) == [0x10, 0x20])
        #expect(report.threads[1].crashed == false)
        #expect(report.threads[1].frames.map(\.address) == [0x100])

        // A message event with attach_stacktrace: threads as they are
        let message = #"""
            {"message":"slow","threads":{"values":[{"id":"7","current":true,"stacktrace":{"frames":[{"function":"outer"},{"function":"inner"}]}}]}}
            """#
        let plain = try event(message)
        #expect(plain.threads.count == 1)
        #expect(plain.threads[0].frames.map(\.function) == ["inner", "outer"])
        #expect(plain.threads[0].crashed == false)
    }

    @Test func timestampAndEventIDFallbacks() throws {
        // Payload id wins over the envelope's; the envelope's is used when the payload has none.
        let other = try #require(EventID("00000000000000000000000000000001"))
        #expect(
            try event(F.pythonMessage, fallbackEventID: other).eventID == EventID("6e1f2a3b4c5d4e6f8a9b0c1d2e3f4a5b"))
        // No timestamp: the fallback time.
        let noTime = try event(#"{"event_id":"6E1F2A3B-4C5D-4E6F-8A9B-0C1D2E3F4A5B","message":"x"}"#)
        #expect(noTime.timestamp == F.receivedAt)
        #expect(noTime.eventID.rawValue == "6e1f2a3b4c5d4e6f8a9b0c1d2e3f4a5b")
        // No id anywhere: derived from the bytes, the same for the same bytes, different for others.
        let a = try event(#"{"message":"one"}"#)
        let b = try event(#"{"message":"one"}"#)
        let c = try event(#"{"message":"two"}"#)
        #expect(a.eventID == b.eventID)
        #expect(a.eventID != c.eventID)
        // Breadcrumbs without a timestamp take the event's.
        let crumb = try event(#"{"timestamp":5,"breadcrumbs":[{"message":"m"}]}"#).breadcrumbs
        #expect(crumb.map(\.timestamp) == [Date(timeIntervalSince1970: 5)])
    }

    @Test func releaseFallsBackToTheAppContext() throws {
        let json = #"{"dist":"9","contexts":{"app":{"app_identifier":"com.x","app_version":"2.1","app_build":"300"}}}"#
        #expect(
            try event(json).app
                == AppInfo(id: "com.x", version: "2.1", build: "300", displayVersion: "2.1", displayBuild: "300"))
        #expect(try event(#"{"release":"r@1","dist":""}"#).release == "1")
        #expect(try event(#"{"release":"r@1","dist":""}"#).app.id == "r")
        #expect(try event(#"{"user":{"email":"e@x"}}"#).userID == "e@x")
        #expect(try event(#"{"user":{"id":42,"email":"e@x"}}"#).userID == "42")
    }

    @Test func tagsAsPairsAndFingerprints() throws {
        let report = try event(#"{"tags":[["a","1"],["b",2],["a","3"],["c",null]],"fingerprint":["{{ default }}"]}"#)
        #expect(report.tags.map(\.key) == ["a", "b"])
        #expect(tag(report, "a") == "3")  // the last repeated key wins
        #expect(report.fingerprint == nil)
        #expect(try event(#"{"fingerprint":["checkout",42]}"#).fingerprint == ["checkout", "42"])
    }

    @Test func sixtyFiveTagsAreTrimmedAndCounted() throws {
        // Given 65 tags plus the event's own `level` and `platform`
        let tags = (0..<65).map { #""tag\#(String(format: "%02d", $0))":"v""# }.joined(separator: ",")
        let report = try event(#"{"level":"error","platform":"python","tags":{\#(tags)},"extra":{"e":"x"}}"#)
        // Then 64 tags are kept, the event's own first, and the 3 tags past the limit are counted; the extra is a
        // custom key, under its own limit
        #expect(report.tags.count == 64)
        #expect(tag(report, "level") == "error")
        #expect(tag(report, "platform") == "python")
        #expect(tag(report, "tag61") == "v")
        #expect(tag(report, "tag62") == nil)
        #expect(report.trimmed.tagsDropped == 3)
        #expect(report.customKeys.map(\.key) == ["extra.e"])
        #expect(report.trimmed.customKeysDropped == 0)
    }

    @Test func contextsAndTheSDKAreBoundedLikeCustomKeys() throws {
        // Given 40 contexts, one with 70 values and one with a 2,000-byte value, and an SDK with 70 integrations
        let many = (0..<70).map { #""k\#(String(format: "%02d", $0))":\#($0)"# }.joined(separator: ",")
        let long = String(repeating: "é", count: 1000)
        var contexts = (0..<40).map { #""c\#(String(format: "%02d", $0))":{"v":1}"# }
        contexts[0] = #""c00":{\#(many)}"#
        contexts[1] = #""c01":{"long":"\#(long)","n":null,"type":"c01"}"#
        let integrations = (0..<70).map { #""i\#($0)""# }.joined(separator: ",")
        let report = try event(
            #"{"contexts":{\#(contexts.joined(separator: ","))},"sdk":{"name":"s","integrations":[\#(integrations),7,{}],"#
                + #""packages":[{"name":"p","version":1},{"version":"x"},"bad"]}}"#)

        // Then 32 blocks are kept in name order and 8 counted; a block keeps 64 values, each cut to 1 KB
        #expect(report.contexts.count == 32)
        #expect(report.contexts.last?.name == "c31")
        #expect(report.trimmed.contextsDropped == 8)
        #expect(report.contexts[0].values.count == 64)
        #expect(report.contexts[0].values.last?.key == "k63")
        // A null is dropped, and a type that is the block's own name says nothing more
        #expect(report.contexts[1].values.map(\.key) == ["long"])
        #expect(report.contexts[1].type == nil)
        #expect(report.contexts[1].values[0].value.utf8.count == 1024)
        #expect(report.trimmed.valuesTruncated == 1)
        // The SDK keeps 64 integrations (non-strings skipped) and the packages that have a name
        #expect(report.sdk?.integrations.count == 64)
        #expect(report.sdk?.packages == [SDKInfo.Package(name: "p", version: "1")])
        #expect(report.trimmed.contextKeysDropped == 6 + 6)
    }

    @Test func contextsThatAreNotObjectsAreSkippedAndARepeatedNameKeepsTheLast() throws {
        let report = try event(#"{"contexts":{"x":5,"y":null,"z":[1],"w":{"a":1},"w":{"b":{"c":[true,null]}}}}"#)
        #expect(report.contexts == [ReportContext(name: "w", values: [("b", #"{"c":[true,null]}"#)])])
        #expect(try event(#"{"sdk":{"version":"1"}}"#).sdk == nil)  // an SDK without a name is not one
    }

    @Test func theReadAPIShowsTagsSDKAndContextsApart() throws {
        let report = try event(F.pythonHandled)
        let bytes = try NativeReports.encode(
            StoredReport(project: ProjectID(1), report: report, receivedAt: F.receivedAt))
        let json = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        #expect((json["tags"] as? [String: String])?["shop"] == "eu-1")
        #expect((json["custom_keys"] as? [String: Any])?["shop"] == nil)
        #expect((json["custom_keys"] as? [String: Any])?["sdk"] == nil)
        let sdk = json["sdk"] as? [String: Any]
        #expect(sdk?["name"] as? String == "sentry.python")
        #expect(sdk?["version"] as? String == "2.75.0")
        #expect((sdk?["integrations"] as? [String])?.contains("excepthook") == true)
        #expect((sdk?["packages"] as? [[String: String]]) == [["name": "pypi:sentry-sdk", "version": "2.75.0"]])
        let contexts = json["contexts"] as? [String: [String: String]]
        #expect(contexts?["order"] == ["id": "42", "items": #"["sku-1"]"#])
        #expect(contexts?["runtime"]?["name"] == "CPython")
        #expect((json["trimmed"] as? [String: Int])?["tags_dropped"] == nil)  // only when something was dropped
    }

    @Test func limitsApply() throws {
        var small = IngestLimits()
        small.maxFramesPerThread = 2
        small.maxReportBytes = 10_000
        let report = try event(F.nativeCrash(), limits: small)
        #expect(report.threads[0].frames.count == 2)
        #expect(report.trimmed.framesDropped == 2)
        small.maxReportBytes = 100
        let error = #expect(throws: FormatError.self) { try event(F.nativeCrash(), limits: small) }
        #expect(error?.code == .tooLarge)
    }

    @Test(arguments: [
        (
            #"{"exception":{"values":[{"type":"E","stacktrace":{"frames":[{"function":"a"},{"lineno":"12"}]}}]}}"#,
            "exception.values[0].stacktrace.frames[1].lineno"
        ),
        (#"{"exception":[{"type":7}]}"#, "exception[0].type"),
        (#"{"event_id":"not-an-id"}"#, "event_id"),
        (#"{"timestamp":"yesterday"}"#, "timestamp"),
        (#"{"timestamp":1e300}"#, "timestamp"),
        (#"{"level":3}"#, "level"),
        (#"{"tags":"a=b"}"#, "tags"),
        (#"{"tags":[["a"]]}"#, "tags[0]"),
        (#"{"user":{"id":{}}}"#, "user.id"),
        (#"{"breadcrumbs":{"values":[{"timestamp":"x"}]}}"#, "breadcrumbs.values[0].timestamp"),
        (#"{"contexts":{"device":{"memory_size":"16GB"}}}"#, "contexts.device.memory_size"),
        (#"{"contexts":{"os":[]}}"#, "contexts.os"),
        (
            #"{"debug_meta":{"images":[{"type":"elf","image_addr":"0x1","code_id":"xyz"}]}}"#,
            "debug_meta.images[0].code_id"
        ),
        (#"{"debug_meta":{"images":[{"image_addr":"0xZZ"}]}}"#, "debug_meta.images[0].image_addr"),
        (#"{"exception":{"values":[{"mechanism":{"handled":"no"}}]}}"#, "exception.values[0].mechanism.handled"),
        (
            #"{"exception":{"values":[{"stacktrace":{"registers":{"rip":true}}}]}}"#,
            "exception.values[0].stacktrace.registers.rip"
        ),
        (#"{"fingerprint":"abc"}"#, "fingerprint"),
    ])
    func wrongTypesNameTheField(_ json: String, _ field: String) {
        let error = #expect(throws: FormatError.self) { try event(json) }
        #expect(error?.field == field, "\(json)")
    }

    @Test func hostileInputsThrowFormatErrors() {
        let deep = String(repeating: "[", count: 600) + String(repeating: "]", count: 600)
        let inputs = [
            "", "null", "[]", "\"event\"", "{", #"{"message":"unterminated}"#, #"{"a":1,}"#, "{}{}",
            #"{"extra":{"x":\#(deep)}}"#, #"{"message":"\u0000 control"}"# + "\u{01}",
            #"{"exception":{"values":[{"stacktrace":{"frames":[{"instruction_addr":"0x1ffffffffffffffff"}]}}]}}"#,
            #"{"debug_meta":{"images":[{"image_addr":-1}]}}"#, #"{"timestamp":"2026-02-30T00:00:00Z"}"#,
        ]
        for input in inputs {
            #expect(throws: FormatError.self, "\(input.prefix(60))") { try event(input) }
        }
        // A range outside the body is an error, not a trap.
        #expect(throws: FormatError.self) {
            try SentryEvents.report(
                Array("{}".utf8), range: 1..<5, fallbackEventID: nil, fallbackTime: F.receivedAt, limits: limits)
        }
        // Extras are free-form: an out-of-range number is dropped, not an error.
        let extras = try? event(#"{"extra":{"big":1e400,"ok":1,"deep":{"x":[[{}]]}}}"#)
        #expect(extras?.customKeys.map(\.key) == ["extra.ok"])
        // Unknown fields of any shape are fine.
        #expect(throws: Never.self) { try event(#"{"future":{"x":[1,{"y":null}]},"spans":[],"request":{"url":"/"}}"#) }
    }

    @Test func debugIDFromBuildID() throws {
        // The example of client-protocols.md §1.5, confirmed by `sentry-cli debug-files check`.
        let buildID = try #require(BuildID("aba11aeff7e7e9e2e1bc84464f53a7e183a8930a"))
        #expect(SentryDebugID.from(buildID: buildID) == "ef1aa1ab-e7f7-e2e9-e1bc-84464f53a7e1")
        // Short build-ids are padded with zero bytes.
        #expect(
            SentryDebugID.from(buildID: try #require(BuildID("01020304"))) == "04030201-0000-0000-0000-000000000000")
    }

    @Test func rereadFromAStoredEnvelopeGivesTheSameReport() throws {
        // Given an envelope whose event relies on the header for its id and time (sentry-cli style)
        let header = #"{"event_id":"7077e450-fa6f-4594-850b-fed9428d1d98","sent_at":"2026-11-22T05:10:00Z"}"#
        let body = F.envelope(header, [F.item("event", #"{"message":"no id, no time"}"#)])
        let contents = try SentryEnvelopeReader.read(
            body, receivedAt: F.receivedAt, limits: limits, maxAttachmentBytes: 1 << 20, sessionSeed: "s")
        let prepared = try #require(contents.event)
        #expect(prepared.report.timestamp == Timestamps.parseISO8601("2026-11-22T05:10:00Z"))
        // When it is stored and read again
        let payload = StoredPayload(
            bytes: try BodyDecoding.deflateForStorage(body), encoding: .deflate, inflatedSize: body.count,
            format: .sentryEvent)
        let reread = try NativeReports.reread(payload, range: prepared.range, limits: limits)
        // Then it is the same report
        #expect(reread == prepared.report)
    }

    /// Processing reads a stored event without its breadcrumbs: the rest of the report is the same, and so is what
    /// processing makes from it.
    @Test func anEventReadForProcessingIsTheEventWithoutItsBreadcrumbs() throws {
        let body = Array(F.pythonHandled.utf8)
        let payload = StoredPayload(
            bytes: try BodyDecoding.deflateForStorage(body), encoding: .deflate, inflatedSize: body.count,
            format: .sentryEvent)
        let inflated = try NativeReports.inflate(payload)
        let all = try NativeReports.reread(
            inflated: inflated, format: .sentryEvent, range: 0..<body.count, limits: limits)
        let processing = try NativeReports.reread(
            inflated: inflated, format: .sentryEvent, range: 0..<body.count, limits: limits, purpose: .processing)
        #expect(all == (try event(F.pythonHandled)))
        #expect(all.breadcrumbs.count == 2)
        var expected = all
        expected.breadcrumbs = []
        #expect(processing == expected)
        #expect(GroupingInput.make(processing, symbols: nil) == GroupingInput.make(all, symbols: nil))
        #expect(
            SearchDocument.make(processing, symbols: nil, grouping: nil)
                == SearchDocument.make(all, symbols: nil, grouping: nil))
    }
}
