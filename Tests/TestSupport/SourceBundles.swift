import Foundation

/// Real Sentry source bundles, made by the real `sentry-cli debug-files bundle-sources` (3.8.2, installed by tools/test)
/// from real `gcc -g` programs, and hostile ones made with Python's `zipfile` (a second, independent ZIP writer).
public enum SourceBundles {
    /// The sentry-cli on PATH, or nil.
    public static var sentryCLI: String? {
        guard let found = try? Command.run("sh", ["-c", "command -v sentry-cli"]), found.status == 0 else { return nil }
        let path = found.out.trimmingCharacters(in: .whitespacesAndNewlines)
        return path.isEmpty ? nil : path
    }

    /// sentry-cli's environment for tests: no update check, no configuration from elsewhere.
    public static let quiet = [
        "SENTRY_DISABLE_UPDATE_CHECK": "true", "SENTRY_LOAD_DOTENV": "0", "SENTRY_ORG": "", "SENTRY_PROJECT": "",
    ]

    /// `sentry-cli debug-files bundle-sources BINARY` in the binary's folder; returns the bundle's path (`NAME.src.zip`).
    public static func bundle(_ binary: String) throws -> String {
        guard let tool = sentryCLI else {
            throw CommandError(description: "sentry-cli is not installed (tools/test installs it)")
        }
        let folder = (binary as NSString).deletingLastPathComponent
        let result = try Command.run(tool, ["debug-files", "bundle-sources", binary], in: folder, environment: quiet)
        guard result.status == 0 else {
            throw CommandError(description: "bundle-sources failed: \(result.out)\(result.err)")
        }
        let path = binary + ".src.zip"
        guard FileManager.default.fileExists(atPath: path) else {
            throw CommandError(description: "bundle-sources wrote no \(path): \(result.out)\(result.err)")
        }
        return path
    }

    /// A `SYSB` version-2 bundle written by Python's `zipfile`: `entries` are (name, bytes, deflate?), written in
    /// order; returns its bytes.
    public static func python(_ entries: [(String, [UInt8], Bool)], in folder: TempFolder) throws -> [UInt8] {
        var script = "import zipfile, io, sys\nbuf = io.BytesIO()\nz = zipfile.ZipFile(buf, 'w')\n"
        for (index, entry) in entries.enumerated() {
            let data = folder.file("entry\(index)")
            FileManager.default.createFile(atPath: data, contents: Data(entry.1))
            script +=
                "z.write(\(pythonString(data)), \(pythonString(entry.0)), compress_type=zipfile.\(entry.2 ? "ZIP_DEFLATED" : "ZIP_STORED"))\n"
        }
        script += "z.close()\nsys.stdout.buffer.write(b'SYSB\\x02\\x00\\x00\\x00' + buf.getvalue())\n"
        let scriptPath = try folder.write("make.py", script)
        let out = folder.file("bundle.bin")
        try Command.check("sh", ["-c", "python3 \(scriptPath) > \(out)"])
        return Array(try Data(contentsOf: URL(fileURLWithPath: out)))
    }

    static func pythonString(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
    }
}
