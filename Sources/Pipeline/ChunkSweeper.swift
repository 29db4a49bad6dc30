import FaultlineCore
import Logging
import ServiceLifecycle

/// Removes sentry-cli chunks nobody assembled (an interrupted upload, a file that failed) once they are
/// older than the chunk lifetime, every `interval`.
public struct ChunkSweeper: Service {
    let uploads: ChunkUploadService
    let clock: any WallClock
    let logger: Logger
    let interval: Duration

    public init(uploads: ChunkUploadService, clock: any WallClock, logger: Logger, interval: Duration = .seconds(3600))
    {
        self.uploads = uploads
        self.clock = clock
        self.logger = logger
        self.interval = interval
    }

    public func run() async throws {
        // Cancelled at graceful shutdown, so the sleep between sweeps never delays SIGTERM.
        await cancelWhenGracefulShutdown { await self.loop() }
    }

    func loop() async {
        while !Task.isCancelled {
            do {
                let removed = try uploads.sweep(now: clock.now())
                if removed > 0 {
                    logger.info("unused chunks removed", metadata: [Telemetry.LogKey.chunks: "\(removed)"])
                }
            } catch {
                logger.error("chunk sweep failed", metadata: [Telemetry.LogKey.error: "\(error)"])
            }
            try? await Task.sleep(for: interval)
        }
    }
}
