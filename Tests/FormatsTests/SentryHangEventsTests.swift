import FaultlineCore
import Formats
import Foundation
import Testing

/// Sentry hang and ANR events, as the Cocoa and Android SDKs send them, become reports that filing marks hangs
/// (`IssueCategory`): by their error type, or by the hang tracker's mechanism that the Sentry boundary keeps as the
/// `mechanism` tag; an event's own tag of that name never stands in for the exception's mechanism.
@Suite struct SentryHangEventsTests {
    func report(_ exception: String, tags: String = "{}") throws -> Report {
        let json = """
            {"event_id":"0c1d2e3f4a5b4c6d8e9fa0b1c2d3e4f5","timestamp":1764000000,"platform":"cocoa","tags":\(tags),
             "exception":{"values":[\(exception)]}}
            """
        let bytes = Array(json.utf8)
        return try SentryEvents.report(
            bytes, range: 0..<bytes.count, fallbackEventID: nil, fallbackTime: SentryFixtures.receivedAt,
            limits: IngestLimits())
    }

    @Test func anAppHangOfCocoaAndAnANROfAndroidAreHangsWhateverKindTheyCameAs() throws {
        let cocoa = try report(
            #"{"type":"App Hanging","value":"App hanging for at least 2000 ms.","mechanism":{"type":"AppHang"}}"#)
        #expect(cocoa.kind == .nonfatal && IssueCategory.of(cocoa) == .hang)
        let android = try report(
            #"{"type":"ApplicationNotResponding","value":"Application Not Responding for at least 5000 ms.","mechanism":{"type":"ANR","handled":false}}"#
        )
        #expect(android.kind == .crash && IssueCategory.of(android) == .hang)
    }

    @Test func withoutATypeTheHangTrackersMechanismMakesAHang() throws {
        let untyped = try report(#"{"value":"main thread blocked","mechanism":{"type":"AppExitInfo","handled":false}}"#)
        #expect(untyped.error?.type == nil && IssueCategory.of(untyped) == .hang)
        // An event's own `mechanism` tag does not replace the exception's mechanism.
        let tagged = try report(
            #"{"value":"boom","mechanism":{"type":"signalhandler","handled":false}}"#, tags: #"{"mechanism":"ANR"}"#)
        #expect(IssueCategory.of(tagged) == .crash)
        // A named type that is not a hang's stays what it is, whatever the mechanism.
        let typed = try report(#"{"type":"TimeoutError","value":"slow","mechanism":{"type":"ANR"}}"#)
        #expect(IssueCategory.of(typed) == .nonFatal)
    }
}
