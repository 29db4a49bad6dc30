import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Copies the child's standard error to the launcher's own as it comes, on a thread of its own, keeping the
/// last lines in a ``SharedStderrTail``.
///
/// The copy must never hold the child back (a full pipe would block its writes), so the thread only reads,
/// writes and appends. When the child has ended, ``finish()`` takes what is still in the pipe and stops
/// without waiting for end-of-file: a grandchild the program left behind may keep the pipe open forever.
final class StderrCopier: Sendable {
    let tail = SharedStderrTail()
    private let fd: Int32
    /// Written once by ``finish()`` to wake the copying thread's `poll` at once.
    private let wake: (read: Int32, write: Int32)
    private let stopping = Atomic<Bool>(false)
    private let thread: Mutex<pthread_t?> = Mutex(nil)

    init(fd: Int32) {
        self.fd = fd
        var fds: [Int32] = [-1, -1]
        if pipe(&fds) == 0 {
            for end in fds { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
            wake = (fds[0], fds[1])
        } else {
            wake = (-1, -1)  // then the poll's 50 ms timeout notices the stop
        }
    }

    func start() {
        let box = Unmanaged.passRetained(self)
        var thread = pthread_t()
        let result = pthread_create(
            &thread, nil,
            { raw in
                let copier = Unmanaged<StderrCopier>.fromOpaque(raw!).takeRetainedValue()
                copier.copy()
                return nil
            }, box.toOpaque())
        if result == 0 {
            self.thread.withLock { $0 = thread }
        } else {
            box.release()
            copy()  // no thread: the pipe is read now and then at finish, losing nothing but live output
        }
    }

    /// Stops after what the pipe holds now (bounded, so a chatty grandchild cannot hold the launcher).
    func finish() {
        stopping.store(true, ordering: .releasing)
        if wake.write >= 0 {
            var byte: UInt8 = 1
            _ = write(wake.write, &byte, 1)
        }
        if let thread = self.thread.withLock({ $0 }) { pthread_join(thread, nil) }
        close(fd)
        if wake.read >= 0 {
            close(wake.read)
            close(wake.write)
        }
    }

    private func copy() {
        let size = 64 * 1024
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 1)
        defer { buffer.deallocate() }
        var ownStderrOpen = true
        var drainBudget = 4 << 20  // bytes still copied once the child has ended
        while true {
            let stopping = self.stopping.load(ordering: .acquiring)
            // Once stopping, only what is in the pipe now: no waiting.
            var pollers = [
                pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
                pollfd(fd: stopping ? -1 : wake.read, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&pollers, 2, stopping ? 0 : 50)
            if ready < 0 {
                if errno == EINTR { continue }
                return
            }
            if pollers[0].revents == 0 {
                if stopping { return }
                continue  // a timeout, or the wake-up: the next round sees `stopping`
            }
            let count = read(fd, buffer.baseAddress, size)
            if count == 0 { return }  // every writer closed it
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                return
            }
            let chunk = UnsafeRawBufferPointer(rebasing: buffer[0..<count])
            if ownStderrOpen { ownStderrOpen = writeAll(chunk) }
            tail.append(chunk)
            if stopping {
                drainBudget -= count
                if drainBudget <= 0 { return }
            }
        }
    }

    /// Writes to the launcher's standard error; false once it is gone (closed, a full disk).
    private func writeAll(_ chunk: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while offset < chunk.count {
            let written = write(2, chunk.baseAddress! + offset, chunk.count - offset)
            if written > 0 {
                offset += written
            } else if written < 0, errno == EINTR {
                continue
            } else if written < 0, errno == EAGAIN {
                var poller = pollfd(fd: 2, events: Int16(POLLOUT), revents: 0)
                if poll(&poller, 1, 1000) <= 0 { return false }
            } else {
                return false
            }
        }
        return true
    }
}
