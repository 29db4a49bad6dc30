// The Swift program the SDK's end-to-end tests run (Tests/FaultlineHTTPTests/SDK): it links FaultlineSDK and
// performs the steps given as arguments, in order, so each test scripts the run it needs:
//
//   start                     Faultline.start() (DSN, release, state folder from FAULTLINE_* variables)
//   start:RELEASE             the same with an explicit release
//   log:TEXT                  Faultline.log(TEXT)
//   logs:N                    N breadcrumbs "crumb 0" … "crumb N-1"
//   key:NAME=VALUE            a string custom key;  ikey:NAME=INT  an integer one
//   keys:N                    N keys k00…, with values v00…
//   user:ID                   Faultline.setUserID(ID)
//   nonfatal:N                records N handled errors (FixtureError.checkoutFailed(code: i))
//   collection:on|off         Faultline.setCollectionEnabled
//   unsent                    prints "unsent=true|false"
//   send-unsent, delete-unsent
//   did-crash                 prints "did-crash=true|false"
//   flush:SECONDS             waits for the queue to drain; prints "flushed=true|false"
//   stderr:TEXT               writes TEXT and a newline to standard error
//   sleep:SECONDS             sleeps (the tests kill it meanwhile)
//   crash:index|fatal|nil|divide|segv|abort   dies in FixtureCrashes.<site>
//   exit:CODE                 exits with CODE
//   nonfatal-inside:N         records N handled errors from inside recordCheckout(step:), so the report's stack
//                             names that function (the `nonfatal:` step records from runSteps, after checkout returned)
import FaultlineSDK

#if canImport(Glibc)
import Glibc
#endif

enum FixtureError: Error {
    case checkoutFailed(code: Int)
}

enum FixtureCrashes {
    @inline(never) static func indexOutOfRange(_ count: Int) -> Int {
        let items = Array(0..<count)
        return items[count + 2]
    }

    @inline(never) static func fatal(_ reason: String) -> Never {
        fatalError("fixture gave up: \(reason)")
    }

    @inline(never) static func unwrapNil(_ value: Int?) -> Int {
        value!
    }

    @inline(never) static func divide(_ a: Int, by b: Int) -> Int {
        a / b
    }

    @inline(never) static func segfault() {
        let pointer = UnsafeMutablePointer<Int>(bitPattern: 16)!
        pointer.pointee = 42
    }
}

@inline(never) func checkout(step: Int) throws {
    throw FixtureError.checkoutFailed(code: step)
}

@inline(never) func recordCheckout(step: Int) {
    do { try checkout(step: step) } catch { Faultline.record(error: error, userInfo: ["attempt": step]) }
}

func value(_ step: String, after prefix: String) -> String { String(step.dropFirst(prefix.count)) }

@MainActor func runSteps() async {
    for step in CommandLine.arguments.dropFirst() {
        if step == "start" {
            Faultline.start()
        } else if step.hasPrefix("start:") {
            Faultline.start(release: value(step, after: "start:"))
        } else if step.hasPrefix("logs:") {
            for i in 0..<(Int(value(step, after: "logs:")) ?? 0) { Faultline.log("crumb \(i)") }
        } else if step.hasPrefix("log:") {
            Faultline.log(value(step, after: "log:"))
        } else if step.hasPrefix("keys:") {
            for i in 0..<(Int(value(step, after: "keys:")) ?? 0) {
                let n = i < 10 ? "0\(i)" : "\(i)"
                Faultline.setCustomValue("v\(n)", forKey: "k\(n)")
            }
        } else if step.hasPrefix("key:") || step.hasPrefix("ikey:") {
            let pair = value(step, after: step.hasPrefix("key:") ? "key:" : "ikey:")
            let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { continue }
            if step.hasPrefix("ikey:") {
                Faultline.setCustomValue(Int(parts[1]) ?? 0, forKey: parts[0])
            } else {
                Faultline.setCustomValue(parts[1], forKey: parts[0])
            }
        } else if step.hasPrefix("user:") {
            Faultline.setUserID(value(step, after: "user:"))
        } else if step.hasPrefix("nonfatal-inside:") {
            for i in 0..<(Int(value(step, after: "nonfatal-inside:")) ?? 0) { recordCheckout(step: i) }
        } else if step.hasPrefix("nonfatal:") {
            for i in 0..<(Int(value(step, after: "nonfatal:")) ?? 0) {
                do { try checkout(step: i) } catch { Faultline.record(error: error, userInfo: ["attempt": i]) }
            }
        } else if step == "collection:on" || step == "collection:off" {
            Faultline.setCollectionEnabled(step == "collection:on")
        } else if step == "unsent" {
            print("unsent=\(Faultline.checkForUnsentReports())")
        } else if step == "send-unsent" {
            Faultline.sendUnsentReports()
        } else if step == "delete-unsent" {
            Faultline.deleteUnsentReports()
        } else if step == "did-crash" {
            print("did-crash=\(Faultline.didCrashOnPreviousExecution())")
        } else if step.hasPrefix("flush:") {
            let ok = await Faultline.flush(timeout: Double(value(step, after: "flush:")) ?? 5)
            print("flushed=\(ok)")
        } else if step.hasPrefix("stderr:") {
            let line = value(step, after: "stderr:") + "\n"
            _ = line.utf8CString.withUnsafeBufferPointer { write(2, $0.baseAddress, $0.count - 1) }
        } else if step.hasPrefix("sleep:") {
            try? await Task.sleep(for: .seconds(Double(value(step, after: "sleep:")) ?? 1))
        } else if step.hasPrefix("exit:") {
            exit(Int32(value(step, after: "exit:")) ?? 0)
        } else if step.hasPrefix("crash:") {
            switch value(step, after: "crash:") {
            case "index": print(FixtureCrashes.indexOutOfRange(CommandLine.arguments.count))
            case "fatal": FixtureCrashes.fatal("as asked")
            case "nil": print(FixtureCrashes.unwrapNil(CommandLine.arguments.count > 100 ? 1 : nil))
            case "divide":
                print(
                    FixtureCrashes.divide(
                        CommandLine.arguments.count, by: CommandLine.arguments.count - CommandLine.arguments.count))
            case "segv": FixtureCrashes.segfault()
            case "abort": abort()
            default: print("unknown crash site")
            }
        } else {
            print("unknown step \(step)")
            exit(2)
        }
    }
}

await runSteps()
