extension Minidump {
    /// Decodes one directory entry into the fields it fills. The first of a kind wins; a repeat is ignored.
    mutating func read(_ entry: StreamEntry) throws(MinidumpError) {
        let body = try file.range(
            UInt64(entry.location.rva), UInt64(entry.location.size), "stream \(Self.name(entry.type))")
        switch entry.type {
        case StreamType.systemInfo where systemInfo == nil: systemInfo = try readSystemInfo(body)
        case StreamType.exception where exception == nil: exception = try readException(body)
        case StreamType.threadList where threads.isEmpty: threads = try readThreads(body)
        case StreamType.threadNames where threadNames.isEmpty: threadNames = try readThreadNames(body)
        case StreamType.memoryList: memoryRanges += try readMemoryList(body)
        case StreamType.memory64List: memoryRanges += try readMemory64List(body)
        case StreamType.moduleList where modules.isEmpty: modules = try readModules(body)
        case StreamType.miscInfo where processID == nil:
            // MINIDUMP_MISC_INFO: size, flags1 (bit 0: the process id is valid), process id.
            if body.count >= 12, file.u32(body.lowerBound + 4) & 1 != 0 { processID = file.u32(body.lowerBound + 8) }
        case StreamType.crashpadInfo where crashpad == nil: crashpad = try readCrashpadInfo(body)
        case StreamType.linuxCmdLine: linux.cmdLine = Self.nulSeparated(file.bytes[body])
        case StreamType.linuxEnviron: linux.environ = Self.nulSeparated(file.bytes[body])
        case StreamType.linuxLSBRelease: linux.lsbRelease = MinidumpBytes.text(file.bytes[body])
        case StreamType.linuxMaps: linux.maps = MinidumpBytes.text(file.bytes[body])
        case StreamType.linuxProcStatus: linux.procStatus = MinidumpBytes.text(file.bytes[body])
        case StreamType.linuxCPUInfo: linux.cpuInfo = MinidumpBytes.text(file.bytes[body])
        case StreamType.linuxAuxv: linux.auxv = Array(file.bytes[body])
        default: break
        }
    }

    /// A stream's name for messages.
    static func name(_ type: UInt32) -> String {
        switch type {
        case StreamType.threadList: return "ThreadList"
        case StreamType.moduleList: return "ModuleList"
        case StreamType.memoryList: return "MemoryList"
        case StreamType.exception: return "Exception"
        case StreamType.systemInfo: return "SystemInfo"
        case StreamType.memory64List: return "Memory64List"
        case StreamType.miscInfo: return "MiscInfo"
        case StreamType.threadNames: return "ThreadNames"
        case StreamType.crashpadInfo: return "CrashpadInfo"
        case StreamType.linuxCmdLine: return "LinuxCmdLine"
        case StreamType.linuxEnviron: return "LinuxEnviron"
        case StreamType.linuxMaps: return "LinuxMaps"
        default: return "0x" + String(type, radix: 16)
        }
    }

    /// Where a list's entries start: right after its count, or after 4 bytes of padding as some writers
    /// (dbghelp) put there. Anything else means the count does not describe the stream.
    func listEntries(_ body: Range<Int>, count: UInt32, entrySize: Int, countSize: Int = 4, _ what: String)
        throws(MinidumpError) -> Range<Int>
    {
        let (size, overflow) = Int(count).multipliedReportingOverflow(by: entrySize)
        let available = body.count - countSize
        guard !overflow, size <= available else {
            throw MinidumpError(
                .malformed, "\(what) lists \(count) entries, more than its \(body.count)-byte stream holds")
        }
        let start = body.lowerBound + countSize + (available == size + 4 ? 4 : 0)
        return start..<(start + size)
    }

    func readSystemInfo(_ body: Range<Int>) throws(MinidumpError) -> SystemInfo {
        guard body.count >= 32 else {
            throw MinidumpError(.truncated, "SystemInfo has \(body.count) bytes, fewer than 32")
        }
        let at = body.lowerBound
        let csd = file.u32(at + 24)
        return SystemInfo(
            processorArchitecture: file.u16(at), processorCount: file.bytes[at + 6], platformID: file.u32(at + 20),
            majorVersion: file.u32(at + 8), minorVersion: file.u32(at + 12), buildNumber: file.u32(at + 16),
            osVersion: csd == 0 ? nil : try file.utf16String(at: csd, "SystemInfo's OS version"))
    }

    func readException(_ body: Range<Int>) throws(MinidumpError) -> Exception {
        guard body.count >= 168 else {
            throw MinidumpError(.truncated, "the Exception stream has \(body.count) bytes, fewer than 168")
        }
        let at = body.lowerBound
        let parameterCount = min(Int(file.u32(at + 32)), 15)
        let context = Location(size: file.u32(at + 160), rva: file.u32(at + 164))
        return Exception(
            threadID: file.u32(at), code: file.u32(at + 8), flags: file.u32(at + 12), address: file.u64(at + 24),
            parameters: (0..<parameterCount).map { file.u64(at + 40 + 8 * $0) },
            context: try readContext(context, "the Exception stream's context"))
    }

