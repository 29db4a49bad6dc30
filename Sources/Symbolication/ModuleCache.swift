import FaultlineCore

/// The owner of open debug modules: an actor, so each libdw handle is used by one task at a time.
///
/// Keeps up to `capacity` modules open, least recently used closed first. Files that fail to open are
/// remembered (negative cache) until they change path. Debug information is preferred; a project's
/// stripped executable still gives symbol-table answers.
public actor ModuleCache: AddressSymbolicating {
    /// Finds the stored file of a build-id and kind for a project (nil: not uploaded).
    public typealias Locate = @Sendable (BuildID, DebugFileKind, ProjectID) async -> String?

    let locate: Locate
    let capacity: Int
    var modules: [String: DebugModule] = [:]
    var recency: [String] = []
    var broken: Set<String> = []

    public init(capacity: Int = 32, locate: @escaping Locate) {
        self.capacity = max(1, capacity)
        self.locate = locate
    }

    public func lookup(buildID: BuildID, moduleOffset: UInt64, project: ProjectID) async -> AddressLookup {
        var path = await locate(buildID, .debuginfo, project)
        if path == nil { path = await locate(buildID, .executable, project) }
        guard let path else { return .missingDebugFile }
        guard let module = open(path) else { return .notFound }
        guard let resolution = module.resolve(moduleOffset: moduleOffset) else { return .notFound }
        let frames = resolution.frames.map {
            ResolvedFrame(function: $0.function, file: $0.file, line: $0.line, column: $0.column, inlined: $0.inlined)
        }
        switch resolution.source {
        case .dwarf: return .resolved(frames)
        case .symbolTable: return .symbolOnly(frames[0], offset: resolution.offset ?? 0)
        }
    }

    /// Open modules, for tests and metrics.
    public var openCount: Int { modules.count }

    func open(_ path: String) -> DebugModule? {
        if let module = modules[path] {
            recency.removeAll { $0 == path }
            recency.append(path)
            return module
        }
        guard !broken.contains(path) else { return nil }
        guard let module = try? DebugModule(path: path) else {
            broken.insert(path)
            return nil
        }
        modules[path] = module
        recency.append(path)
        while modules.count > capacity, let oldest = recency.first {
            recency.removeFirst()
            modules[oldest] = nil
        }
        return module
    }
}
