import ArgumentParser

#if canImport(Glibc)
import Glibc
#endif

/// Reads `FAULTLINE_*` environment variables, the fallback for every command-line option. A variable that is
/// set but does not parse is an error naming it (never a silent fallback to the default).
struct Environment: Sendable {
    /// The variables (tests pass their own).
    var values: [String: String]

    init(_ values: [String: String]) { self.values = values }

    /// The process's environment.
    static var current: Environment {
        var values: [String: String] = [:]
        var entry: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?> = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if let equals = text.firstIndex(of: "="), text.hasPrefix("FAULTLINE_") {
                values[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            entry = entry.advanced(by: 1)
        }
        return Environment(values)
    }

    /// The value, nil when unset or empty.
    func string(_ name: String) -> String? {
        guard let value = values[name], !value.isEmpty else { return nil }
        return value
    }

    /// An integer in `range`, nil when unset.
    func int(_ name: String, in range: ClosedRange<Int>) throws -> Int? {
        guard let text = string(name) else { return nil }
        guard let value = Int(text.trimmingSpaces), range.contains(value) else {
            throw ValidationError(
                "\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound), not \"\(text)\"")
        }
        return value
    }

    /// A number in `range`, nil when unset.
    func double(_ name: String, in range: ClosedRange<Double>) throws -> Double? {
        guard let text = string(name) else { return nil }
        guard let value = Double(text.trimmingSpaces), value.isFinite, range.contains(value) else {
            throw ValidationError(
                "\(name) must be a number from \(range.lowerBound) to \(range.upperBound), not \"\(text)\"")
        }
        return value
    }

    /// `1`/`true`/`yes`/`on` or `0`/`false`/`no`/`off`; nil when unset.
    func bool(_ name: String) throws -> Bool? {
        guard let text = string(name) else { return nil }
        switch text.trimmingSpaces.lowercased() {
        case "1", "true", "yes", "on": return true
        case "0", "false", "no", "off": return false
        default: throw ValidationError("\(name) must be 1 or 0 (true/false, yes/no, on/off), not \"\(text)\"")
        }
    }

    /// One of `choices`; nil when unset.
    func choice(_ name: String, _ choices: [String]) throws -> String? {
        guard let text = string(name) else { return nil }
        guard choices.contains(text) else {
            throw ValidationError("\(name) must be \(choices.joined(separator: ", ")), not \"\(text)\"")
        }
        return text
    }

    /// An `http://` or `https://` URL; nil when unset.
    func url(_ name: String) throws -> String? {
        guard let text = string(name) else { return nil }
        guard text.hasPrefix("http://") || text.hasPrefix("https://") else {
            throw ValidationError("\(name) must start with http:// or https://, not \"\(text)\"")
        }
        return text
    }

    /// Shorthand for the process's environment (the data folder, read before any validation).
    static func string(_ name: String) -> String? { current.string(name) }
}

extension String {
    fileprivate var trimmingSpaces: Substring {
        var text = Substring(self)
        while text.first == " " { text = text.dropFirst() }
        while text.last == " " { text = text.dropLast() }
        return text
    }
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
