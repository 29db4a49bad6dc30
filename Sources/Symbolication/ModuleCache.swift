import FaultlineCore

/// The owner of open debug modules: an actor, so each libdw handle is used by one task at a time.
///
/// Keeps up to `capacity` modules open and at most `byteBudget` bytes of what they built, least recently used
/// closed first. Modules index their units lazily (see `DebugModule`), so a module's bytes are what its lookups
/// have built so far (`DebugModule.indexedBytes`, re-read after every lookup), not its file's size: a 250 MB
/// debug file that answered a few crashes holds a few MB, and the budget fits many more such modules. Each
/// module is also bounded on its own (`moduleByteBound`: past it, it drops its least recently used units'
/// indexes). Files that fail to open are remembered (negative cache). Debug information is preferred; a
/// project's stripped executable still gives symbol-table answers. ELF and thin Mach-O files open alike
/// (`DebugModule+MachO`); a Mach-O module's bytes include the ELF headers and symbol table made for it.
///
/// Keys: a lookup is located per project and build-id (`located`), and modules are opened and cached per
/// path. Stored files are content addressed (the path names the SHA-256 of the bytes), so two projects share
/// an open module only when their files are byte for byte the same; a project's lookup never reaches a
/// module located for another project. When a project replaces a file, the store's change counter moves and
/// every located path and negative entry is forgotten before the next lookup.
///
/// Late files: "not found" is never cached, so a file stored later is located by the first lookup after the
/// generation moved. A module whose path a key no longer locates (a debug file now outranks the executable, or
/// the project replaced its file) is closed as soon as that key is located afresh, unless another key still
/// uses it: a stale module is never answered from, and does not hold its descriptor and memory.
public actor ModuleCache: AddressSymbolicating {
    /// Finds the stored file of a build-id and kind for a project (nil: not uploaded).
    public typealias Locate = @Sendable (BuildID, DebugFileKind, ProjectID) async -> String?
    /// A number that changes whenever a stored debug file is added or replaced.
    public typealias Generation = @Sendable () -> UInt64

    let locate: Locate
    let generation: Generation
    var seenGeneration: UInt64
    let capacity: Int
    let byteBudget: UInt64
    let moduleByteBound: UInt64
    var modules: [String: (module: DebugModule, bytes: UInt64)] = [:]
    var recency: [String] = []
    var openBytes: UInt64 = 0
    var broken: Set<String> = []
    /// Where each project's build-id was found, valid until the generation moves (a project may replace its
    /// file); "not found" is not remembered, so a file uploaded later is seen at once.
    var located: [String: String] = [:]
    /// What `located` held before the generation last moved: a key located afresh somewhere else closes its old
    /// module (when no other key uses it).
    var previouslyLocated: [String: String] = [:]

    /// - Parameters:
    ///   - capacity: most modules open at once (each holds a file descriptor and a mapping).
    ///   - byteBudget: most bytes of indexes all open modules may hold together (the newest module stays open
    ///     even when it alone is over).
    ///   - moduleByteBound: most bytes of indexes and names one module keeps (`DebugModule.maxIndexBytes`).
    ///   - generation: a number that moves whenever a stored debug file is added or replaced.
    ///   - locate: finds the stored file of a build-id and kind for a project.
    public init(
        capacity: Int = 32, byteBudget: UInt64 = 1 << 30, moduleByteBound: UInt64 = 256 << 20,
        generation: @escaping Generation = { 0 }, locate: @escaping Locate
    ) {
        self.capacity = max(1, capacity)
        self.byteBudget = byteBudget
        self.moduleByteBound = moduleByteBound
        self.locate = locate
        self.generation = generation
        self.seenGeneration = generation()
    }

    public func lookup(buildID: BuildID, moduleOffset: UInt64, project: ProjectID) async -> AddressLookup {
        refreshIfFilesChanged()
        let key = "\(project.rawValue)/\(buildID.rawValue)"
        var path = located[key]
        if path == nil {
            let started = seenGeneration
            path = await locate(buildID, .debuginfo, project)
            if path == nil { path = await locate(buildID, .executable, project) }
            // Other lookups run while this one awaits (actor reentrancy): when one of them saw the generation move,
            // this answer may be older than the file now stored, so it serves this lookup but is not remembered.
            if seenGeneration == started {
                if let found = path { located[key] = found }
                retire(key: key, now: path)
            }
        }
        guard let path else { return .missingDebugFile }
        guard let module = open(path) else { return .notFound }
        let answer = module.resolve(moduleOffset: moduleOffset)
        account(path)
        guard let resolution = answer else { return .notFound }
        let frames = resolution.frames.map {
            ResolvedFrame(function: $0.function, file: $0.file, line: $0.line, column: $0.column, inlined: $0.inlined)
        }
        switch resolution.source {
        case .dwarf: return .resolved(frames)
        case .symbolTable: return .symbolOnly(frames[0], offset: resolution.offset ?? 0)
        }
    }

    public func lookupSourceLine(buildID: BuildID, file: String, line: Int, project: ProjectID) async -> AddressLookup {
        refreshIfFilesChanged()
        // Only debug information has line tables.
        guard let path = await locate(buildID, .debuginfo, project) else { return .missingDebugFile }
        guard let module = open(path) else { return .notFound }
        let answer = module.resolve(sourceFile: file, line: line)
        account(path)
        guard let resolution = answer else { return .notFound }
        return .resolved(
            resolution.frames.map {
                ResolvedFrame(
                    function: $0.function, file: $0.file, line: $0.line, column: $0.column, inlined: $0.inlined)
            })
    }

    /// When a file was added or replaced: locate afresh. Open modules stay (a path's bytes never change).
    func refreshIfFilesChanged() {
        let now = generation()
        if now != seenGeneration {
            seenGeneration = now
            previouslyLocated.merge(located) { _, newer in newer }
            located.removeAll()
            broken.removeAll()
        }
    }

    /// Open modules, for tests and metrics.
    public var openCount: Int { modules.count }

    /// Whether the module at `path` is open (for tests).
    public func isOpen(_ path: String) -> Bool { modules[path] != nil }

    /// The bytes the open modules are accounted for: what their lookups built so far (for tests and metrics).
    public var accountedBytes: UInt64 { openBytes }

    /// Re-reads what the module at `path` has built (a lookup may have indexed a unit), then closes the least
    /// recently used others while over the budget.
    func account(_ path: String) {
        guard let entry = modules[path] else { return }
        let now = entry.module.indexedBytes
        guard now != entry.bytes else { return }
        modules[path]?.bytes = now
        let without = openBytes >= entry.bytes ? openBytes - entry.bytes : 0
        openBytes = without.addingReportingOverflow(now).overflow ? .max : without + now
        closeLeastRecentlyUsed()
    }

    /// Closes the least recently used modules until within both limits (the most recently used always stays open).
    func closeLeastRecentlyUsed() {
        while modules.count > 1, modules.count > capacity || openBytes > byteBudget, let oldest = recency.first {
            recency.removeFirst()
            if let closed = modules.removeValue(forKey: oldest) {
                openBytes = openBytes >= closed.bytes ? openBytes - closed.bytes : 0
            }
        }
    }

    /// `key` was located afresh at `now`: the module it used before is closed when it was another path and no
    /// key located since uses it.
    func retire(key: String, now: String?) {
        guard let old = previouslyLocated.removeValue(forKey: key), old != now else { return }
        guard !located.values.contains(old), !previouslyLocated.values.contains(old) else { return }
        if let closed = modules.removeValue(forKey: old) {
            recency.removeAll { $0 == old }
            openBytes = openBytes >= closed.bytes ? openBytes - closed.bytes : 0
        }
    }

    func open(_ path: String) -> DebugModule? {
        if let entry = modules[path] {
            recency.removeAll { $0 == path }
            recency.append(path)
            return entry.module
        }
        guard !broken.contains(path) else { return nil }
        guard let module = try? DebugModule(path: path, maxIndexBytes: moduleByteBound) else {
            broken.insert(path)
            return nil
        }
        let bytes = module.indexedBytes
        modules[path] = (module, bytes)
        openBytes = openBytes.addingReportingOverflow(bytes).overflow ? .max : openBytes + bytes
        recency.append(path)
        closeLeastRecentlyUsed()
        return module
    }
}

