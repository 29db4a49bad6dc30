/// Random access to the bytes of a file or buffer, so that ELF headers can be read from a 2 GB file
/// without loading it.
///
/// Implementations: `MemoryByteSource` here (pure, for tests and small inputs); file-backed ones with
/// `pread` live in the modules that do I/O.
public protocol ByteSource {
    /// Total size in bytes.
    var size: UInt64 { get }
    /// Exactly `count` bytes at `offset`; throws if they are not all there.
    func bytes(at offset: UInt64, count: Int) throws -> [UInt8]
}

/// A `ByteSource` over bytes in memory.
public struct MemoryByteSource: ByteSource {
    public let data: [UInt8]
    public init(_ data: [UInt8]) { self.data = data }
    public var size: UInt64 { UInt64(data.count) }
    public func bytes(at offset: UInt64, count: Int) throws -> [UInt8] {
        guard count >= 0, offset <= UInt64(data.count), UInt64(count) <= UInt64(data.count) - offset else {
            throw ELFError.truncated("needs \(count) bytes at offset \(offset), the file has \(data.count)")
        }
        let start = Int(offset)
        return Array(data[start..<(start + count)])
    }
}
