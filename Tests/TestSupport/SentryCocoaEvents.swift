import FaultlineCore

/// Crash events shaped as the Sentry Cocoa SDK sends them (`SentryCrashReportConverter` in getsentry/sentry-cocoa:
/// one exception with `mechanism.meta.mach_exception` + `meta.signal`, `mechanism.data.relevant_address`, the crashed
/// thread's frames outermost first with `package` and `image_addr`, `debug_meta.images` of type `macho` with the
/// image's UUID as `debug_id`, and `contexts.device`/`os`/`app`).
public enum SentryCocoaEvents {
    /// One loaded image.
    public struct Image: Sendable {
        public var path: String
        /// The UUID as the event spells it (any case, hyphens or not).
        public var debugID: String
        public var address: UInt64
        public var size: UInt64
        public var arch: String
        public init(path: String, debugID: String, address: UInt64, size: UInt64, arch: String = "arm64") {
            self.path = path
            self.debugID = debugID
            self.address = address
            self.size = size
            self.arch = arch
        }
    }

    /// One frame: an address in `image`, and the name the device's own symbolication gave it (system images).
    public struct Frame: Sendable {
        public var image: Image
        public var address: UInt64
        public var function: String?
        public init(_ image: Image, _ address: UInt64, function: String? = nil) {
            self.image = image
            self.address = address
            self.function = function
        }
    }

    /// How the app died.
    public enum Crash: Sendable {
        /// `EXC_BAD_ACCESS` / `KERN_INVALID_ADDRESS` at `address` (SIGSEGV).
        case badAccess(address: UInt64)
        /// An uncaught Objective-C exception (`EXC_CRASH` / SIGABRT underneath).
        case nsException(name: String, reason: String)
        /// A Swift trap: `EXC_BREAKPOINT` (SIGTRAP); `message` is libswiftCore's crash info when it left one.
        case swiftTrap(message: String?)
    }

    /// The device the events come from.
    public struct Device: Sendable {
        public var model = "iPhone15,2"
        public var osVersion = "17.4.1"
        public var osBuild = "21E236"
        public var simulator = false
        public var arch = "arm64e"
        public init() {}
    }

    /// `/private/var/containers/Bundle/Application/<id>/Shop.app/Shop`-style path of an app's executable.
    public static func appPath(_ name: String) -> String {
        "/private/var/containers/Bundle/Application/8C6F3C39-0A1B-4D47-9E55-7A0C41D2B3AA/\(name).app/\(name)"
    }

    /// A frame of Apple's system libraries at a fixed place (shared-cache addresses do not slide per image).
    public static let coreFoundation = Image(
        path: "/System/Library/Frameworks/CoreFoundation.framework/CoreFoundation",
        debugID: "3A2F5C0B-7B53-3C3A-9C9D-4E1B6D0F2A11", address: 0x1_9a1c_0000, size: 0x0042_0000, arch: "arm64e")
    public static let libobjc = Image(
        path: "/usr/lib/libobjc.A.dylib", debugID: "1b8a7c2e-54a1-3f07-8e2f-6a9d0b3c4d51", address: 0x1_9a0a_0000,
        size: 0x0004_0000, arch: "arm64e")
    public static let uiKitCore = Image(
        path: "/System/Library/PrivateFrameworks/UIKitCore.framework/UIKitCore",
        debugID: "9E0C1A2B-3C4D-3E5F-A6B7-C8D9E0F1A2B3", address: 0x1_9c00_0000, size: 0x0150_0000, arch: "arm64e")
    public static let libswiftCore = Image(
        path: "/usr/lib/swift/libswiftCore.dylib", debugID: "5D4C3B2A-1908-3F7E-8D6C-5B4A39281706",
        address: 0x1_a200_0000, size: 0x0060_0000, arch: "arm64e")
    public static let dyld = Image(
        path: "/usr/lib/dyld", debugID: "0F1E2D3C-4B5A-3968-A7B6-C5D4E3F2A1B0", address: 0x1_bd00_0000,
        size: 0x0008_0000,
        arch: "arm64e")

