#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Whether a report is a fatal crash or a non-fatal (handled) error. Only crashes count against the
/// crash-free rates.
public enum ReportKind: String, Sendable, Codable, CaseIterable {
    case crash
    case nonfatal
}

/// The application that produced a report.
public struct AppInfo: Sendable, Equatable {
    public var id: String?
    public var version: String?
    public var build: String?
    /// The version the app reported about itself (Sentry's `contexts.app.app_version`: `CFBundleShortVersionString`
    /// on Apple platforms), shown beside the release. It does not name the release: a Sentry release (`com.x@1.2+42`)
    /// is what sessions count by, and the two must meet.
    public var displayVersion: String?
    /// The build the app reported about itself (`contexts.app.app_build`: `CFBundleVersion`), shown beside the release.
    public var displayBuild: String?
    public init(
        id: String? = nil, version: String? = nil, build: String? = nil, displayVersion: String? = nil,
        displayBuild: String? = nil
    ) {
        self.id = id
        self.version = version
        self.build = build
        self.displayVersion = displayVersion
        self.displayBuild = displayBuild
    }

    /// The release this app belongs to: the version as `ReleaseName` reads it (never with its build, which is
    /// `releaseBuild`, so a report meets its release's sessions); nil when the client sent no version.
    public var release: String? { ReleaseName.parse(version, build: build)?.version }

    /// The build beneath the release: `build`, else one written into `version` (`2.4.0+240`, `2.4.0 (240)`).
    public var releaseBuild: String? { ReleaseName.parse(version, build: build)?.build }
}

/// The device and operating system a report came from.
public struct DeviceInfo: Sendable, Equatable {
    /// The model as the client names it: Apple's machine id (`iPhone15,2`, shown through `AppleDeviceNames` as
    /// "iPhone 14 Pro"), an Android model, a host's hardware name.
    public var model: String?
    public var os: String?
    public var osVersion: String?
    /// The operating system's build (`21E236` for iOS 17.4), when the client sends it.
    public var osBuild: String?
    public var arch: String?
    public var memoryBytes: UInt64?
    public var freeDiskBytes: UInt64?
    public var locale: String?
    /// true: the app ran in a simulator (or an emulator); false: on a real device; nil: not said.
    public var simulator: Bool?
    public init(
        model: String? = nil, os: String? = nil, osVersion: String? = nil, arch: String? = nil,
        memoryBytes: UInt64? = nil, freeDiskBytes: UInt64? = nil, locale: String? = nil, osBuild: String? = nil,
        simulator: Bool? = nil
    ) {
        self.model = model
        self.os = os
        self.osVersion = osVersion
        self.arch = arch
        self.memoryBytes = memoryBytes
        self.freeDiskBytes = freeDiskBytes
        self.locale = locale
        self.osBuild = osBuild
        self.simulator = simulator
    }
}

/// What went wrong: an exception type or error domain, a code, and a message.
public struct ErrorInfo: Sendable, Equatable {
    public var type: String?
    public var code: String?
    public var message: String?
    /// The Mach exception an Apple crash was raised by (`EXC_BAD_ACCESS` + `KERN_INVALID_ADDRESS`), when the client
    /// reported one; titles are written from it (`MachException.title`).
    public var mach: MachException?
    public init(type: String? = nil, code: String? = nil, message: String? = nil, mach: MachException? = nil) {
        self.type = type
        self.code = code
        self.message = message
        self.mach = mach
    }
}

/// What a frame's address points at, which decides how it is looked up.
public enum InstructionKind: String, Sendable, Codable {
    /// The exact instruction (the crashing frame): looked up as is.
    case programCounter = "pc"
    /// A return address (a caller frame): points after the call, so `address - 1` is looked up.
    case returnAddress = "return"
}

/// One stack frame: a raw address (to be symbolicated) and/or what a client already resolved.
public struct Frame: Sendable, Equatable {
    /// The absolute instruction address as the client saw it.
    public var address: UInt64?
    /// Whether `address` is a program counter or a return address; nil means the usual convention (the
    /// first frame of a thread is a program counter, the others return addresses).
    public var instructionKind: InstructionKind?
    /// The module (image) name the client attributed the address to, if any.
    public var module: String?
    public var function: String?
    public var file: String?
    public var line: Int?
    public var column: Int?
    /// How a stack walker found the frame (frames of a stack walked from a minidump); nil for a stack the client
    /// sent.
    public var trust: FrameTrust?
    public init(
        address: UInt64? = nil, instructionKind: InstructionKind? = nil, module: String? = nil, function: String? = nil,
        file: String? = nil, line: Int? = nil, column: Int? = nil, trust: FrameTrust? = nil
    ) {
        self.trust = trust
        self.address = address
        self.instructionKind = instructionKind
        self.module = module
        self.function = function
        self.file = file
        self.line = line
        self.column = column
    }
}

