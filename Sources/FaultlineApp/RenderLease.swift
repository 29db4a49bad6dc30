import PostgresStorage

/// The right to render the dashboard into the site folder. Every node serves the pages in that folder; only the
/// holder writes them, so that two nodes sharing it never draw over each other. The render scheduler asks it before
/// each render (`ServerAssembly`): without the lease a node announces its changes to the holder instead.
public protocol RenderLease: Sendable {
    /// Whether this node holds the lease now.
    var isHeld: Bool { get }
    /// How many times this node has taken the lease: a holder that sees it move lost the lease in between, and
    /// another node may have rendered meanwhile (the next render is then a full one).
    var timesTaken: UInt64 { get }
    /// Takes and holds the lease until the task is cancelled; `onTaken` each time it is taken, `onLost` each time it
    /// is given up or lost.
    func run(onTaken: @escaping @Sendable () -> Void, onLost: @escaping @Sendable () -> Void) async
}

/// The lease of a server alone on its data (SQLite): held from the start, never lost, so the one server renders.
public struct AlwaysHeldLease: RenderLease {
    public init() {}
    public var isHeld: Bool { true }
    /// Taken once, at start.
    public var timesTaken: UInt64 { 1 }
    /// Nothing to take or hold: says it is taken, and returns.
    public func run(onTaken: @escaping @Sendable () -> Void, onLost: @escaping @Sendable () -> Void) async {
        onTaken()
    }
}

/// PostgreSQL: an advisory lock the nodes take in turn (`PostgresLease`).
extension PostgresLease: RenderLease {}