/// Several `ModuleCache` actors, each owning the modules of the build-ids that hash to it: lookups of
/// different modules run in parallel, lookups of one module stay on its one owner.
public struct ShardedModuleCache: AddressSymbolicating {
    let shards: [ModuleCache]

    public init(
        shards: Int = 2, capacityPerShard: Int = 16, byteBudgetPerShard: UInt64 = 1 << 30,
        moduleByteBound: UInt64 = 256 << 20, generation: @escaping ModuleCache.Generation = { 0 },
        locate: @escaping ModuleCache.Locate
    ) {
        self.shards = (0..<max(1, shards)).map { _ in
            ModuleCache(
                capacity: capacityPerShard, byteBudget: byteBudgetPerShard, moduleByteBound: moduleByteBound,
                generation: generation, locate: locate)
        }
    }

    public func lookup(buildID: BuildID, moduleOffset: UInt64, project: ProjectID) async -> AddressLookup {
        await shard(for: buildID).lookup(buildID: buildID, moduleOffset: moduleOffset, project: project)
    }

    public func lookupSourceLine(buildID: BuildID, file: String, line: Int, project: ProjectID) async -> AddressLookup {
        await shard(for: buildID).lookupSourceLine(buildID: buildID, file: file, line: line, project: project)
    }

    /// The owner of a build-id's modules: FNV-1a over the build-id (stable, and spreads ids evenly).
    func shard(for buildID: BuildID) -> ModuleCache {
        shards[Int(FNV1a.hash64(buildID.rawValue) % UInt64(shards.count))]
    }
}