/// One thread of a report; stacks are ordered innermost (crashing) frame first.
public struct ThreadInfo: Sendable, Equatable {
    public var name: String?
    public var crashed: Bool
    public var frames: [Frame]
    /// Register values at the crash, in the order the client sent them.
    public var registers: [Register]
    public init(name: String? = nil, crashed: Bool = false, frames: [Frame] = [], registers: [Register] = []) {
        self.name = name
        self.crashed = crashed
        self.frames = frames
        self.registers = registers
    }
}

/// A register name and value.
public struct Register: Sendable, Equatable {
    public var name: String
    public var value: UInt64
    public init(name: String, value: UInt64) {
        self.name = name
        self.value = value
    }
}

/// The object-file format of a loaded module, when the client said (Sentry's `debug_meta.images[].type`).
public enum ImageFormat: String, Sendable, Equatable, Codable {
    case elf
    /// Apple's Mach-O: the build-id is the image's `LC_UUID` and its debug file a dSYM.
    case macho
    case pe
}

/// A module (executable or shared library) loaded in the process, with where it was mapped.
public struct LoadedModule: Sendable, Equatable {
    public var name: String
    public var path: String?
    public var buildID: BuildID?
    public var baseAddress: UInt64
    /// Mapped size in bytes (`end - base` when the client sent an end address).
    public var size: UInt64?
    /// The module's format, when known: a Mach-O module's debug file is called a dSYM and its id shown as a UUID.
    public var format: ImageFormat?
    /// The module's architecture (`arm64`, `arm64e`, `x86_64`), when the client sent it.
    public var arch: String?
    public init(
        name: String, path: String? = nil, buildID: BuildID? = nil, baseAddress: UInt64, size: UInt64? = nil,
        format: ImageFormat? = nil, arch: String? = nil
    ) {
        self.name = name
        self.path = path
        self.buildID = buildID
        self.baseAddress = baseAddress
        self.size = size
        self.format = format
        self.arch = arch
    }
}

/// A timestamped entry of what happened before the report.
public struct Breadcrumb: Sendable, Equatable {
    public var timestamp: Date
    public var category: String?
    public var level: String?
    public var message: String?
    public var data: BreadcrumbData
    public init(
        timestamp: Date, category: String? = nil, level: String? = nil, message: String? = nil,
        data: BreadcrumbData = [:]
    ) {
        self.timestamp = timestamp
        self.category = category
        self.level = level
        self.message = message
        self.data = data
    }
}

/// A breadcrumb's `data`: names and values, each name once, in the order sent (the last of a repeated name wins, as
/// JSON readers do). Compared as a dictionary (order does not matter).
///
/// An array of pairs rather than a `Dictionary`: ingest parses ~20 breadcrumbs of a few entries per report, and a
/// dictionary per breadcrumb (hashing every name, growing its storage) was a third of parsing a breadcrumb.
public struct BreadcrumbData: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
    public typealias Element = (key: String, value: String)
    public private(set) var entries: [Element]

    public init() { entries = [] }

    /// `pairs` with repeated names removed, the last of each kept in the place of its first.
    public init(_ pairs: [Element]) {
        entries = pairs
        removeRepeatedNames()
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements.map { (key: $0.0, value: $0.1) })
    }

    public var isEmpty: Bool { entries.isEmpty }
    public var count: Int { entries.count }
    public func makeIterator() -> IndexingIterator<[Element]> { entries.makeIterator() }

    /// The value of `name` (names compare as `String`s do, as a dictionary's keys).
    public subscript(name: String) -> String? {
        entries.first { $0.key == name }?.value
    }

    public static func == (a: BreadcrumbData, b: BreadcrumbData) -> Bool {
        guard a.count == b.count else { return false }
        if a.count <= 8 {
            return a.entries.allSatisfy { entry in b[entry.key] == entry.value }
        }
        return Dictionary(uniqueKeysWithValues: a.entries.map { ($0.key, $0.value) })
            == Dictionary(uniqueKeysWithValues: b.entries.map { ($0.key, $0.value) })
    }

    private mutating func removeRepeatedNames() {
        guard entries.count > 1 else { return }
        if entries.count <= 8 {  // the usual few: compare names pairwise rather than hash them
            var repeated = false
            search: for i in 1..<entries.count {
                for j in 0..<i where entries[i].key == entries[j].key {
                    repeated = true
                    break search
                }
            }
            guard repeated else { return }
        }
        var place: [String: Int] = [:]
        place.reserveCapacity(entries.count)
        var kept: [Element] = []
        for entry in entries {
            if let first = place[entry.key] {
                kept[first].value = entry.value
            } else {
                place[entry.key] = kept.count
                kept.append(entry)
            }
        }
        entries = kept
    }
}

/// A custom key's value: the three scalar types the SDKs allow.
public enum CustomValue: Sendable, Equatable {
    case string(String)
    case number(Double)
    case bool(Bool)
}

