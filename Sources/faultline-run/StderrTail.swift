import Synchronization

/// The last lines a child wrote to its standard error, bounded in lines and bytes.
///
/// The launcher copies the child's standard error through as it comes and keeps only this much, for the
/// crash report (`crash_message` and, for programs without a crash file, breadcrumbs). A line longer than
/// the byte bound keeps its end: the end of a long message is the part that says why the program died.
struct StderrTail: Sendable {
    let maxLines: Int
    let maxBytes: Int
    private(set) var lines: [[UInt8]] = []
    /// The line being written (no newline yet).
    private(set) var partial: [UInt8] = []
    private var bytes = 0

    init(maxLines: Int = 64, maxBytes: Int = 16 * 1024) {
        self.maxLines = max(1, maxLines)
        self.maxBytes = max(1, maxBytes)
    }

    /// Adds what the child wrote; `chunk` may hold parts of lines.
    mutating func append<C: Collection<UInt8>>(_ chunk: C) {
        var rest = chunk[...]
        while let newline = rest.firstIndex(of: 0x0A) {
            partial.append(contentsOf: rest[..<newline])
            finishLine()
            rest = rest[rest.index(after: newline)...]
        }
        partial.append(contentsOf: rest)
        if partial.count > maxBytes { partial.removeFirst(partial.count - maxBytes) }
    }

    private mutating func finishLine() {
        var line = partial
        partial = []
        if line.last == 0x0D { line.removeLast() }
        if line.count > maxBytes { line.removeFirst(line.count - maxBytes) }
        lines.append(line)
        bytes += line.count
        while lines.count > maxLines || (bytes > maxBytes && lines.count > 1) {
            bytes -= lines.removeFirst().count
        }
    }

    /// The kept lines, oldest first, the unfinished one last; invalid UTF-8 repaired.
    var text: [String] {
        var all = lines
        if !partial.isEmpty { all.append(partial) }
        var kept: [String] = []
        var total = 0
        // The unfinished line counts against the bounds too: drop from the oldest.
        for line in all.reversed() {
            guard kept.count < maxLines, total + line.count <= maxBytes || kept.isEmpty else { break }
            kept.append(String(decoding: line, as: UTF8.self))
            total += line.count
        }
        return kept.reversed()
    }
}

/// A ``StderrTail`` shared by the thread that copies the pipe and the one that reports.
final class SharedStderrTail: Sendable {
    private let tail: Mutex<StderrTail>

    init(_ tail: StderrTail = StderrTail()) { self.tail = Mutex(tail) }

    func append(_ chunk: UnsafeRawBufferPointer) { tail.withLock { $0.append(chunk) } }
    var lines: [String] { tail.withLock { $0.text } }
}
