import FaultlineCore
import Foundation

/// SHA-256 by coreutils' `sha256sum` (the real algorithm, an independent implementation; swift-crypto lives in
/// the HTTP module, which the storage tests do not link).
public struct CoreutilsSHA256: ContentHashing {
    public init() {}

    final class Buffer: ContentDigesting {
        var bytes: [UInt8] = []
        func update(_ bytes: [UInt8]) { self.bytes += bytes }
        func finalize() -> ContentHash {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("sha-\(UUID().uuidString)").path
            defer { try? FileManager.default.removeItem(atPath: path) }
            try? Data(bytes).write(to: URL(fileURLWithPath: path))
            return (try? CoreutilsSHA256().sha256(ofFileAt: path))!
        }
    }
    public func sha256() -> any ContentDigesting { Buffer() }
    public func sha256(ofFileAt path: String) throws -> ContentHash {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
        process.arguments = [path]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        process.waitUntilExit()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        guard let hash = ContentHash(text.prefix(64)) else { throw StorageError(.openFailed, "sha256sum: \(text)") }
        return hash
    }
}
