#if canImport(Glibc)
import Glibc
#endif

/// Reads `FAULTLINE_*` environment variables, the fallback for every command-line option.
enum Environment {
    static func string(_ name: String) -> String? {
        guard let raw = getenv(name) else { return nil }
        let value = String(cString: raw)
        return value.isEmpty ? nil : value
    }

    static func int(_ name: String) -> Int? { string(name).flatMap { Int($0) } }
}

/// Unbuffered writes to standard output or error: lines that other programs wait for must not sit
/// in a stdio buffer when the output is a pipe.
enum Console {
    static func write(_ text: String, fd: Int32 = 1) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n <= 0 { return }
            offset += n
        }
    }
}