    func readThreads(_ body: Range<Int>) throws(MinidumpError) -> [Thread] {
        let count = try file.u32(at: UInt64(body.lowerBound), "ThreadList's count")
        let entries = try listEntries(body, count: count, entrySize: 48, "ThreadList")
        var threads: [Thread] = []
        threads.reserveCapacity(Int(count))
        for at in stride(from: entries.lowerBound, to: entries.upperBound, by: 48) {
            let id = file.u32(at)
            let stack = Location(size: file.u32(at + 32), rva: file.u32(at + 36))
            _ = try file.range(UInt64(stack.rva), UInt64(stack.size), "thread \(id)'s stack")
            let context = Location(size: file.u32(at + 40), rva: file.u32(at + 44))
            threads.append(
                Thread(
                    id: id, stackStart: file.u64(at + 24), stack: stack,
                    context: try readContext(context, "thread \(id)'s context")))
        }
        return threads
    }

    func readThreadNames(_ body: Range<Int>) throws(MinidumpError) -> [UInt32: String] {
        let count = try file.u32(at: UInt64(body.lowerBound), "ThreadNames' count")
        let entries = try listEntries(body, count: count, entrySize: 12, "ThreadNames")
        var names: [UInt32: String] = [:]
        for at in stride(from: entries.lowerBound, to: entries.upperBound, by: 12) {
            let id = file.u32(at)
            let rva = file.u64(at + 4)
            guard let rva32 = UInt32(exactly: rva) else {
                throw MinidumpError(.truncated, "thread \(id)'s name at offset \(rva) is past any minidump's end")
            }
            names[id] = try file.utf16String(at: rva32, "thread \(id)'s name")
        }
        return names
    }

    func readMemoryList(_ body: Range<Int>) throws(MinidumpError) -> [MemoryRange] {
        let count = try file.u32(at: UInt64(body.lowerBound), "MemoryList's count")
        let entries = try listEntries(body, count: count, entrySize: 16, "MemoryList")
        var ranges: [MemoryRange] = []
        ranges.reserveCapacity(Int(count))
        for at in stride(from: entries.lowerBound, to: entries.upperBound, by: 16) {
            let start = file.u64(at)
            let size = UInt64(file.u32(at + 8))
            let rva = UInt64(file.u32(at + 12))
            _ = try file.range(rva, size, "the memory at 0x\(String(start, radix: 16))")
            ranges.append(MemoryRange(start: start, size: size, fileOffset: rva))
        }
        return ranges
    }

    func readMemory64List(_ body: Range<Int>) throws(MinidumpError) -> [MemoryRange] {
        guard body.count >= 16 else {
            throw MinidumpError(.truncated, "Memory64List has \(body.count) bytes, fewer than 16")
        }
        let count = file.u64(body.lowerBound)
        guard let count32 = UInt32(exactly: count) else {
            throw MinidumpError(.malformed, "Memory64List lists \(count) entries, more than its stream holds")
        }
        var offset = file.u64(body.lowerBound + 8)
        let entries = try listEntries(body, count: count32, entrySize: 16, countSize: 16, "Memory64List")
        var ranges: [MemoryRange] = []
        ranges.reserveCapacity(Int(count32))
        for at in stride(from: entries.lowerBound, to: entries.upperBound, by: 16) {
            let start = file.u64(at)
            let size = file.u64(at + 8)
            let range = try file.range(offset, size, "the memory at 0x\(String(start, radix: 16))")
            ranges.append(MemoryRange(start: start, size: size, fileOffset: offset))
            offset = UInt64(range.upperBound)
        }
        return ranges
    }

    func readModules(_ body: Range<Int>) throws(MinidumpError) -> [Module] {
        let count = try file.u32(at: UInt64(body.lowerBound), "ModuleList's count")
        let entries = try listEntries(body, count: count, entrySize: 108, "ModuleList")
        var modules: [Module] = []
        modules.reserveCapacity(Int(count))
        for (index, at) in stride(from: entries.lowerBound, to: entries.upperBound, by: 108).enumerated() {
            let name = try file.utf16String(at: file.u32(at + 20), "module \(index)'s name")
            let codeView = Location(size: file.u32(at + 76), rva: file.u32(at + 80))
            modules.append(
                Module(
                    base: file.u64(at), size: file.u32(at + 8), name: name,
                    codeView: try readCodeView(codeView, "module \(index)'s CodeView record")))
        }
        return modules
    }

    func readCodeView(_ location: Location, _ what: String) throws(MinidumpError) -> CodeView? {
        guard location.size > 0 else { return nil }
        let body = try file.range(UInt64(location.rva), UInt64(location.size), what)
        guard body.count >= 4 else { throw MinidumpError(.truncated, "\(what) has \(body.count) bytes, no signature") }
        let signature = file.u32(body.lowerBound)
        switch signature {
        case 0x4270_454C:  // "BpEL" (the bytes read "LEpB")
            return .elf(buildID: Array(file.bytes[(body.lowerBound + 4)..<body.upperBound].prefix(64)))
        case 0x5344_5352:  // "RSDS"
            guard body.count >= 24 else {
                throw MinidumpError(.truncated, "\(what) (RSDS) has \(body.count) bytes, fewer than 24")
            }
            let guid = Array(file.bytes[(body.lowerBound + 4)..<(body.lowerBound + 20)])
            let name = MinidumpBytes.text(file.bytes[(body.lowerBound + 24)..<body.upperBound])
            return .pdb70(guid: guid, age: file.u32(body.lowerBound + 20), fileName: name)
        default:
            return .other(signature: signature)
        }
    }

    /// NUL-separated strings (`/proc/PID/cmdline`, `/proc/PID/environ`); a trailing NUL ends the last one.
    static func nulSeparated(_ bytes: ArraySlice<UInt8>) -> [String] {
        var parts = bytes.split(separator: 0, omittingEmptySubsequences: false).map {
            String(decoding: $0, as: UTF8.self)
        }
        if parts.last == "" { parts.removeLast() }
        return parts
    }
}
