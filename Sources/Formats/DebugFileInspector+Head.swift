import FaultlineCore
import MachO

// `DebugFileInspecting.inspectHead`: the check a `PUT` upload's first bytes get while they stream in
// (`ELFPrefixCheck`, the `SYSB` magic), for a file whose first bytes are known before it is written (one
// assembled from sentry-cli's chunks).

extension ELFFileInspector {
    /// The ELF identification and header of `head`, and the build-id when a `PT_NOTE` in `head` holds it.
    /// - Throws: `ELFError` when `head` cannot begin an ELF file (or is shorter than an ELF header).
    public func inspectHead(_ head: [UInt8]) throws -> BuildID? {
        var check = ELFPrefixCheck()
        try check.feed(head)
        try check.finish()
        if case .buildID(let id) = check.verdict { return id }
        return nil
    }
}

extension DebugFileFormatInspector {
    /// A source bundle's magic (its build-id is in the manifest, at the end: nil), a Mach-O's (`MachOFileInspector`'s
    /// check: thin, or fat to be split), else `ELFFileInspector`'s check.
    /// - Throws: `DebugFileHeadError` naming both formats when the bytes begin neither.
    public func inspectHead(_ head: [UInt8]) throws -> BuildID? {
        if SourceBundle.hasMagic(head) { return nil }
        if MachOContainer.magic(of: head) != nil { return try MachOFileInspector().inspectHead(head) }
        do {
            return try ELFFileInspector().inspectHead(head)
        } catch ELFError.notELF {
            throw DebugFileHeadError.neither
        }
    }
}

/// The first bytes of an upload begin no debug file the server reads.
public enum DebugFileHeadError: Error, Equatable, Sendable, CustomStringConvertible {
    case neither
    public var description: String { "not an ELF or Mach-O file (nor a source bundle)" }
}
