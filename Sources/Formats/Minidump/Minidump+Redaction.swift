extension Minidump {
    /// The dump's bytes with Breakpad's `LinuxEnviron` stream removed and its `LinuxCmdLine` arguments passed
    /// through `scrub`, for storing a dump under the project's privacy rules.
    ///
    /// Rewritten in place, so every offset in the file stays valid: the environment's bytes become zeros and its
    /// directory entry an unused stream (type 0); each scrubbed argument is written back NUL-separated, cut to the
    /// stream's length and padded with NULs, and the stream's size in the directory becomes the scrubbed line's (so
    /// the padding is not read as empty arguments). Only these two streams and their directory entries change. The captured stack memory is left as it
    /// is: a main thread's stack holds the environment strings above its frames, so a dump kept for download still
    /// carries them there.
    public func redacted(scrubbingCommandLine scrub: (String) -> String) -> [UInt8] {
        var out = file.bytes
        for (index, entry) in streams.enumerated() {
            // Every stream's range was checked when the dump was read.
            guard let range = try? file.range(UInt64(entry.location.rva), UInt64(entry.location.size), "a stream")
            else { continue }
            switch entry.type {
            case StreamType.linuxEnviron:
                out.replaceSubrange(range, with: repeatElement(0, count: range.count))
                // The entry's type, at the start of its 12 bytes in the directory (checked when the dump was read).
                let type = directoryOffset + 12 * index
                out.replaceSubrange(type..<(type + 4), with: [0, 0, 0, 0])
            case StreamType.linuxCmdLine:
                let arguments = Self.nulSeparated(file.bytes[range]).map(scrub)
                let text = Array(arguments.joined(separator: "\u{0}").utf8.prefix(range.count))
                out.replaceSubrange(range, with: text + repeatElement(0, count: range.count - text.count))
                // The stream's size is the scrubbed line's: the zeros after it are not read as empty arguments.
                let size = UInt32(text.count)  // at most the old size, a UInt32
                let field = directoryOffset + 12 * index + 4
                out.replaceSubrange(field..<(field + 4), with: withUnsafeBytes(of: size.littleEndian, Array.init))
            default:
                continue
            }
        }
        return out
    }

    /// Where the stream directory starts in the file (the header's RVA, checked when the dump was read).
    var directoryOffset: Int { Int(file.u32(12)) }
}
