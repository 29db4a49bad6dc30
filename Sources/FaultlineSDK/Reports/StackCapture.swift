import Foundation
import Runtime
import Synchronization

/// Captures the calling thread's stack as raw addresses, with the images they lie in (symbolicated later by
/// the server from uploaded debug files; nothing is symbolicated on the device).
///
/// The image list is captured once and kept; it is captured again only when a frame falls outside every
/// image it knows (a library loaded since), so a non-fatal costs one unwind, not a walk of the link map.
package final class StackCapture: Sendable {
    private let images = Mutex<(map: ImageMap?, known: [CapturedStack.Module]?, outside: Set<UInt64>)>((nil, nil, []))

    package init() {}

    /// The stack of the thread that calls this, innermost first, without the first `skipping` frames
    /// (the SDK's own; this function's frame is never included).
    @inline(never)
    package func capture(skipping: Int = 0, limit: Int = 128) -> CapturedStack {
        var frames: [CapturedStack.Frame] = []
        // offset 1 leaves out this function's own frame.
        // The cached image map is passed in: without it every capture would read /proc/self/maps again.
        let map = images.withLock { cache in
            if cache.map == nil {
                let fresh = ImageMap.capture()
                cache.map = fresh
                cache.known = Self.modules(of: fresh)
            }
            return cache.map
        }
        if let backtrace = try? Backtrace.capture(limit: limit, offset: 1 + max(0, skipping), top: 0, images: map) {
            for frame in backtrace.frames {
                switch frame {
                case .programCounter(let address):
                    frames.append(CapturedStack.Frame(address: UInt64(address) ?? 0, isProgramCounter: true))
                case .returnAddress(let address), .asyncResumePoint(let address):
                    frames.append(CapturedStack.Frame(address: UInt64(address) ?? 0, isProgramCounter: false))
                case .omittedFrames, .truncated:
                    continue
                @unknown default:
                    continue
                }
            }
        }
        frames.removeAll { $0.address == 0 }
        return CapturedStack(threadName: Self.threadName(), frames: frames, modules: modules(covering: frames))
    }

    /// The loaded images, refreshed when one of `frames` lies outside all of them (once per such address: a
    /// frame in no image, e.g. JIT code, does not make every later capture walk the link map again).
    package func modules(covering frames: [CapturedStack.Frame]) -> [CapturedStack.Module] {
        images.withLock { cache in
            if let known = cache.known,
                frames.allSatisfy({ frame in
                    cache.outside.contains(frame.address) || known.contains { $0.contains(frame.address) }
                })
            {
                return known
            }
            let map = ImageMap.capture()
            let fresh = Self.modules(of: map)
            cache.map = map
            if cache.outside.count > 4096 { cache.outside.removeAll() }
            for frame in frames where !fresh.contains(where: { $0.contains(frame.address) }) {
                cache.outside.insert(frame.address)
            }
            cache.known = fresh
            return fresh
        }
    }

    static func modules(of map: ImageMap) -> [CapturedStack.Module] {
        map.compactMap { image -> CapturedStack.Module? in
            guard let base = UInt64(image.baseAddress), let end = UInt64(image.endOfText), end > base else {
                return nil
            }
            let path = image.path
            let name = image.name ?? path.map { String($0.split(separator: "/").last ?? Substring($0)) } ?? "?"
            let buildID = image.uniqueID.flatMap { $0.isEmpty ? nil : hex($0) }
            return CapturedStack.Module(name: name, path: path, buildID: buildID, baseAddress: base, endAddress: end)
        }
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The calling thread's name (`/proc/thread-self/comm`), nil when it has none.
    static func threadName() -> String? {
        guard let text = try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8) else { return nil }
        let name = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return name.isEmpty ? nil : name
    }
}

extension CapturedStack.Module {
    func contains(_ address: UInt64) -> Bool { address >= baseAddress && address < endAddress }
}

extension DeviceInfo {
    /// This machine: kernel release (`uname`), architecture, the machine's product name when the firmware
    /// tells it, and the memory `/proc/meminfo` reports.
    package static func current() -> DeviceInfo {
        var names = utsname()
        var release: String?
        var machine: String?
        if uname(&names) == 0 {
            release = withUnsafeBytes(of: &names.release) { field(Array($0)) }
            machine = withUnsafeBytes(of: &names.machine) { field(Array($0)) }
        }
        let model = (try? String(contentsOfFile: "/sys/devices/virtual/dmi/id/product_name", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines)
        return DeviceInfo(
            os: "Linux", osVersion: release, arch: machine, model: model?.isEmpty == false ? model : nil,
            memory: memTotal((try? String(contentsOfFile: "/proc/meminfo", encoding: .utf8)) ?? ""))
    }

    /// `MemTotal:  16314388 kB` → bytes.
    package static func memTotal(_ meminfo: String) -> UInt64? {
        for line in meminfo.split(separator: "\n", omittingEmptySubsequences: true).prefix(64)
        where line.hasPrefix("MemTotal:") {
            let parts = line.split(separator: " ", omittingEmptySubsequences: true)
            guard parts.count >= 2, let kilobytes = UInt64(parts[1]) else { return nil }
            let (bytes, overflow) = kilobytes.multipliedReportingOverflow(by: 1024)
            return overflow ? nil : bytes
        }
        return nil
    }

    private static func field(_ bytes: [UInt8]) -> String? {
        let text = String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        return text.isEmpty ? nil : text
    }
}
