import FaultlineCore
import Formats
import Testing

@Suite struct NativeSessionsTests {
    @Test func decodesABatchOfUpdates() throws {
        let body =
            #"{"sessions":[{"session_id":"s1","user_id":"u1","release":"1.0","environment":"prod","started":"2026-11-22T05:00:00Z","status":"ok","seq":1},{"session_id":"s1","install_id":"i1","app":{"version":"1.0","build":"7"},"started":1795300000,"status":"crashed","errors":2,"duration":12.5,"seq":2}]}"#
        let updates = try NativeSessions.decode(Array(body.utf8), limits: IngestLimits())
        #expect(updates.count == 2)
        #expect(updates[0].distinctID == "u1")
        #expect(updates[0].status == .ok)
        #expect(updates[1].release == "1.0")  // the build is not part of the release
        #expect(updates[1].distinctID == "i1")
        #expect(updates[1].errors == 2)
        #expect(updates[1].duration == 12.5)
        #expect(updates[1].seq == 2)
    }

    @Test(arguments: [
        (#"{"release":"1","started":1,"status":"ok"}"#, "session_id"),
        (#"{"session_id":"s","started":1,"status":"ok"}"#, "release"),
        (#"{"session_id":"s","release":"1","status":"ok"}"#, "started"),
        (#"{"session_id":"s","release":"1","started":1,"status":"errored"}"#, "status"),
        (#"{"session_id":"s","release":"1","started":1,"status":"ok","errors":-1}"#, "errors"),
        (
            #"{"sessions":[{"session_id":"s","release":"1","started":1,"status":"ok"},{"session_id":"s"}]}"#,
            "sessions[1].release"
        ),
    ])
    func invalidUpdatesAreNamed(_ body: String, _ field: String) {
        let error = #expect(throws: FormatError.self) {
            try NativeSessions.decode(Array(body.utf8), limits: IngestLimits())
        }
        #expect(error?.field == field)
    }
}
