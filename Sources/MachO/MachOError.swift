/// Why bytes are not a usable Mach-O file. Every malformed input ends here, never in a crash or an unbounded
/// allocation: the reader checks every offset, count and size against the file before it reads.
public enum MachOError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The bytes start with neither a Mach-O nor a fat (universal) magic.
    case notMachO
    /// An offset or size points past the end of the file or slice.
    case truncated(String)
    /// A header or load command contradicts itself or the file.
    case malformed(String)
    /// A well-formed file this reader does not take (big-endian slices, a fat file inside a fat file).
    case unsupported(String)

    public var description: String {
        switch self {
        case .notMachO: return "not a Mach-O file"
        case .truncated(let why): return "truncated Mach-O file: \(why)"
        case .malformed(let why): return "malformed Mach-O file: \(why)"
        case .unsupported(let why): return "unsupported Mach-O file: \(why)"
        }
    }
}

/// Reads exactly `count` bytes at absolute `offset` of the file (or throws). The caller owns the I/O (`pread`, an
/// array in memory), so this module does none and both Formats and Symbolication can use it.
public typealias MachOReadBytes = (_ offset: UInt64, _ count: Int) throws -> [UInt8]

extension MachOContainer {
    /// A `MachOReadBytes` over bytes in memory (a file's first bytes, a test's or a fuzzer's input): a read past the end
    /// throws `truncated`.
    public static func reader(over bytes: [UInt8]) -> MachOReadBytes {
        { offset, count in
            guard count >= 0, offset <= UInt64(bytes.count), UInt64(count) <= UInt64(bytes.count) - offset else {
                throw MachOError.truncated("needs \(count) bytes at offset \(offset), there are \(bytes.count)")
            }
            return Array(bytes[Int(offset)..<(Int(offset) + count)])
        }
    }
}

/// Little- and big-endian integer fields of a byte array whose length the caller has checked.
struct MachOFields {
    let bytes: [UInt8]
    let bigEndian: Bool

    func u32(_ at: Int) -> UInt32 {
        let b = (UInt32(bytes[at]), UInt32(bytes[at + 1]), UInt32(bytes[at + 2]), UInt32(bytes[at + 3]))
        return bigEndian ? b.0 << 24 | b.1 << 16 | b.2 << 8 | b.3 : b.3 << 24 | b.2 << 16 | b.1 << 8 | b.0
    }

    func u64(_ at: Int) -> UInt64 {
        let hi = UInt64(u32(bigEndian ? at : at + 4))
        let lo = UInt64(u32(bigEndian ? at + 4 : at))
        return hi << 32 | lo
    }

    func u16(_ at: Int) -> UInt16 {
        let b = (UInt16(bytes[at]), UInt16(bytes[at + 1]))
        return bigEndian ? b.0 << 8 | b.1 : b.1 << 8 | b.0
    }

    /// A fixed 16-byte name field (`segname`, `sectname`): up to the first NUL, as UTF-8 with replacements.
    func name16(_ at: Int) -> String {
        let field = bytes[at..<(at + 16)]
        let end = field.firstIndex(of: 0) ?? field.endIndex
        return String(decoding: field[field.startIndex..<end], as: UTF8.self)
    }
}

/// Checked arithmetic on sizes taken from hostile headers.
enum Checked {
    /// `a + b`, or `malformed` when it overflows.
    static func add(_ a: UInt64, _ b: UInt64, _ what: @autoclosure () -> String) throws -> UInt64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        if overflow { throw MachOError.malformed("\(what()) overflows") }
        return sum
    }

    /// `a * b`, or `malformed` when it overflows.
    static func multiply(_ a: UInt64, _ b: UInt64, _ what: @autoclosure () -> String) throws -> UInt64 {
        let (product, overflow) = a.multipliedReportingOverflow(by: b)
        if overflow { throw MachOError.malformed("\(what()) overflows") }
        return product
    }

    /// Throws `truncated` unless `offset ..< offset + size` lies inside `0 ..< limit`.
    static func within(_ offset: UInt64, _ size: UInt64, _ limit: UInt64, _ what: @autoclosure () -> String) throws {
        let (end, overflow) = offset.addingReportingOverflow(size)
        guard !overflow, end <= limit else {
            throw MachOError.truncated("\(what()) (\(size) bytes at offset \(offset)) ends past \(limit) bytes")
        }
    }
}
