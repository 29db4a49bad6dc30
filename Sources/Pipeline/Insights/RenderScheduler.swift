import FaultlineCore
import Logging
import ServiceLifecycle
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Re-renders the static dashboard shortly after data changes (debounced).
///
/// Anyone who changes data calls `notify()` (cheap, never blocks). The service waits for a change, lets
/// `debounce` pass so that a burst of ingest turns into one render (and, while the worker works off a backlog, waits
/// for it a little longer: `holdWhile`), then renders: the summary pages every time,
/// then the issue pages changed since the last cycle that finished its issue pages. The first render after start
/// is a full one. Changes that arrive while a render runs trigger one more render afterwards, so the site never
/// misses the last change; an incremental render leaves its remaining issue pages to that next render (which
/// renders the summary pages first again), and readers asking for an issue page get it rendered on request.
public struct RenderScheduler: Service {
    /// What one render did.
    public struct Outcome: Sendable, Equatable {
        /// Files written.
        public var pages: Int
        /// False when issue pages were left to a later render (newer data arrived).
        public var complete: Bool
        public init(pages: Int, complete: Bool) {
            self.pages = pages
            self.complete = complete
        }
    }

    /// Renders the summary pages and the issue pages changed at or after `since` (nil: everything); `stop` answers
    /// true when the render is to leave its remaining issue pages to a later one (`Outcome.complete` false).
    public typealias Render = @Sendable (_ since: Date?, _ stop: @escaping @Sendable () -> Bool) async throws -> Outcome

    let render: Render
    let clock: any WallClock
    let debounce: Duration
    let logger: Logger
    let telemetry: Telemetry?
    let stream: AsyncStream<Void>
    /// A change arrived since the current render began.
    let changed: ChangeFlag
    let changes: Changes

    /// Where changes are told, made before the scheduler: the services that announce changes can then be built
    /// first, whatever the scheduler reads of them (`holdWhile`). One scheduler listens to one `Changes`.
    public struct Changes: Sendable {
        let stream: AsyncStream<Void>
        let continuation: AsyncStream<Void>.Continuation
        let flag = ChangeFlag()

        public init() {
            (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        }

        /// Says that data changed (cheap, never blocks); a render follows within about the scheduler's `debounce`.
        public func notify() {
            flag.set()
            continuation.yield()
        }
    }

    /// - Parameters:
    ///   - changes: where changes are told (`notify()` tells the same).
    ///   - storage: the storage-pressure state renders pause under (nil: never paused).
    ///   - holdWhile: whether more changes are on their way (see `holdWhile`; default: never).
    ///   - holdAtMost: the longest a render waits for `holdWhile`.
    public init(
        changes: Changes = Changes(), render: @escaping Render, clock: any WallClock,
        debounce: Duration = .milliseconds(250),
        logger: Logger, telemetry: Telemetry? = nil, storage: DiskGuard? = nil,
        holdWhile: @escaping @Sendable () -> Bool = { false }, holdAtMost: Duration = .seconds(2)
    ) {
        self.changes = changes
        stream = changes.stream
        changed = changes.flag
        self.storage = storage
        self.holdWhile = holdWhile
        self.holdAtMost = holdAtMost
        self.render = render
        self.clock = clock
        self.debounce = debounce
        self.logger = logger
        self.telemetry = telemetry
    }

    /// Says that data changed; a render follows within about `debounce`.
    public func notify() {
        changes.notify()
    }

    /// Renders once; returns the time the render started (the `since` of the next incremental render), or nil
    /// when the render left issue pages to a later one (the next render starts from the same `since` again).
    @discardableResult
    public func renderNow(since: Date?) async throws -> Date? {
        let started = clock.now()
        changed.clear()
        let timer = ContinuousClock().now
        let outcome = try await render(since, stopCondition(full: since == nil))
        let elapsed = ContinuousClock().now - timer
        telemetry?.recordDuration(
            Telemetry.Name.renderDuration, nanoseconds: elapsed.nanoseconds,
            [("mode", since == nil ? "full" : "incremental")])
        telemetry?.count(Telemetry.Name.renderPages, by: outcome.pages)
        logger.debug("rendered dashboard", metadata: [Telemetry.LogKey.pages: "\(outcome.pages)"])
        return outcome.complete ? started : nil
    }

    /// The storage-pressure state: while the disk is full, steps pause; a disk-full error enters it (logged once
    /// there, not per step). Nil: never paused.
    public let storage: DiskGuard?

    /// When a render leaves its remaining issue pages (rendered by a later render, or on request):
    /// - under storage pressure (ingest refused), full renders too. Not only once the background writers' share of
    ///   the floor is used up: the space retention gives back is for ingest, and a full render at start (thousands
    ///   of issue pages) once wrote it all away again, down to that share, so ingest never resumed (CI,
    ///   DiskFullEndToEndTests). The summary pages are still drawn; an issue page is rendered when someone asks;
    /// - an incremental render also once a change arrived after it began, so the summary pages are current first.
    ///   A full render does not yield to newer data: it is the one that removes the pages of issues that are gone,
    ///   and the next render is full again until one completes.
    func stopCondition(full: Bool) -> @Sendable () -> Bool {
        let storage = storage
        if full { return { storage?.isFull == true } }
        let flag = changed
        return { flag.isSet || storage?.isFull == true }
    }

    /// Whether more changes are on their way that a render now would miss (the symbolication worker's last batch
    /// came full: it is working off a backlog). After the debounce a render waits while this says so, at most
    /// `holdAtMost`, so that a backlog is drawn once when it is done instead of every debounce while it lasts (each
    /// render took CPU from the backlog). Default: never.
    public let holdWhile: @Sendable () -> Bool
    /// The longest a render waits for `holdWhile`: how stale the dashboard may get while a backlog lasts.
    public let holdAtMost: Duration
    /// How often `holdWhile` is asked while a render waits.
    static let holdPoll: Duration = .milliseconds(20)

    /// Waits while `holdWhile` says more changes are coming, at most `holdAtMost`.
    func holdForBacklog() async {
        let deadline = ContinuousClock.now.advanced(by: holdAtMost)
        while holdWhile() && ContinuousClock.now < deadline && !Task.isCancelled {
            try? await Task.sleep(for: Self.holdPoll)
        }
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown { await self.loop() }
    }

    func loop() async {
        var last: Date?
        await storage?.waitWhileFull()
        do {
            last = try await renderNow(since: nil)
        } catch  where Task.isCancelled {
            return  // graceful shutdown cancelled the render: not a failure
        } catch let error where storage?.noteFailure(error) == true {
            // The disk is full: logged once by the state; the next change renders everything since start.
        } catch {
            logger.error("dashboard render failed", metadata: [Telemetry.LogKey.error: "\(error)"])
        }
        do {
            for await _ in stream {
                try? await Task.sleep(for: debounce)
                await holdForBacklog()
                if Task.isCancelled { break }
                // Paused while the disk is full; the changes since `last` are rendered when space returns.
                await storage?.waitWhileFull()
                do {
                    // A second of overlap: rows changed in the same millisecond as the last start are not missed.
                    // An incomplete render keeps `last`: its issue pages are pending still.
                    if let started = try await renderNow(since: last.map { $0.addingTimeInterval(-1) }) {
                        last = started
                    }
                } catch  where Task.isCancelled {
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

/// A flag set by any task and read by the render (a change arrived after it began).
final class ChangeFlag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .releasing) }
    func clear() { value.store(false, ordering: .releasing) }
    var isSet: Bool { value.load(ordering: .acquiring) }
}
