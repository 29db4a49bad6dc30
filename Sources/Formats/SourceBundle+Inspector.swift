import FaultlineCore
import MachO

/// `DebugFileInspecting` for every kind of debug file the server stores: a source bundle (`SYSB` magic), a thin
/// Mach-O image or an ELF file. The magic decides, so an upload route need not be told which one it gets. Uploads that
/// hold several (a fat Mach-O, a ZIP of dSYMs) are split first (`DebugFileSplitter`).
public struct DebugFileFormatInspector: DebugFileInspecting {
    let limits: SourceBundle.Limits
    let splitter: DebugFileSplitter
    public init(
        limits: SourceBundle.Limits = SourceBundle.Limits(),
        archives: DebugFileSplitter.Limits = DebugFileSplitter.Limits()
    ) {
        self.limits = limits
        self.splitter = DebugFileSplitter(limits: archives)
    }

    public func split(path: String, name: String?, newFile: () throws -> TemporaryUpload) throws -> [DebugFilePiece]? {
        try splitter.split(path: path, name: name, newFile: newFile)
    }

    public func inspect(path: String) throws -> DebugFileFacts { try inspect(path: path, verifying: true) }

    /// A stored bundle's facts come from its manifest alone: its files were checked when it was stored.
    public func inspectStored(path: String) throws -> DebugFileFacts { try inspect(path: path, verifying: false) }

    func inspect(path: String, verifying: Bool) throws -> DebugFileFacts {
        let source = try FileByteSource(path: path)
        let head = source.size >= 4 ? try source.bytes(at: 0, count: 4) : []
        if SourceBundle.hasMagic(head) {
            return try Self.facts(of: SourceBundle(source, limits: limits), verifying: verifying)
        }
        if MachOContainer.magic(of: head) != nil { return try MachOFileInspector().inspect(path: path) }
        return try ELFFileInspector().inspect(path: path)
    }

    /// A bundle's facts: its binary's build-id (`code_id`), kind `sources`. Every file the manifest lists is
    /// checked, once per entry, to inflate within the limits (each file, and all of them together) to its declared
    /// size and CRC-32, so a damaged bundle is refused at upload rather than shown as "no source" later. This is the
    /// CPU-heavy part of an upload: the server runs it on a `BlockingWorkPool` (`DebugFileService`'s `offload`).
    /// `verifying: false` skips it, for a bundle that was checked when it was stored.
    static func facts(of bundle: SourceBundle, verifying: Bool = true) throws -> DebugFileFacts {
        if verifying { _ = try bundle.verifyFiles() }
        return DebugFileFacts(
            buildID: bundle.manifest.codeID, kinds: [.sources], architecture: bundle.manifest.architecture ?? "unknown",
            fileType: "source_bundle", features: ["sources"], compressedDebugSections: false, format: .sourceBundle)
    }
}

/// Source excerpts from stored source bundles, for one render: each build-id's bundle is located at most once per
/// call and opened through `bundles` (parsed once across calls, read on its pool), and at most `maxBytesPerCall`
/// bytes of source are inflated per call.
public struct SourceBundleExcerpts: SourceContextReading {
    /// Where `project`'s source bundle of a build-id is stored (nil when it has none).
    public typealias Locate = @Sendable (BuildID, ProjectID) async -> String?
    let locate: Locate
    let bundles: SourceBundleCache
    let maxBytesPerCall: Int

    public init(
        bundles: SourceBundleCache = SourceBundleCache(), maxBytesPerCall: Int = 32 << 20, locate: @escaping Locate
    ) {
        self.locate = locate
        self.bundles = bundles
        self.maxBytesPerCall = maxBytesPerCall
    }

    public func excerpts(for locations: [CodeLocation], project: ProjectID, radius: Int) async -> [CodeLocation:
        SourceExcerpt]
    {
        var located: [BuildID: String?] = [:]
        var files: [String: [UInt8]?] = [:]
        var budget = maxBytesPerCall
        var out: [CodeLocation: SourceExcerpt] = [:]
        for location in locations where out[location] == nil {
            if located[location.buildID] == nil {
                located[location.buildID] = .some(await locate(location.buildID, project))
            }
            guard let bundlePath = located[location.buildID] ?? nil else { continue }
            let key = location.buildID.rawValue + "\u{0}" + location.file
            if files[key] == nil {
                guard budget > 0 else { continue }
                let bytes = try? await bundles.file(atPath: location.file, inBundleAt: bundlePath)
                budget -= bytes?.count ?? 0
                files[key] = .some(bytes)
            }
            guard let text = files[key] ?? nil,
                let excerpt = SourceExcerpt.around(location.line, radius: radius, in: text)
            else {
                continue
            }
            out[location] = excerpt
        }
        return out
    }
}
