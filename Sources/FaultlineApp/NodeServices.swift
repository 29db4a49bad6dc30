import Pipeline
import PostgresStorage
import ServiceLifecycle

/// With several nodes on one PostgreSQL database: holds the render lease for this node when it can, and while it
/// holds it looks every `interval` whether another node announced a change (`changeMark`: the nodes without the lease
/// announce theirs, `ServerAssembly.render`, as do the commands that change data) and has the dashboard rendered
/// when one did; its own changes it renders at once, as one node does. Every node serves the pages the holder writes
/// into the shared folder, so the dashboard is the same on every node and current within about `interval` (plus the
/// announcing node's debounce); a quiet database costs one tiny query per interval, not a redraw.
public struct SharedDashboardService: Service {
    let lease: any RenderLease
    let scheduler: RenderScheduler
    let interval: Duration
    let telemetry: Telemetry?
    /// A mark that differs once a change was announced since it was last read (`PostgresEngine.changeMark`). A mark
    /// that cannot be read counts as a change.
    let changeMark: @Sendable () async throws -> String

    public init(
        lease: any RenderLease, scheduler: RenderScheduler, interval: Duration, telemetry: Telemetry? = nil,
        changeMark: @escaping @Sendable () async throws -> String
    ) {
        self.lease = lease
        self.scheduler = scheduler
        self.interval = interval
        self.telemetry = telemetry
        self.changeMark = changeMark
    }

    public func run() async throws {
        let lease = lease
        let scheduler = scheduler
        let interval = interval
        let telemetry = telemetry
        let changeMark = changeMark
        telemetry?.gauge(Telemetry.Name.renderLeaseHeld, 0)
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                // Taken (at start, or from a node that died): a render now, a full one (`ServerAssembly.render`).
                group.addTask {
                    await lease.run(
                        onTaken: {
                            telemetry?.gauge(Telemetry.Name.renderLeaseHeld, 1)
                            scheduler.notify()
                        },
                        onLost: { telemetry?.gauge(Telemetry.Name.renderLeaseHeld, 0) })
                }
                group.addTask {
                    // The mark read before the last render this loop asked for: the render read after it, so an equal
                    // mark now means nothing changed that the pages could miss (a change moves the mark after its
                    // commit). Forgotten while the lease is elsewhere.
                    var rendered: String?
                    while !Task.isCancelled {
                        try? await Task.sleep(for: interval)
                        guard lease.isHeld else {
                            rendered = nil
                            continue
                        }
                        let mark = try? await changeMark()
                        if mark == nil || mark != rendered { scheduler.notify() }
                        rendered = mark
                    }
                }
            }
        }
    }
}

/// With several nodes on one PostgreSQL database: keeps this node counted among the live ones (`PostgresNodes`).
public struct NodePresenceService: Service {
    let nodes: PostgresNodes
    let telemetry: Telemetry?

    public init(nodes: PostgresNodes, telemetry: Telemetry? = nil) {
        self.nodes = nodes
        self.telemetry = telemetry
    }

    public func run() async throws {
        let nodes = nodes
        let telemetry = telemetry
        await cancelWhenGracefulShutdown {
            await nodes.run(onCount: { telemetry?.gauge(Telemetry.Name.nodes, Double($0)) })
        }
    }
}
