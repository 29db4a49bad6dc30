import FaultlineSDK
import Testing

@testable import faultline_run

/// The launcher's pure parts: the standard error tail, the `SWIFT_BACKTRACE` merge, crash-file names and
/// wait statuses. (Their effects are covered end to end in LauncherEndToEndTests.)
@Suite struct LauncherPartsTests {
    @Test func theTailKeepsTheLastLinesAcrossChunks() {
        var tail = StderrTail(maxLines: 3, maxBytes: 1000)
        tail.append(Array("one\ntwo\nthr".utf8))
        tail.append(Array("ee\r\nfour\nfi".utf8))
        // The unfinished line counts as a line; CR LF ends a line like LF.
        #expect(tail.text == ["three", "four", "fi"])
    }

    @Test func theTailIsBoundedInBytesAndALongLineKeepsItsEnd() {
        var tail = StderrTail(maxLines: 64, maxBytes: 10)
        tail.append(Array("aaaa\nbbbb\ncccc\n".utf8))
        #expect(tail.text == ["bbbb", "cccc"])
        var long = StderrTail(maxLines: 64, maxBytes: 10)
        long.append(Array("0123456789ABCDEFGHIJ\n".utf8))
        #expect(long.text == ["ABCDEFGHIJ"])
        var invalid = StderrTail()
        invalid.append([0x66, 0xFF, 0x0A])
        #expect(invalid.text == ["f\u{FFFD}"])
    }

    @Test func ourBacktraceKeysWinAndTheUsersOthersStay() {
        let merged = Launcher.swiftBacktrace(
            existing: "enable=no,color=yes,output-to=/elsewhere,timeout=5s", outputTo: "/state/crashes")
        let pairs = merged.split(separator: ",").map(String.init)
        #expect(pairs.contains("color=yes"))
        #expect(pairs.contains("timeout=5s"))
        #expect(pairs.contains("enable=yes"))
        #expect(pairs.contains("output-to=/state/crashes"))
        #expect(!pairs.contains("enable=no"))
        #expect(!merged.contains("/elsewhere"))
        for key in ["interactive=no", "format=json", "symbolicate=off", "threads=all", "images=all"] {
            #expect(pairs.contains(key))
        }
        #expect(Launcher.swiftBacktrace(existing: nil, outputTo: "/c").hasPrefix("enable=yes,"))
    }

    @Test func theChildsEnvironmentNamesTheStateAndTheDSN() {
        let settings = Launcher.Settings(
            dsn: "http://k@h/1", release: "1.0", build: nil, environment: nil, appID: nil, stateDirectory: "/s",
            sendTimeout: 10)
        let env = Launcher.childEnvironment(
            parent: ["PATH": "/bin", "FAULTLINE_ENVIRONMENT": "kept"],
            run: (StateFolder(path: "/s"), "/s/runs/x.state"),
            settings: settings)
        #expect(env.contains("PATH=/bin"))
        #expect(env.contains("FAULTLINE_STATE_DIR=/s"))
        #expect(env.contains("FAULTLINE_RUN_STATE=/s/runs/x.state"))
        #expect(env.contains("FAULTLINE_DSN=http://k@h/1"))
        #expect(env.contains("FAULTLINE_RELEASE=1.0"))
        #expect(env.contains("FAULTLINE_ENVIRONMENT=kept"))
        #expect(env.contains { $0.hasPrefix("SWIFT_BACKTRACE=") && $0.hasSuffix("output-to=/s/crashes") })
    }

    @Test func crashFilesAreFoundByPID() {
        #expect(StateFolder.isCrashFile("SDKFixture-123-0.0.json", pid: 123))
        #expect(StateFolder.isCrashFile("my-app-123-2.json", pid: 123))
        #expect(!StateFolder.isCrashFile("SDKFixture-1234-0.0.json", pid: 123))
        #expect(!StateFolder.isCrashFile("SDKFixture-123-0.0.txt", pid: 123))
        #expect(!StateFolder.isCrashFile("123-0.json", pid: 123))
        #expect(!StateFolder.isCrashFile("app-123-x.json", pid: 123))
    }

    @Test func waitStatusesDecodeAsTheShellDoes() {
        #expect(ChildProcess.decode(42 << 8) == .exited(code: 42))
        #expect(ChildProcess.decode(0) == .exited(code: 0))
        #expect(ChildProcess.decode(9) == .signaled(signal: 9))
        #expect(ChildProcess.decode(0x80 | 11) == .signaled(signal: 11))  // with a core dump
    }
}
