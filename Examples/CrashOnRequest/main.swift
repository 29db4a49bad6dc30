// faultline-example: a small program that crashes on request, to see Faultline work end to end (docs/sdk.md).
//
//   export FAULTLINE_DSN="http://KEY@127.0.0.1:8080/1"      # your project's DSN (Project settings → DSN)
//   export FAULTLINE_RELEASE=1.0.0
//   faultline-example error      # records a handled error (a non-fatal) with this thread's stack
//   faultline-example crash      # dies of an index out of range; sent at the next start (or at once
//   faultline-example fatal      #   under faultline-run: `faultline-run -- faultline-example crash`)
//   faultline-example serve      # runs until stopped, logging a breadcrumb a second (try kill -9 on it)
//   faultline-example            # just starts: sends what earlier runs left, then exits
//
// Without faultline-run, the Swift runtime must be told where to write crash files before the program starts;
// Faultline.start prints the line to use when it is missing, e.g.
//   SWIFT_BACKTRACE=enable=yes,interactive=no,format=json,symbolicate=off,threads=all,images=all,output-to=$HOME/.local/state/faultline/faultline-example/crashes
import FaultlineSDK

#if canImport(Glibc)
import Glibc
#endif

/// An error of your own: its type (`faultline_example.CheckoutError`), code and description show on the report.
enum CheckoutError: Error, CustomStringConvertible {
    case paymentDeclined(reason: String)

    var description: String {
        switch self {
        case .paymentDeclined(let reason): "payment declined: \(reason)"
        }
    }
}

/// A function deep enough to have a stack worth looking at.
@inline(never) func charge(cart: [Int], card: String) throws -> Int {
    Faultline.log("charging \(cart.count) items to card \(card.suffix(4))")
    guard card.hasPrefix("4") else { throw CheckoutError.paymentDeclined(reason: "unknown card network") }
    return cart.reduce(0, +)
}

@inline(never) func lastItem(of cart: [Int]) -> Int {
    cart[cart.count]  // off by one: Fatal error: Index out of range
}

// 1. Start as early as possible: DSN, release and environment come from FAULTLINE_* when not given here.
Faultline.start(
    options: {
        var options = FaultlineOptions()
        options.appID = "dev.faultline.example"
        return options
    }())

if Faultline.didCrashOnPreviousExecution() {
    print("the last run crashed; its report is on its way")
}

// 2. Context every later report carries: who, and what led up to it.
Faultline.setUserID("example-user")
Faultline.setCustomValue("1.0-beta", forKey: "feature_flags")
let cart = [3, 5, 8]
Faultline.setCustomValue(cart.count, forKey: "cart_items")
Faultline.log("cart loaded")

switch CommandLine.arguments.dropFirst().first ?? "" {
case "error":
    do {
        _ = try charge(cart: cart, card: "5555 0000 1111 2222")
    } catch {
        // 3. A handled error: a non-fatal report with this thread's stack and your own details.
        Faultline.record(error: error, userInfo: ["order": "A-17"])
        print("recorded: \(error)")
    }
case "crash":
    Faultline.log("about to read past the end of the cart")
    print(lastItem(of: cart))
case "fatal":
    fatalError("the example was asked to give up")
case "serve":
    var tick = 0
    while true {
        tick += 1
        Faultline.log("tick \(tick)")
        Faultline.setCustomValue(tick, forKey: "ticks")
        sleep(1)
    }
case "":
    break
default:
    print("usage: faultline-example [error|crash|fatal|serve]")
    exit(2)
}

// 4. Optional: wait for delivery before a short-lived program ends (start already waits up to
//    FaultlineOptions.flushOnExit seconds at exit).
let sent = await Faultline.flush(timeout: 5)
print(sent ? "everything sent" : "some reports are still queued; they go at the next start")