/// What the limits removed or shortened on the way in. Stored with the report so nobody wonders
/// where the 65th custom key went.
public struct TrimCounts: Sendable, Equatable {
    public var customKeysDropped = 0
    public var valuesTruncated = 0
    public var breadcrumbsDropped = 0
    public var threadsDropped = 0
    public var framesDropped = 0
    public var modulesDropped = 0
    /// Tags past `IngestLimits.maxCustomKeys` (in key order).
    public var tagsDropped = 0
    /// Whole context blocks past `IngestLimits.maxContexts` (in name order).
    public var contextsDropped = 0
    /// Values of kept context blocks past `IngestLimits.maxCustomKeys` per block, and SDK integrations or packages
    /// past the same number.
    public var contextKeysDropped = 0
    public init() {}
    public var isEmpty: Bool { self == TrimCounts() }
}

/// A crash report or non-fatal error, validated and trimmed to the limits.
public struct Report: Sendable, Equatable {
    public var eventID: EventID
    public var kind: ReportKind
    /// When it happened, by the client's clock.
    public var timestamp: Date
    public var sessionID: SessionID?
    public var userID: String?
    public var installID: String?
    public var environment: String?
    public var app: AppInfo
    public var device: DeviceInfo
    public var error: ErrorInfo?
    public var threads: [ThreadInfo]
    public var modules: [LoadedModule]
    public var breadcrumbs: [Breadcrumb]
    /// Custom keys in key order (sorted), so trimming and storage are deterministic: what the app set as its own
    /// keys (our SDK's custom keys, a Sentry event's scalar `extra` values as `extra.NAME`).
    public var customKeys: [(key: String, value: CustomValue)]
    /// Tags in key order (a Sentry event's `tags` and the facts Sentry indexes as tags: `level`, `mechanism`…).
    public var tags: [(key: String, value: String)] = []
    /// The SDK that sent the report, when it said.
    public var sdk: SDKInfo?
    /// Context blocks beyond the device, OS and app ones, in name order.
    public var contexts: [ReportContext] = []
    /// A client-chosen grouping fingerprint; wins over the computed one when present.
    public var fingerprint: [String]?
    /// The faulting address of a crash, when the platform reports one.
    public var faultAddress: UInt64?
    /// What the crashing program printed as it died, as its client passed it (scrubbed, at most
    /// `IngestLimits.maxCrashMessageBytes`): `main.swift:14: Fatal error: Division by zero`, or libstdc++'s
    /// `terminate called after throwing an instance of 'std::runtime_error'\n  what():  too expensive`.
    /// nil when the client sent none (the Swift crash endpoint's `message`).
    public var crashMessage: String?
    /// Whether the threads are a minidump's starting points (each thread's registers, its context frame only), to be
    /// walked from the dump stored with the report (`StackWalking`) before it is symbolicated and grouped.
    public var walksMinidump = false
    public var trimmed: TrimCounts

    public init(
        eventID: EventID, kind: ReportKind, timestamp: Date, sessionID: SessionID? = nil, userID: String? = nil,
        installID: String? = nil, environment: String? = nil, app: AppInfo = AppInfo(),
        device: DeviceInfo = DeviceInfo(),
        error: ErrorInfo? = nil, threads: [ThreadInfo] = [], modules: [LoadedModule] = [],
        breadcrumbs: [Breadcrumb] = [],
        customKeys: [(key: String, value: CustomValue)] = [], fingerprint: [String]? = nil, faultAddress: UInt64? = nil,
        trimmed: TrimCounts = TrimCounts(), crashMessage: String? = nil
    ) {
        self.faultAddress = faultAddress
        self.crashMessage = crashMessage
        self.eventID = eventID
        self.kind = kind
        self.timestamp = timestamp
        self.sessionID = sessionID
        self.userID = userID
        self.installID = installID
        self.environment = environment
        self.app = app
        self.device = device
        self.error = error
        self.threads = threads
        self.modules = modules
        self.breadcrumbs = breadcrumbs
        self.customKeys = customKeys
        self.fingerprint = fingerprint
        self.trimmed = trimmed
    }

    /// The release (see `AppInfo.release`).
    public var release: String? { app.release }
    /// The build beneath the release (see `AppInfo.releaseBuild`).
    public var build: String? { app.releaseBuild }
    /// Who was affected: the user id when set, else the install id (DESIGN.md's definition of a user).
    public var userKey: String? { userID ?? installID }

    public static func == (a: Report, b: Report) -> Bool {
        a.eventID == b.eventID && a.kind == b.kind && a.timestamp == b.timestamp && a.sessionID == b.sessionID
            && a.userID == b.userID && a.installID == b.installID && a.environment == b.environment && a.app == b.app
            && a.device == b.device && a.error == b.error && a.threads == b.threads && a.modules == b.modules
            && a.breadcrumbs == b.breadcrumbs && a.fingerprint == b.fingerprint && a.trimmed == b.trimmed
            && a.faultAddress == b.faultAddress && a.crashMessage == b.crashMessage
            && a.walksMinidump == b.walksMinidump
            && a.customKeys.map(\.key) == b.customKeys.map(\.key)
            && a.customKeys.map(\.value) == b.customKeys.map(\.value)
            && a.tags.map(\.key) == b.tags.map(\.key) && a.tags.map(\.value) == b.tags.map(\.value)
            && a.sdk == b.sdk && a.contexts == b.contexts
    }
}
