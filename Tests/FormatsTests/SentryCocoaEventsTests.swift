import FaultlineCore
import Formats
import TestSupport
import Testing

/// Sentry Cocoa crash events: Mach-O images keyed by their UUID, Mach exceptions, Apple device context.
@Suite struct SentryCocoaEventsTests {
    typealias C = SentryCocoaEvents
    static let app = C.Image(
        path: C.appPath("Shop"), debugID: "4C4C4473-5555-3144-A157-542D2ECDA82A", address: 0x1_0234_8000, size: 0x8_0000
    )
    static let appID = BuildID("4c4c4473555531 44a157542d2ecda82a".replacingOccurrences(of: " ", with: ""))!

    func report(_ json: String) throws -> Report {
        try SentryEvents.report(Array(json.utf8), limits: IngestLimits())
    }

    @Test("EXC_BAD_ACCESS in a Swift app: Mach-O images by UUID, frames innermost first, the Mach exception and device")
    func badAccess() throws {
        let frames = [
            C.Frame(Self.app, 0x1_0234_a1c4), C.Frame(Self.app, 0x1_0234_9f00),
            C.Frame(C.uiKitCore, 0x1_9c12_3456, function: "-[UIApplication sendAction:to:from:forEvent:]"),
            C.Frame(C.dyld, 0x1_bd00_1f2c, function: "start"),
        ]
        let r = try report(
            C.event(eventID: "0c1d2e3f4a5b4c6d8e9fa0b1c2d3e4f5", crash: .badAccess(address: 0x10), frames: frames))

        #expect(r.kind == .crash)
        // The UUID as sent (upper case, hyphens) is the build-id: 32 lower-case digits in order, never byte-swapped.
        let shop = try #require(r.modules.first { $0.name == "Shop" })
        #expect(shop.buildID == Self.appID)
        #expect(shop.format == .macho)
        #expect(shop.arch == "arm64")
        #expect(shop.path == C.appPath("Shop"))
        #expect(shop.baseAddress == 0x1_0234_8000)
        #expect(shop.size == 0x8_0000)
        #expect(r.modules.first { $0.name == "libobjc.A.dylib" } == nil)  // only images the frames use are sent

        // Sentry lists frames outermost first; the report holds them innermost first, the crashing frame a PC.
        let crashed = try #require(r.threads.first)
        #expect(crashed.crashed)
        #expect(crashed.frames.map(\.address) == frames.map(\.address))
        #expect(crashed.frames[0].instructionKind == .programCounter)
        #expect(crashed.frames[1].instructionKind == .returnAddress)

        let error = try #require(r.error)
        #expect(error.type == "EXC_BAD_ACCESS")
        #expect(error.code == "11")
        #expect(
            error.mach == MachException(exception: 1, name: "EXC_BAD_ACCESS", code: 1, subcode: 0x10, signal: "SIGSEGV")
        )
        #expect(r.faultAddress == 0x10)
        #expect(r.crashMessage == nil)

