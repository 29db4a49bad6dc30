import FaultlineCore

/// `DebugFileInspecting` for every kind of debug file the server stores: a source bundle (`SYSB` magic) or
/// an ELF file. The magic decides, so an upload route need not be told which one it gets.
public struct DebugFileFormatInspector: DebugFileInspecting {
    let limits: SourceBundle.Limits
    public init(limits: SourceBundle.Limits = SourceBundle.Limits()) { self.limits = limits }

    public func inspect(path: String) throws -> DebugFileFacts {
        let source = try FileByteSource(path: path)
        if source.size >= 4, SourceBundle.hasMagic(try source.bytes(at: 0, count: 4)) {
            return try Self.facts(of: SourceBundle(source, limits: limits))
        }
        return try ELFFileInspector().inspect(path: path)
    }

    /// A bundle's facts: its binary's build-id (`code_id`), kind `sources`. Every file the manifest lists is
    /// checked to inflate, within the limits (each file, and all of them together), to its declared size and
    /// CRC-32, so a damaged bundle is refused at upload rather than shown as "no source" later.
    static func facts(of bundle: SourceBundle) throws -> DebugFileFacts {
        var total = 0
        for path in bundle.paths {
            total += try bundle.file(atPath: path)?.count ?? 0  // each at most maxFileBytes: cannot overflow before the check
            guard total <= bundle.limits.maxTotalBytes else {
                throw FormatError(.tooLarge, "the bundle's files inflate to more than \(bundle.limits.maxTotalBytes) bytes", field: "source_bundle")
            }
        }
        return DebugFileFacts(
            buildID: bundle.manifest.codeID, kinds: [.sources], architecture: bundle.manifest.architecture ?? "unknown",
            fileType: "source_bundle", features: ["sources"], compressedDebugSections: false)
    }
}

/// Source excerpts from stored source bundles, for one render: each bundle is opened at most once (a small
/// cache of open bundles), and at most `maxBytesPerCall` bytes of source are inflated per call.
public struct SourceBundleExcerpts: SourceContextReading {
    /// Where `project`'s source bundle of a build-id is stored (nil when it has none).
    public typealias Locate = @Sendable (BuildID, ProjectID) async -> String?
    let locate: Locate
    let limits: SourceBundle.Limits
    let maxBytesPerCall: Int

    public init(limits: SourceBundle.Limits = SourceBundle.Limits(), maxBytesPerCall: Int = 32 << 20,
                locate: @escaping Locate) {
        self.locate = locate
        self.limits = limits
        self.maxBytesPerCall = maxBytesPerCall
    }

    public func excerpts(for locations: [CodeLocation], project: ProjectID, radius: Int) async -> [CodeLocation: SourceExcerpt] {
        var bundles: [BuildID: SourceBundle?] = [:]
        var files: [String: [UInt8]?] = [:]
        var budget = maxBytesPerCall
        var out: [CodeLocation: SourceExcerpt] = [:]
        for location in locations where out[location] == nil {
            if bundles[location.buildID] == nil {
                let path = await locate(location.buildID, project)
                bundles[location.buildID] = .some(path.flatMap { try? SourceBundle(try FileByteSource(path: $0), limits: limits) })
            }
            guard let bundle = bundles[location.buildID] ?? nil else { continue }
            let key = location.buildID.rawValue + "\u{0}" + location.file
            if files[key] == nil {
                guard budget > 0 else { continue }
                let bytes = try? bundle.file(atPath: location.file)
                budget -= bytes?.count ?? 0
                files[key] = .some(bytes)
            }
            guard let text = files[key] ?? nil, let excerpt = SourceExcerpt.around(location.line, radius: radius, in: text) else {
                continue
            }
            out[location] = excerpt
        }
        return out
    }
}
