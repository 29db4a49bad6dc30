import FaultlineCore
import Logging
import ServiceLifecycle

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Re-renders the static dashboard shortly after data changes (debounced).
///
/// Anyone who changes data calls `notify()` (cheap, never blocks). The service waits for a change, lets
/// `debounce` pass so that a burst of ingest turns into one render, then renders what changed since the last
/// render began. The first render after start is a full one. Changes that arrive while a render runs trigger
/// one more render afterwards, so the site never misses the last change.
public struct RenderScheduler: Service {
    /// Renders pages changed at or after `since` (nil: everything); returns how many pages were written.
    public typealias Render = @Sendable (_ since: Date?) async throws -> Int

    let render: Render
    let clock: any WallClock
    let debounce: Duration
    let logger: Logger
    let telemetry: Telemetry?
    let stream: AsyncStream<Void>
    let continuation: AsyncStream<Void>.Continuation

    public init(render: @escaping Render, clock: any WallClock, debounce: Duration = .seconds(2), logger: Logger,
                telemetry: Telemetry? = nil) {
        self.render = render
        self.clock = clock
        self.debounce = debounce
        self.logger = logger
        self.telemetry = telemetry
        (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Says that data changed; a render follows within about `debounce`.
    public func notify() {
        continuation.yield()
    }

    /// Renders once; returns the time the render started (the `since` of the next incremental render).
    @discardableResult
    public func renderNow(since: Date?) async throws -> Date {
        let started = clock.now()
        let timer = ContinuousClock().now
        let pages = try await render(since)
        let elapsed = ContinuousClock().now - timer
        telemetry?.recordDuration(Telemetry.Name.renderDuration, nanoseconds: elapsed.nanoseconds, [("mode", since == nil ? "full" : "incremental")])
        telemetry?.count(Telemetry.Name.renderPages, by: pages)
        logger.debug("rendered dashboard", metadata: [Telemetry.LogKey.pages: "\(pages)"])
        return started
    }

    /// The storage-pressure state: while the disk is full, steps pause; a disk-full error enters it (logged once
    /// there, not per step). Nil: never paused.
    public var storage: DiskGuard?

    public func run() async throws {
        await cancelWhenGracefulShutdown { await self.loop() }
    }

    func loop() async {
        var last: Date?
        await storage?.waitWhileFull()
        do {
            last = try await renderNow(since: nil)
        } catch where Task.isCancelled {
            return  // graceful shutdown cancelled the render: not a failure
        } catch let error where storage?.noteFailure(error) == true {
            // The disk is full: logged once by the state; the next change renders everything since start.
        } catch {
            logger.error("dashboard render failed", metadata: [Telemetry.LogKey.error: "\(error)"])
        }
        do {
            for await _ in stream {
                try? await Task.sleep(for: debounce)
                if Task.isCancelled { break }
                // Paused while the disk is full; the changes since `last` are rendered when space returns.
                await storage?.waitWhileFull()
                do {
                    // A second of overlap: rows changed in the same millisecond as the last start are not missed.
                    last = try await renderNow(since: last.map { $0.addingTimeInterval(-1) })
                } catch where Task.isCancelled {
                    break  // graceful shutdown cancelled the render: not a failure
                } catch let error where storage?.noteFailure(error) == true {
                    // The disk is full: logged once by the state; rendered again after the next change.
                } catch {
                    logger.error("dashboard render failed", metadata: [Telemetry.LogKey.error: "\(error)"])
                }
            }
        }
    }
}
