import Foundation
import Testing

@testable import FaultlineCore

/// Apple crashes: Mach exception titles, which images are the app's own, UUID spellings, device names.
@Suite struct AppleCrashRulesTests {
    static let appPath = "/private/var/containers/Bundle/Application/8C6F3C39-0A1B-4D47-9E55-7A0C41D2B3AA/Shop.app/Shop"
    static let appID = BuildID("4c4c4473555531 44a157542d2ecda82a".replacingOccurrences(of: " ", with: ""))!

    /// A Cocoa-shaped crash: the app's image and CoreFoundation, libobjc, libswiftCore; frames innermost first.
    func crash(
        frames: [Frame], error: ErrorInfo, faultAddress: UInt64? = nil, crashMessage: String? = nil,
        arch: String = "arm64e"
    )
        -> Report
    {
        Report(
            eventID: EventID("0c1d2e3f4a5b4c6d8e9fa0b1c2d3e4f5")!, kind: .crash,
            timestamp: Date(timeIntervalSince1970: 1_790_000_000),
            device: DeviceInfo(model: "iPhone15,2", os: "iOS", osVersion: "17.4.1", arch: arch), error: error,
            threads: [ThreadInfo(name: "main", crashed: true, frames: frames)],
            modules: [
                LoadedModule(
                    name: "Shop", path: Self.appPath, buildID: Self.appID, baseAddress: 0x1_0000_0000, size: 0x10_0000,
                    format: .macho, arch: "arm64"),
                LoadedModule(
                    name: "CoreFoundation", path: "/System/Library/Frameworks/CoreFoundation.framework/CoreFoundation",
                    buildID: BuildID("3a2f5c0b7b533c3a9c9d4e1b6d0f2a11"), baseAddress: 0x1_9a1c_0000, size: 0x42_0000,
                    format: .macho),
                LoadedModule(
                    name: "libobjc.A.dylib", path: "/usr/lib/libobjc.A.dylib", baseAddress: 0x1_9a0a_0000,
                    size: 0x4_0000, format: .macho),
                LoadedModule(
                    name: "libswiftCore.dylib", path: "/usr/lib/swift/libswiftCore.dylib", baseAddress: 0x1_a200_0000,
                    size: 0x60_0000, format: .macho),
            ],
            faultAddress: faultAddress, crashMessage: crashMessage)
    }

    static let badAccess = MachException(
        exception: 1, name: "EXC_BAD_ACCESS", code: 1, subcode: 0x10, signal: "SIGSEGV")

    // MARK: - Titles

