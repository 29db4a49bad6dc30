import CLibdw
import FaultlineCore

#if canImport(Glibc)
import Glibc
#endif

/// Finds a module's ELF file on this machine by its build-id, for tools and tests that walk dumps written here (the
/// benchmark, the walker's tests). The server never uses it: its files come from the debug-file store, by build-id.
///
/// Crashpad names the main executable by its full path but libraries by their file name (`libc.so.6`), so a module is
/// looked for at its path, then by its file name in `directories`; a candidate is kept only if its build-id is the
/// module's (a same-named file of another build would walk with the wrong CFI).
public enum LocalELFFiles {
    /// The usual library folders of Debian and Ubuntu on x86-64 and arm64.
    public static let systemDirectories = [
        "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
        "/lib64", "/usr/lib64", "/lib", "/usr/lib",
    ]

    /// The local file of `module`, or nil when none has its build-id (or the module has none).
    public static func find(_ module: ProcessSnapshot.Module, in directories: [String] = systemDirectories) -> String? {
        guard let wanted = module.buildID else { return nil }
        let name = module.path.split(separator: "/").last.map(String.init) ?? module.path
        let candidates = [module.path] + (name.isEmpty || name == ".." ? [] : directories.map { $0 + "/" + name })
        return candidates.first { buildID(ofFile: $0) == wanted }
    }

    /// The GNU build-id of the ELF file at `path`, or nil when it cannot be read or has none.
    public static func buildID(ofFile path: String) -> BuildID? {
        elf_version(UInt32(EV_CURRENT))
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        guard let elf = elf_begin(fd, ELF_C_READ_MMAP, nil) else { return nil }
        defer { elf_end(elf) }
        var bytes: UnsafeRawPointer?
        let count = dwelf_elf_gnu_build_id(elf, &bytes)
        guard count > 0, let bytes else { return nil }
        return BuildID(bytes: UnsafeRawBufferPointer(start: bytes, count: Int(count)))
    }
}
