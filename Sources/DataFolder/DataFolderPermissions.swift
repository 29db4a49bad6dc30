#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Keeps a data folder private to the user running the server: the folder and its top-level folders
/// `0700`, the SQLite database and its WAL and shared-memory files `0600`. Crash reports, symbols and
/// credential hashes live there; other local users must not read them.
///
/// `faultline serve` also sets the umask to `077`, so what it creates later is private too; this puts an
/// older folder (created `0755`/`0644`) right on every start.
public enum DataFolderPermissions {
    public static let folderMode: mode_t = 0o700
    public static let fileMode: mode_t = 0o600
    /// The folders under the data folder.
    public static let subfolders = ["site", "debug-files", "chunks"]
    /// The database files (SQLite in WAL mode).
    public static let databaseFiles = ["faultline.sqlite", "faultline.sqlite-wal", "faultline.sqlite-shm"]

    /// Restricts what exists of the folder, its subfolders and database files; what is missing is skipped.
    /// - Throws: `DataFolderPermissionError` when a `chmod` of an existing path fails.
    public static func restrict(folder: String) throws {
        try change(folder, to: folderMode)
        for name in subfolders { try change(folder + "/" + name, to: folderMode) }
        for name in databaseFiles { try change(folder + "/" + name, to: fileMode) }
    }

    static func change(_ path: String, to mode: mode_t) throws {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }  // missing: nothing to restrict
        // A symlink is left alone (chmod would follow it to somewhere else).
        if (info.st_mode & 0o170000) == 0o120000 { return }
        if info.st_mode & 0o777 == mode { return }
        guard chmod(path, mode) == 0 else { throw DataFolderPermissionError(path: path, errno: errno) }
    }
}

/// A `chmod` of the data folder failed.
public struct DataFolderPermissionError: Error, CustomStringConvertible {
    public let path: String
    public let errno: Int32
    public var description: String { "could not make \(path) private (chmod failed, errno \(errno))" }
}