        #expect(r.device.model == "iPhone15,2")
        #expect(r.device.os == "iOS")
        #expect(r.device.osVersion == "17.4.1")
        #expect(r.device.osBuild == "21E236")
        #expect(r.device.simulator == false)
        #expect(r.device.arch == "arm64e")
        // `package@version+build` is the release 2.3.0 with build 417, as its sessions name it.
        #expect(r.release == "2.3.0")
        #expect(r.build == "417")
        #expect(r.app.displayVersion == "2.3.0")
        #expect(r.app.displayBuild == "417")
    }

    @Test("a debug_id in lower case, without hyphens, or with an age gives the same build-id; a bad one is refused")
    func debugIDSpellings() throws {
        for spelling in [
            "4c4c4473-5555-3144-a157-542d2ecda82a",
            "4C4C44735555314 4A157542D2ECDA82A".replacingOccurrences(of: " ", with: ""),
            "4c4c4473-5555-3144-a157-542d2ecda82a-0", "{4C4C4473-5555-3144-A157-542D2ECDA82A}",
        ] {
            var app = Self.app
            app.debugID = spelling
            let r = try report(
                C.event(
                    eventID: "1c1d2e3f4a5b4c6d8e9fa0b1c2d3e4f5", crash: .badAccess(address: 8),
                    frames: [C.Frame(app, 0x1_0234_a000)]))
            #expect(r.modules.first?.buildID == Self.appID, "\(spelling)")
        }
        var bad = Self.app
        bad.debugID = "4c4c4473-5555-3144-a157"
        let error = #expect(throws: FormatError.self) {
            try report(
                C.event(
                    eventID: "2c1d2e3f4a5b4c6d8e9fa0b1c2d3e4f5", crash: .badAccess(address: 8),
                    frames: [C.Frame(bad, 0x1_0234_a000)]))
        }
        #expect(error?.field?.hasSuffix("debug_id") == true)
    }

    @Test("the legacy apple image type: uuid, name and cpu_type/cpu_subtype")
    func legacyAppleImage() throws {
        let json = """
            {"event_id":"3c1d2e3f4a5b4c6d8e9fa0b1c2d3e4f5","level":"fatal","platform":"cocoa",
             "exception":{"values":[{"type":"EXC_BAD_ACCESS","mechanism":{"type":"mach","handled":false},
               "stacktrace":{"frames":[{"instruction_addr":"0x100004010"}]}}]},
             "debug_meta":{"images":[
               {"type":"apple","uuid":"84A04D24-0E60-3810-A8C0-90A65E2DF61A","name":"/Applications/Shop.app/Contents/MacOS/Shop",
                "image_addr":"0x100000000","image_vmaddr":"0x100000000","image_size":65536,"cpu_type":16777228,"cpu_subtype":2},
               {"type":"macho","debug_id":"00000000-0000-0000-0000-000000000000","code_file":"/usr/lib/libz.1.dylib",
                "image_addr":"0x180000000","image_vmaddr":0}]}}
            """
        let r = try report(json)
        let shop = try #require(r.modules.first)
        #expect(shop.name == "Shop")
        #expect(shop.path == "/Applications/Shop.app/Contents/MacOS/Shop")
        #expect(shop.buildID == BuildID("84a04d240e603810a8c090a65e2df61a"))
        #expect(shop.format == .macho)
        #expect(shop.arch == "arm64e")
        #expect(r.device.arch == "arm64e")  // no contexts.device.arch: the first Mach-O image's
        #expect(r.modules[1].format == .macho)
        #expect(r.modules[1].buildID == nil)  // an all-zero UUID names no file
    }

    @Test("an uncaught NSException keeps its name and reason; EXC_CRASH underneath is kept too")
    func nsException() throws {
        let frames = [
            C.Frame(C.coreFoundation, 0x1_9a1c_4f2c, function: "__exceptionPreprocess"),
            C.Frame(C.libobjc, 0x1_9a0a_1234, function: "objc_exception_throw"),
            C.Frame(C.coreFoundation, 0x1_9a1d_0000, function: "-[NSObject(NSObject) doesNotRecognizeSelector:]"),
            C.Frame(Self.app, 0x1_0234_b000, function: "-[CartViewController checkout:]"),
        ]
        let r = try report(
            C.event(
                eventID: "4c1d2e3f4a5b4c6d8e9fa0b1c2d3e4f5",
                crash: .nsException(
                    name: "NSInvalidArgumentException",
                    reason: "-[__NSCFNumber length]: unrecognized selector sent to instance 0x8000000000000000"),
                frames: frames))
        #expect(r.error?.type == "NSInvalidArgumentException")
        #expect(r.error?.message?.hasPrefix("-[__NSCFNumber length]") == true)
        #expect(r.error?.mach?.exceptionName == "EXC_CRASH")
        #expect(r.error?.mach?.signal == "SIGABRT")
        #expect(r.faultAddress == nil)
        #expect(r.threads[0].frames.map(\.function) == frames.map(\.function))
    }

    @Test("a Swift trap: libswiftCore's crash info in the value becomes the crash message")
    func swiftTrap() throws {
        let message = "Shop/CartModel.swift:42: Fatal error: Unexpectedly found nil while unwrapping an Optional value"
        let r = try report(
            C.event(
                eventID: "5c1d2e3f4a5b4c6d8e9fa0b1c2d3e4f5", crash: .swiftTrap(message: message),
                frames: [C.Frame(Self.app, 0x1_0234_c004)]))
        #expect(r.crashMessage == message)
        #expect(r.error?.mach?.exceptionName == "EXC_BREAKPOINT")
        // A breakpoint's subcode is not an address.
        #expect(r.faultAddress == nil)

        let bare = try report(
            C.event(
                eventID: "6c1d2e3f4a5b4c6d8e9fa0b1c2d3e4f5", crash: .swiftTrap(message: nil),
                frames: [C.Frame(Self.app, 0x1_0234_c004)]))
        #expect(bare.crashMessage == nil)
        #expect(bare.error?.message == "Exception 6, Code 1, Subcode 4308205540")
    }

    @Test("mach codes: negative numbers keep their bit pattern, hex strings are read, a wrong type is refused")
    func machCodes() throws {
        func mach(_ meta: String) throws -> MachException? {
            try report(
                """
                {"event_id":"7c1d2e3f4a5b4c6d8e9fa0b1c2d3e4f5","level":"fatal",
                 "exception":{"values":[{"type":"EXC_GUARD","mechanism":{"type":"mach","meta":{"mach_exception":\(meta)}}}]}}
                """
            ).error?.mach
        }
        #expect(
            try mach(#"{"exception":12,"code":-9223372036854775807,"subcode":"0xffffffffffffffff"}"#)
                == MachException(exception: 12, code: Int64.min + 1, subcode: UInt64.max))
        #expect(try mach(#"{"exception":1,"code":18446744073709551615}"#)?.code == -1)
        #expect(throws: FormatError.self) { try mach(#"{"exception":true}"#) }
        #expect(throws: FormatError.self) { try mach(#"{"code":1e400}"#) }
    }
}