    @Test("Mach exceptions are titled as Apple and Crashlytics write them")
    func machTitles() {
        #expect(Self.badAccess.title() == "EXC_BAD_ACCESS (KERN_INVALID_ADDRESS) at 0x0000000000000010")
        #expect(
            MachException(exception: 1, code: 2, subcode: 0x1_0450_0000).title()
                == "EXC_BAD_ACCESS (KERN_PROTECTION_FAILURE) at 0x0000000104500000")
        // An unknown code: the signal says what it became, and the subcode is not taken for an address.
        #expect(
            MachException(exception: 1, code: 77, subcode: 5, signal: "SIGBUS").title() == "EXC_BAD_ACCESS (SIGBUS)")
        #expect(
            MachException(exception: 1, code: 13, subcode: 0).title(arch: "x86_64")
                == "EXC_BAD_ACCESS (EXC_I386_GPFLT) at 0x0000000000000000")
        #expect(MachException(exception: 10, code: 0, subcode: 0, signal: "SIGABRT").title() == "EXC_CRASH (SIGABRT)")
        #expect(
            MachException(name: "EXC_BREAKPOINT", code: 1, subcode: 0x1_0234_c004).title() == "EXC_BREAKPOINT (SIGTRAP)"
        )
        #expect(MachException(exception: 2).title() == "EXC_BAD_INSTRUCTION (SIGILL)")
        #expect(MachException(exception: 11).title() == "EXC_RESOURCE")
        #expect(MachException(exception: 99).title() == nil)
        #expect(MachException(name: "not a mach name").title() == nil)
        #expect(
            MachException(exception: 1, code: 1, subcode: 8).title(faultAddress: 0x20)
                == "EXC_BAD_ACCESS (KERN_INVALID_ADDRESS) at 0x0000000000000020")
    }

    @Test("SDK placeholders for bare exceptions are recognised, real messages are not")
    func placeholders() {
        #expect(MachException.isPlaceholderValue("Exception 1, Code 1, Subcode 8"))
        #expect(MachException.isPlaceholderValue("Exception 6, Code 1, Subcode 4308205540"))
        #expect(MachException.isPlaceholderValue("Signal 11, Code 0"))
        #expect(MachException.isPlaceholderValue("Exception 12, Code -9223372036854775807, Subcode 0"))
        #expect(!MachException.isPlaceholderValue("Exception thrown, Code red, Subcode x"))
        #expect(!MachException.isPlaceholderValue("objc_msgSend() selector name: release"))
        #expect(!MachException.isPlaceholderValue(""))
    }

    @Test("a bad access is titled by its Mach exception and fault address, never by the SDK's placeholder text")
    func badAccessTitle() {
        let report = crash(
            frames: [Frame(address: 0x1_0000_4010)],
            error: ErrorInfo(
                type: "EXC_BAD_ACCESS", code: "11", message: "Exception 1, Code 1, Subcode 16", mach: Self.badAccess),
            faultAddress: 0x10)
        let symbols = SymbolicatedReport(
            state: .complete,
            threads: [
                [
                    SymbolicatedFrameSlot(
                        frames: [
                            ResolvedFrame(
                                function: "Shop.CartModel.total() -> Swift.Int", file: "Shop/CartModel.swift", line: 30)
                        ], buildID: Self.appID.rawValue, status: "dwarf")
                ]
            ],
            missing: [])
        let result = Grouping.group(report, symbols: symbols)
        #expect(result.title == "EXC_BAD_ACCESS (KERN_INVALID_ADDRESS) at 0x0000000000000010")
        #expect(result.titleRank == Grouping.TitleRank.signal)
        #expect(result.components == ["CartModel.total()"])
        // A signal-only report from the same SDK: the signal, not "SIGSEGV: Signal 11, Code 0".
        let signal = crash(
            frames: [Frame(address: 0x1_0000_4010)], error: ErrorInfo(type: "SIGSEGV", message: "Signal 11, Code 0"))
        #expect(Grouping.group(signal, symbols: nil).title == "SIGSEGV")
    }

    @Test("a Swift runtime failure named by an inline frame beats EXC_BREAKPOINT; a crash message beats both")
    func swiftTrapTitles() {
        let trap = ErrorInfo(
            type: "EXC_BREAKPOINT", code: "5", message: "Exception 6, Code 1, Subcode 4294983684",
            mach: MachException(
                exception: 6, name: "EXC_BREAKPOINT", code: 1, subcode: 0x1_0000_4004, signal: "SIGTRAP"))
        let report = crash(frames: [Frame(address: 0x1_0000_4004)], error: trap)
        #expect(Grouping.group(report, symbols: nil).title == "EXC_BREAKPOINT (SIGTRAP)")

        let inline = SymbolicatedReport(
            state: .complete,
            threads: [
                [
                    SymbolicatedFrameSlot(
                        frames: [
                            ResolvedFrame(
                                function:
                                    "Swift runtime failure: Unexpectedly found nil while unwrapping an Optional value",
                                file: "<compiler-generated>", line: 0, inlined: true),
                            ResolvedFrame(
                                function: "Shop.CartModel.checkout() -> ()", file: "Shop/CartModel.swift", line: 42),
                        ], buildID: Self.appID.rawValue, status: "dwarf")
                ]
            ],
            missing: [])
        let resolved = Grouping.group(report, symbols: inline)
        #expect(resolved.title == "Fatal error: Unexpectedly found nil while unwrapping an Optional value")
        #expect(resolved.titleRank == Grouping.TitleRank.cause)
        #expect(resolved.culprit == "CartModel.checkout() (CartModel.swift:42)")

        let withMessage = crash(
            frames: [Frame(address: 0x1_0000_4004)], error: trap,
            crashMessage: "Shop/CartModel.swift:42: Fatal error: Index out of range")
        #expect(Grouping.group(withMessage, symbols: inline).title == "Fatal error: Index out of range")
    }

    @Test("an uncaught NSException is titled by its name and reason and blamed on the app's frame")
    func nsExceptionBlame() {
        let error = ErrorInfo(
            type: "NSInvalidArgumentException", code: "6",
            message: "-[__NSCFNumber length]: unrecognized selector sent to instance 0x8",
            mach: MachException(exception: 10, name: "EXC_CRASH", code: 0, subcode: 0, signal: "SIGABRT"))
        let report = crash(
            frames: [
                Frame(address: 0x1_9a1c_4f2c, function: "__exceptionPreprocess"),
                Frame(address: 0x1_9a0a_1234, function: "objc_exception_throw"),
                Frame(address: 0x1_9a1d_0000, function: "-[NSObject(NSObject) doesNotRecognizeSelector:]"),
                Frame(address: 0x1_9a1d_8000, function: "___forwarding___"),
                Frame(address: 0x1_0000_b000, function: "-[CartViewController checkout:]"),
                Frame(address: 0x1_9a1d_9000, function: "_CF_forwarding_prep_0"),
            ],
            error: error)
        let result = Grouping.group(report, symbols: nil)
        #expect(
            result.title
                == "NSInvalidArgumentException: -[__NSCFNumber length]: unrecognized selector sent to instance 0x8")
        #expect(result.components == ["-[CartViewController checkout:]"])
        #expect(result.culprit == "-[CartViewController checkout:]")
        #expect(
            Grouping.inAppFrames(report, thread: 0, symbols: nil, rules: .none) == [
                false, false, false, false, true, false,
            ])
    }

    @Test("a frame whose image is not in debug_meta is judged by the path its package names")
    func packagePathsWithoutImages() {
        let report = Report(
            eventID: EventID("0c1d2e3f4a5b4c6d8e9fa0b1c2d3e4f5")!, kind: .crash,
            timestamp: Date(timeIntervalSince1970: 0),
            threads: [
                ThreadInfo(
                    crashed: true,
                    frames: [
                        Frame(
                            module:
                                "/private/preboot/Cryptexes/OS/System/Library/Frameworks/SafariServices.framework/SafariServices",
                            function: "-[SFSafariViewController viewDidLoad]"),
                        Frame(module: Self.appPath, function: "-[CartViewController viewDidLoad]"),
                    ])
            ])
        #expect(Grouping.inAppFrames(report, thread: 0, symbols: nil, rules: .none) == [false, true])
        #expect(Grouping.group(report, symbols: nil).components == ["-[CartViewController viewDidLoad]"])
    }

    // MARK: - In-app images

    @Test("the app's bundle and embedded frameworks are in-app on iOS, macOS and in the simulator")
    func appImagesAreInApp() {
        let own = [
            Self.appPath,
            "/private/var/containers/Bundle/Application/8C6F3C39/Shop.app/Frameworks/ShopKit.framework/ShopKit",
            "/private/var/containers/Bundle/Application/8C6F3C39/Shop.app/PlugIns/Widget.appex/Widget",
            "/Applications/Shop.app/Contents/MacOS/Shop",
            "/Applications/Shop.app/Contents/Frameworks/ShopKit.framework/Versions/A/ShopKit",
            "/Users/dev/Library/Developer/CoreSimulator/Devices/6F1C/data/Containers/Bundle/Application/1A2B/Shop.app/Shop",
            "/Users/dev/Library/Developer/Xcode/DerivedData/Shop-abc/Build/Products/Debug/Shop.app/Contents/MacOS/Shop",
        ]
        for path in own {
            #expect(!Grouping.isSystemModule(name: Grouping.baseName(ofPath: path), path: path), "\(path)")
        }
    }

    @Test("Apple's libraries are never the app's: system paths, cryptexes, simulator runtimes, Xcode, names alone")
    func appleSystemImages() {
        let system = [
            "/System/Library/Frameworks/CoreFoundation.framework/CoreFoundation",
            "/System/Library/PrivateFrameworks/UIKitCore.framework/UIKitCore",
            "/usr/lib/libobjc.A.dylib", "/usr/lib/system/libdispatch.dylib", "/usr/lib/system/libsystem_kernel.dylib",
            "/usr/lib/dyld", "/usr/lib/swift/libswiftCore.dylib", "/usr/lib/libc++abi.dylib",
            "/private/preboot/Cryptexes/OS/System/Library/Frameworks/WebKit.framework/WebKit",
            "/Developer/usr/lib/libMainThreadChecker.dylib",
            "/Library/Developer/CoreSimulator/Volumes/iOS_21E213/Library/Developer/CoreSimulator/Profiles/Runtimes/iOS 17.4.simruntime/Contents/Resources/RuntimeRoot/System/Library/Frameworks/UIKit.framework/UIKit",
            "/Applications/Xcode.app/Contents/Developer/Platforms/iPhoneOS.platform/Library/Developer/CoreSimulator/Profiles/Runtimes/iOS.simruntime/Contents/Resources/RuntimeRoot/usr/lib/libobjc.A.dylib",
            "/Applications/Xcode.app/Contents/Developer/usr/lib/libXCTestSwiftSupport.dylib",
        ]
        for path in system {
            #expect(Grouping.isSystemModule(name: Grouping.baseName(ofPath: path), path: path), "\(path)")
        }
        // Frames that name their image without a path (no debug image for it).
        for name in [
            "UIKitCore", "CoreFoundation", "libswiftCore.dylib", "libswiftFoundation.dylib",
            "libswift_Concurrency.dylib",
            "libdispatch.dylib", "libobjc.A.dylib", "libsystem_pthread.dylib", "dyld", "GraphicsServices", "SwiftUI",
        ] {
            #expect(Grouping.isSystemModule(name: name, path: nil), "\(name)")
        }
        #expect(!Grouping.isSystemModule(name: "Shop", path: nil))
        #expect(!Grouping.isSystemModule(name: "ShopKit", path: nil))
        // Linux stays as it was.
        #expect(Grouping.isSystemModule(name: "libc.so.6", path: "/lib/x86_64-linux-gnu/libc.so.6"))
        #expect(!Grouping.isSystemModule(name: "app", path: "/opt/app/bin/app"))
    }

    @Test("the Apple fields are held to the ingest limits like every other text")
    func appleFieldsAreCapped() {
        let long = String(repeating: "x", count: 5000)
        var report = crash(
            frames: [],
            error: ErrorInfo(type: "EXC_BAD_ACCESS", mach: MachException(exception: 1, name: long, signal: long)))
        report.device.osBuild = long
        report.app.displayVersion = long
        report.app.displayBuild = long
        report.modules[0].arch = long
        let limits = IngestLimits()
        limits.apply(to: &report)
        let cap = limits.maxKeyValueBytes
        #expect(report.device.osBuild.map { $0.utf8.count <= cap } == true)
        #expect(report.app.displayVersion.map { $0.utf8.count <= cap } == true)
        #expect(report.app.displayBuild.map { $0.utf8.count <= cap } == true)
        #expect(report.modules[0].arch.map { $0.utf8.count <= cap } == true)
        #expect(report.error?.mach?.name.map { $0.utf8.count <= cap } == true)
        #expect(report.error?.mach?.signal.map { $0.utf8.count <= cap } == true)
        #expect(report.trimmed.valuesTruncated == 6)
        // A name too long to be one is no exception name: the title falls back to the number.
        #expect(report.error?.mach?.exceptionName == "EXC_BAD_ACCESS")
    }

    // MARK: - Identifiers and names

    @Test("UUID spellings: any case, hyphens, braces, an age; Apple's spelling back")
    func uuidSpellings() throws {
        for raw in [
            "4C4C4473-5555-3144-A157-542D2ECDA82A",
            "4c4c4473555531 44a157542d2ecda82a".replacingOccurrences(of: " ", with: ""),
            "4c4c4473-5555-3144-a157-542d2ecda82a-0", "{4C4C4473-5555-3144-A157-542D2ECDA82A}",
        ] {
            #expect(AppleUUID.buildID(raw) == Self.appID, "\(raw)")
        }
        for raw in ["", "4c4c4473", "4c4c4473-5555-3144-a157-542d2ecda8", "4c4c4473-5555-3144-a157-542d2ecda8zz", "📱"] {
            #expect(AppleUUID.buildID(raw) == nil, "\(raw)")
        }
        #expect(AppleUUID.spelling(Self.appID) == "4C4C4473-5555-3144-A157-542D2ECDA82A")
        let gnu = try #require(BuildID("aba11aeff7e7e9e2e1bc84464f53a7e183a8930a"))
        #expect(AppleUUID.spelling(gnu) == gnu.rawValue)
        #expect(AppleUUID.looksLikeMachOUUID(Self.appID))
        #expect(!AppleUUID.looksLikeMachOUUID(gnu))
        #expect(!AppleUUID.looksLikeMachOUUID(try #require(BuildID("6f1c2a9e0b7d4e11a3c4d5e6f7a8b9c0"))))  // version 4
        #expect(AppleUUID.architecture(cpuType: 0x0100_000c, cpuSubtype: 2) == "arm64e")
        #expect(AppleUUID.architecture(cpuType: 0x0100_000c, cpuSubtype: Int(bitPattern: 0x8000_0002)) == "arm64e")
        #expect(AppleUUID.architecture(cpuType: 0x0100_000c, cpuSubtype: 0) == "arm64")
        #expect(AppleUUID.architecture(cpuType: 0x0100_0007, cpuSubtype: 3) == "x86_64")
        #expect(AppleUUID.architecture(cpuType: 42, cpuSubtype: nil) == nil)
    }

    @Test("device machine ids read as names; unknown ids stay as sent")
    func deviceNames() {
        #expect(AppleDeviceNames.name(of: "iPhone15,2") == "iPhone 14 Pro")
        #expect(AppleDeviceNames.name(of: "iPhone16,1") == "iPhone 15 Pro")
        #expect(AppleDeviceNames.name(of: "iPad13,18") == "iPad (10th generation)")
        #expect(AppleDeviceNames.name(of: "Watch6,18") == "Apple Watch Ultra")
        #expect(AppleDeviceNames.name(of: "AppleTV14,1") == "Apple TV 4K (3rd generation)")
        #expect(AppleDeviceNames.name(of: "Pixel 8") == nil)
        #expect(AppleDeviceNames.display(model: "iPhone15,2") == "iPhone 14 Pro (iPhone15,2)")
        #expect(AppleDeviceNames.display(model: "iPhone99,9") == "iPhone99,9")
        #expect(
            AppleDeviceNames.display(model: "iPhone16,1", simulator: true) == "iPhone 15 Pro (iPhone16,1), simulator")
        // Every id is named once: a copy-paste slip in the table would give one id two names.
        var seen: [String: String] = [:]
        for (name, ids) in AppleDeviceNames.groups {
            for id in ids {
                #expect(seen[id] == nil, "\(id) is both \(seen[id] ?? "") and \(name)")
                seen[id] = name
            }
        }
    }
}
