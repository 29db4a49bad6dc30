import FaultlineCore

extension Minidump {
    /// Platforms whose exception codes are POSIX signals: Linux and Android.
    static let signalPlatforms: Set<UInt32> = [0x8201, 0x8203]

    /// The process state a stack walker reads: threads with DWARF-numbered registers (the crashing thread
    /// first, with the Exception stream's context), the captured memory sorted and without overlaps, the
    /// modules sorted by base, and the exception as a signal.
    ///
    /// Threads whose context is missing or of another CPU are left out. Memory from the memory lists and the
    /// thread stacks is merged by address; where two ranges overlap, the one listed first keeps its bytes.
    /// - Throws: `MinidumpError.unsupported` for a dump of another platform than Linux/Android or another
    ///   CPU than x86-64/arm64, `.tooLarge` when the ranges name more memory than the file holds.
    public func snapshot() throws(MinidumpError) -> ProcessSnapshot {
        if let platform = systemInfo?.platformID, !Self.signalPlatforms.contains(platform) {
            throw MinidumpError(
                .unsupported,
                "platform 0x\(String(platform, radix: 16)) is not Linux or Android; only their dumps are walked")
        }
        let architecture =
            systemInfo.map(\.architecture)
            ?? (exception?.context ?? threads.lazy.compactMap(\.context).first)?.architecture
        guard let architecture else {
            let cpu =
                systemInfo.map { "CPU architecture \($0.processorArchitecture)" }
                ?? "a dump without SystemInfo or CPU context"
            throw MinidumpError(.unsupported, "\(cpu) is not x86-64 or arm64")
        }
        return ProcessSnapshot(
            architecture: architecture, threads: snapshotThreads(architecture), memory: try snapshotMemory(),
            modules: modules.map {
                ProcessSnapshot.Module(path: $0.name, base: $0.base, size: UInt64($0.size), buildID: $0.buildID)
            }.sorted { $0.base < $1.base },
            exception: exception.map {
                ProcessSnapshot.Exception(
                    signal: Int32(bitPattern: $0.code), code: Int32(bitPattern: $0.flags), faultAddress: $0.address,
                    threadID: UInt64($0.threadID))
            })
    }

    /// The crashing thread first, with the crash context (or, without one, its thread-list context), then
    /// the others in thread-list order.
    func snapshotThreads(_ architecture: ProcessSnapshot.Architecture) -> [ProcessSnapshot.Thread] {
        func thread(_ id: UInt32, _ context: CPUContext?, crashed: Bool) -> ProcessSnapshot.Thread? {
            guard let context, context.architecture == architecture else { return nil }
            return ProcessSnapshot.Thread(
                id: UInt64(id), name: threadNames[id], crashed: crashed, registers: context.registers, pc: context.pc,
                sp: context.sp)
        }
        var out: [ProcessSnapshot.Thread] = []
        let crashedID = exception?.threadID
        if let exception {
            let listed = threads.first { $0.id == exception.threadID }?.context
            if let crashed = thread(exception.threadID, exception.context ?? listed, crashed: true) {
                out.append(crashed)
            }
        }
        for listed in threads where listed.id != crashedID {
            if let other = thread(listed.id, listed.context, crashed: false) { out.append(other) }
        }
        return out
    }

    /// The memory lists and thread stacks, merged by address into sorted, non-overlapping regions.
    func snapshotMemory() throws(MinidumpError) -> [ProcessSnapshot.MemoryRegion] {
        var candidates = memoryRanges
        for thread in threads where thread.stack.size > 0 {
            candidates.append(
                MemoryRange(
                    start: thread.stackStart, size: UInt64(thread.stack.size), fileOffset: UInt64(thread.stack.rva)))
        }
        // A stable sort: at one start address the memory lists (listed first) win over thread stacks.
        let ordered = candidates.enumerated().sorted { ($0.element.start, $0.offset) < ($1.element.start, $1.offset) }
        var regions: [ProcessSnapshot.MemoryRegion] = []
        var covered: UInt64 = 0  // Addresses below this are taken.
        var anyTaken = false
        var total = 0
        for (_, range) in ordered where range.size > 0 {
            // Clip a range that runs past the top of the address space.
            let end = range.start.addingReportingOverflow(range.size).overflow ? UInt64.max : range.start + range.size
            let start = anyTaken ? max(range.start, covered) : range.start
            guard start < end else { continue }
            let skip = start - range.start
            let count = Int(end - start)
            total += count
            guard total <= file.count else {
                throw MinidumpError(
                    .tooLarge, "the memory ranges name more bytes than the \(file.count)-byte file holds")
            }
            let from = Int(range.fileOffset + skip)
            regions.append(ProcessSnapshot.MemoryRegion(start: start, bytes: Array(file.bytes[from..<(from + count)])))
            covered = end
            anyTaken = true
        }
        return regions
    }
}
