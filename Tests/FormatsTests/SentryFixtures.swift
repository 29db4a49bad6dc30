import Foundation

/// Sentry payloads modelled on what sentry-sdk 2.75.0 and sentry-cli 3.8.2 sent on the wire
/// (shared/reference/client-protocols.md §1), trimmed to what the tests look at.
enum SentryFixtures {
    /// An envelope: the header line, then each item as `{"type":…,"length":N,…}\n<payload>\n`.
    static func envelope(_ header: String, _ items: [(header: String, payload: [UInt8])]) -> [UInt8] {
        var out = Array((header + "\n").utf8)
        for item in items {
            out += Array(item.header.utf8) + [0x0a] + item.payload + [0x0a]
        }
        return out
    }

    /// An item with its length filled in; `extra` is more header JSON (`,"filename":"a.log"`).
    static func item(_ type: String, _ payload: String, extra: String = "") -> (header: String, payload: [UInt8]) {
        item(type, Array(payload.utf8), extra: extra)
    }

    static func item(_ type: String, _ payload: [UInt8], extra: String = "") -> (header: String, payload: [UInt8]) {
        (#"{"type":"\#(type)","length":\#(payload.count)\#(extra)}"#, payload)
    }

    static let receivedAt = Date(timeIntervalSince1970: 1_795_330_000)

    /// sentry-sdk's envelope header for an event.
    static let pythonHeader = #"""
        {"event_id":"9ec79c33ec9942ab8353589fcb2e04dc","sent_at":"2026-11-22T05:08:09.158496Z","trace":{"trace_id":"1b8e1d4f3a2c4e5f8a9b0c1d2e3f4a5b","environment":"production","release":"shop@1.3.0","public_key":"0123456789abcdef0123456789abcdef"}}
        """#

    /// `capture_exception()` in sentry-sdk 2.75.0: a handled ZeroDivisionError with scope data.
    static let pythonHandled = #"""
        {"level":"error","exception":{"values":[{"mechanism":{"type":"generic","handled":true},"module":null,"type":"ZeroDivisionError","value":"division by zero","stacktrace":{"frames":[{"filename":"app.py","abs_path":"/srv/shop/app.py","function":"<module>","module":"__main__","lineno":30,"pre_context":["","if __name__ == \"__main__\":"],"context_line":"    main()","post_context":[],"vars":{"__name__":"'__main__'"},"in_app":true},{"filename":"shop/cart.py","abs_path":"/srv/shop/shop/cart.py","function":"average_price","module":"shop.cart","lineno":12,"colno":null,"context_line":"    return total / count","vars":{"total":"0","count":"0"},"in_app":true}]}}]},"event_id":"9ec79c33ec9942ab8353589fcb2e04dc","timestamp":"2026-11-22T05:08:09.152247Z","contexts":{"trace":{"trace_id":"1b8e1d4f3a2c4e5f8a9b0c1d2e3f4a5b","span_id":"a1b2c3d4e5f6a7b8","parent_span_id":null},"runtime":{"name":"CPython","version":"3.11.7","build":"3.11.7 (main, Dec  8 2023, 14:22:46) [GCC 12.2.0]"},"order":{"id":42,"items":["sku-1"]}},"user":{"id":"user-2","email":"two@example.com"},"transaction_info":{},"tags":{"shop":"eu-1","payment":"card","retries":3},"extra":{"sys.argv":["app.py","--checkout"],"order_total":99.5,"note":"vip","gift":true},"breadcrumbs":{"values":[{"type":"default","category":"cart","message":"cart loaded","level":"info","timestamp":"2026-11-22T05:08:08.000000Z","data":{"items":3,"coupon":null,"nested":{"a":[1,2]}}},{"type":"http","category":"httplib","data":{"url":"https://pay.example.com/charge","method":"POST","status_code":500},"timestamp":1795324088.5}]},"modules":{"sentry-sdk":"2.75.0","urllib3":"2.2.1"},"release":"shop@1.4.0","environment":"production","server_name":"build-host","sdk":{"name":"sentry.python","version":"2.75.0","packages":[{"name":"pypi:sentry-sdk","version":"2.75.0"}],"integrations":["argv","atexit","dedupe","excepthook","logging","modules","stdlib","threading"]},"platform":"python"}
        """#

    /// An uncaught exception (sys.excepthook): `handled: false`, level still `error`.
    static let pythonUnhandled = #"""
        {"level":"error","exception":{"values":[{"mechanism":{"type":"excepthook","handled":false},"module":"shop.payments","type":"PaymentDeclined","value":"card declined","stacktrace":{"frames":[{"filename":"app.py","function":"main","module":"__main__","lineno":20},{"filename":"shop/payments.py","function":"charge","module":"shop.payments","lineno":77}]}}]},"event_id":"0c3f9d3a6f1a4a53b2d1e9f0a8b7c6d5","timestamp":"2026-11-22T05:08:10.5Z","user":{"id":"user-3"},"release":"shop@1.4.0","environment":"production","sdk":{"name":"sentry.python","version":"2.75.0"},"platform":"python"}
        """#

    /// `raise LookupFailed("no price") from KeyError("sku")`: cause first, captured exception last.
    static let pythonChain = #"""
        {"level":"error","exception":{"values":[{"mechanism":{"type":"chained","handled":true,"source":"__cause__","exception_id":1,"parent_id":0},"module":null,"type":"KeyError","value":"'sku-9'","stacktrace":{"frames":[{"filename":"shop/prices.py","function":"lookup","module":"shop.prices","lineno":8}]}},{"mechanism":{"type":"generic","handled":true,"exception_id":0},"module":"shop.prices","type":"LookupFailed","value":"no price for sku-9","stacktrace":{"frames":[{"filename":"app.py","function":"main","module":"__main__","lineno":40},{"filename":"shop/prices.py","function":"price_of","module":"shop.prices","lineno":15}]}}]},"event_id":"5d2e8f7a1b3c4d5e6f708192a3b4c5d6","timestamp":"2026-11-22T05:08:11.000001Z","release":"shop@1.4.0","platform":"python"}
        """#

    /// `capture_message("nightly export failed", level="warning")`.
    static let pythonMessage = #"""
        {"message":"nightly export failed","level":"warning","event_id":"6e1f2a3b4c5d4e6f8a9b0c1d2e3f4a5b","timestamp":"2026-11-22T05:08:12.000000Z","release":"shop@1.4.0","environment":"staging","platform":"python"}
        """#

    /// `sentry-cli send-event -m "nightly job %s failed" -a backup` (with `--no-environ`): hyphenated id in
    /// the envelope header, none in the payload, a numeric timestamp and a `logentry`.
    static let cliHeader = #"{"event_id":"7077e450-fa6f-4594-850b-fed9428d1d98"}"#
    static let cliEvent = #"""
        {"level":"error","timestamp":1795324473.581085,"logentry":{"message":"nightly job %s failed","params":["backup"]},"platform":"native","release":"ops@2026.11","user":{"ip_address":"{{auto}}","username":"cron"},"contexts":{"os":{"type":"os","name":"Linux","version":"6.1.0","kernel_version":"6.1.0-28-amd64"},"device":{"type":"device","arch":"x86_64"},"rust":{"type":"runtime","name":"rustc","version":"1.90.0"}},"sdk":{"name":"sentry-cli","version":"3.8.2"}}
        """#

    static let crashyBuildID = "aba11aeff7e7e9e2e1bc84464f53a7e183a8930a"
    static let libcBuildID = "4bd5ac3a1c0cb7e3e2c7f3e7b8a9c0d1e2f3a4b5"

    /// A Linux native crash in sentry-native's shape (§1.5): address-only frames, outermost first,
    /// registers, `debug_meta.images`.
    static func nativeCrash(adjustment: String? = nil) -> String {
        let adjust = adjustment.map { #","instruction_addr_adjustment":"\#($0)""# } ?? ""
        return #"""
            {"event_id":"b3d7b6a8c9e04f1a9d2c3b4a5f6e7d8c","timestamp":"2026-11-22T05:09:00Z","platform":"native","level":"fatal","release":"crashy@1.0.0","dist":"42","environment":"production","exception":{"values":[{"type":"SIGSEGV","value":"Segfault","mechanism":{"type":"signalhandler","synthetic":true,"handled":false,"meta":{"signal":{"name":"SIGSEGV","number":11}}},"stacktrace":{"frames":[{"instruction_addr":"0x7f3a1c02a1ca"},{"instruction_addr":"0x5581a2b3c6f0"},{"instruction_addr":"0x5581a2b3c5a2"},{"instruction_addr":"0x5581a2b3c4d0"}],"registers":{"rip":"0x5581a2b3c4d0","rsp":"0x7ffd5a1e2f30","rbp":"0x7ffd5a1e2f50"}\#(adjust)}}]},"debug_meta":{"images":[{"type":"elf","code_file":"/opt/crashy/bin/crashy","image_addr":"0x5581a2b30000","image_size":20480,"code_id":"\#(crashyBuildID)","debug_id":"ef1aa1ab-e7f7-e2e9-e1bc-84464f53a7e1"},{"type":"elf","code_file":"/usr/lib/x86_64-linux-gnu/libc.so.6","image_addr":139887554592768,"image_size":1994752,"code_id":"\#(libcBuildID)"},{"type":"elf","code_file":"/usr/lib/libstripped.so","image_addr":"0x7f3a1d000000","image_size":4096,"debug_id":"01020304-0506-0708-090a-0b0c0d0e0f10"},{"type":"sourcemap","code_file":"app.min.js","debug_id":"11111111-2222-3333-4444-555555555555"}]},"contexts":{"device":{"type":"device","arch":"x86_64","model":"ThinkPad X1","memory_size":17179869184,"free_storage":1.2e11},"os":{"type":"os","name":"Linux","version":"6.1.0"},"app":{"app_identifier":"com.example.crashy","app_version":"1.0.0","app_build":"42"},"culture":{"locale":"de-DE"}},"sdk":{"name":"sentry.native","version":"0.7.20"}}
            """#
    }

    /// Python's application-mode session, sent once at the end (§1.6).
    static let pythonSession = #"""
        {"sid":"4faa8588-5e83-4798-b470-e562a7baaa05","init":true,"started":"2026-11-22T05:08:09.159101Z","timestamp":"2026-11-22T05:08:09.159946Z","status":"crashed","errors":1,"did":"user-2","attrs":{"release":"shop@1.4.0","environment":"production"}}
        """#

    /// Request-mode aggregates (§1.6).
    static let pythonAggregates = #"""
        {"attrs":{"environment":"production","release":"app@2.0.0"},"aggregates":[{"started":"2026-11-22T05:14:00.000000Z","errored":2,"exited":3},{"started":1795325700,"crashed":1,"did":"user-7"}]}
        """#

    static let clientReport = #"""
        {"timestamp":1795324484.66,"discarded_events":[{"reason":"ratelimit_backoff","category":"error","quantity":2},{"reason":"send_error","category":"attachment","quantity":1024},{"reason":"network_error","category":"session","quantity":0}],"filtered_events":[{"reason":"before_send","category":"error","quantity":1}]}
        """#
}