    /// The event JSON. `frames` are innermost first (the crashing frame first); the event lists them outermost first,
    /// as the SDK does.
    public static func event(
        eventID: String, crash: Crash, frames: [Frame], release: String = "com.example.shop@2.3.0+417",
        device: Device = Device(), appVersion: String = "2.3.0", appBuild: String = "417",
        timestamp: String = "2026-11-28T09:30:00Z"
    ) -> String {
        var images: [Image] = []
        for frame in frames where !images.contains(where: { $0.address == frame.image.address }) {
            images.append(frame.image)
        }
        let frameJSON = frames.reversed().map { frame -> String in
            var fields = [
                "\"instruction_addr\":\"\(hex(frame.address))\"", "\"image_addr\":\"\(hex(frame.image.address))\"",
                "\"package\":\(quoted(frame.image.path))",
                "\"in_app\":\(frame.image.path.contains(".app/") ? "true" : "false")",
            ]
            if let function = frame.function { fields.append("\"function\":\(quoted(function))") }
            return "{" + fields.joined(separator: ",") + "}"
        }.joined(separator: ",")
        let imageJSON = images.map { image in
            "{\"type\":\"macho\",\"debug_id\":\(quoted(image.debugID)),\"code_file\":\(quoted(image.path)),"
                + "\"image_addr\":\"\(hex(image.address))\",\"image_size\":\(image.size),\"arch\":\(quoted(image.arch))}"
        }.joined(separator: ",")
        let exception: String
        switch crash {
        case .badAccess(let address):
            exception = """
                {"type":"EXC_BAD_ACCESS","value":"Exception 1, Code 1, Subcode \(address)","thread_id":0,
                 "mechanism":{"type":"mach","handled":false,"synthetic":true,
                  "meta":{"mach_exception":{"name":"EXC_BAD_ACCESS","exception":1,"code":1,"subcode":\(address)},
                          "signal":{"number":11,"code":0,"name":"SIGSEGV"}},
                  "data":{"relevant_address":"\(hex(address))"}}
                """
        case .nsException(let name, let reason):
            exception = """
                {"type":\(quoted(name)),"value":\(quoted(reason)),"thread_id":0,
                 "mechanism":{"type":"nsexception","handled":false,
                  "meta":{"mach_exception":{"name":"EXC_CRASH","exception":10,"code":0,"subcode":0},
                          "signal":{"number":6,"code":0,"name":"SIGABRT"}}}
                """
        case .swiftTrap(let message):
            exception = """
                {"type":"EXC_BREAKPOINT","value":\(quoted(message ?? "Exception 6, Code 1, Subcode 4308205540")),"thread_id":0,
                 "mechanism":{"type":"mach","handled":false,"synthetic":true,
                  "meta":{"mach_exception":{"name":"EXC_BREAKPOINT","exception":6,"code":1,"subcode":4308205540},
                          "signal":{"number":5,"code":0,"name":"SIGTRAP"}}}
                """
        }
        return """
            {"event_id":"\(eventID)","timestamp":"\(timestamp)","level":"fatal","platform":"cocoa",
             "release":\(quoted(release)),"dist":\(quoted(appBuild)),"environment":"production",
             "sdk":{"name":"sentry.cocoa","version":"8.40.1"},
             "user":{"id":"install-\(eventID.prefix(8))"},
             "exception":{"values":[\(exception),
               "stacktrace":{"frames":[\(frameJSON)],"registers":{"pc":"\(hex(frames.first?.address ?? 0))","lr":"0x0"}}}]},
             "threads":{"values":[{"id":0,"crashed":true,"current":true,"name":"main"},
                                  {"id":1,"crashed":false,"current":false,"name":"com.apple.uikit.eventfetch-thread",
                                   "stacktrace":{"frames":[{"instruction_addr":"\(hex(dyld.address + 0x1f2c))",
                                     "image_addr":"\(hex(dyld.address))","package":"/usr/lib/dyld","function":"start"}]}}]},
             "debug_meta":{"images":[\(imageJSON)]},
             "contexts":{
               "device":{"family":"iOS","model":\(quoted(device.model)),"model_id":"D73AP","arch":\(quoted(device.arch)),
                         "simulator":\(device.simulator),"memory_size":6000000000,"free_storage":21000000000,"locale":"de_DE"},
               "os":{"name":"iOS","version":\(quoted(device.osVersion)),"build":\(quoted(device.osBuild)),
                     "kernel_version":"Darwin Kernel Version 23.4.0","rooted":false},
               "app":{"app_identifier":"com.example.shop","app_name":"Shop","app_version":\(quoted(appVersion)),
                      "app_build":\(quoted(appBuild)),"build_type":"app store","in_foreground":true}}}
            """
    }

    /// An envelope holding one event, as the SDK posts it to `/api/<project>/envelope/`.
    public static func envelope(eventID: String, event: String) -> [UInt8] {
        Array("{\"event_id\":\"\(eventID)\",\"sent_at\":\"2026-11-28T09:30:01Z\"}\n".utf8)
            + Array("{\"type\":\"event\",\"length\":\(event.utf8.count)}\n".utf8) + Array(event.utf8) + [0x0a]
    }

    /// `0x` + lower-case hex, as the SDK formats addresses.
    public static func hex(_ value: UInt64) -> String { "0x" + String(value, radix: 16) }

    /// A JSON string literal.
    public static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            default:
                guard scalar.value < 0x20 else {
                    out.unicodeScalars.append(scalar)
                    continue
                }
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            }
        }
        return out + "\""
    }
}
