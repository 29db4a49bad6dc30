#if canImport(Glibc)
import Glibc
#endif

/// Caps glibc's malloc arenas for `faultline serve` at one per core (at least two), unless the operator set
/// `MALLOC_ARENA_MAX` themselves.
///
/// glibc gives each thread that meets a busy arena a new one, up to eight per core, and keeps what each arena once
/// held. The server's threads come and go with the load (GRDB's dispatch queues, NIO, the concurrency pool), so a
/// soak showed the heap growing with every new thread (`docs/performance.md`): 29 → 41 MiB in 16 minutes with 16
/// arenas possible on two cores, less than half that growth with two. Threads that run at once are bounded by the
/// cores, so one arena per core keeps contention where it was.
enum MallocArenas {
    /// glibc's `M_ARENA_MAX` parameter of `mallopt` (malloc.h; the Glibc module does not export `mallopt`).
    private static let arenaMaxParameter: Int32 = -8

    /// Applies the cap; returns the number of arenas set, or nil when left alone (`MALLOC_ARENA_MAX` set, or not glibc).
    @discardableResult
    static func limit() -> Int? {
        #if canImport(Glibc)
        let cores = Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        guard getenv("MALLOC_ARENA_MAX") == nil,
            let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt")  // RTLD_DEFAULT
        else { return nil }
        let mallopt = unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32) -> Int32).self)
        let arenas = Int32(clamping: max(2, cores))
        return mallopt(arenaMaxParameter, arenas) == 1 ? Int(arenas) : nil
        #else
        return nil
        #endif
    }
}
