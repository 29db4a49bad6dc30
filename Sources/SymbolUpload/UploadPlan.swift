import FaultlineCore

/// What to upload and what `--check` must complain about: pure logic over the scanned files and the
/// server's answer, so it is tested without a server.
public struct UploadPlan: Sendable, Equatable {
    /// One upload: a file and the kinds the server lacks that this file provides.
    public struct Upload: Sendable, Equatable {
        public var file: LocalDebugFile
        public var kinds: Set<DebugFileKind>
    }

    /// A problem `--check` reports.
    public struct Problem: Sendable, Equatable, CustomStringConvertible {
        public enum Kind: String, Sendable {
            case noBuildID = "no_build_id"
            case noDebugInfo = "no_debug_info"
            case missingOnServer = "missing_on_server"
        }
        public var kind: Kind
        public var path: String
        public var buildID: BuildID?
        public init(kind: Kind, path: String, buildID: BuildID?) {
            self.kind = kind
            self.path = path
            self.buildID = buildID
        }
        public var description: String {
            switch kind {
            case .noBuildID: "\(path): no GNU build-id (link with -Wl,--build-id)"
            case .noDebugInfo: "\(path): no debug information for build-id \(buildID?.rawValue ?? "?") in the files given"
            case .missingOnServer: "\(path): build-id \(buildID?.rawValue ?? "?") is not on the server"
            }
        }
    }

    public var uploads: [Upload]
    /// Files already complete on the server.
    public var present: [LocalDebugFile]
    public var problems: [Problem]

    /// The build-ids and kinds to ask the server about.
    public static func wants(_ files: [LocalDebugFile]) -> [BuildID: Set<DebugFileKind>] {
        var out: [BuildID: Set<DebugFileKind>] = [:]
        for file in files {
            guard let id = file.facts.buildID else { continue }
            out[id, default: []].formUnion(file.facts.kinds)
        }
        return out
    }

    /// Plans uploads so that every missing kind is sent once, from the smallest file that provides it
    /// (a split debug file rather than an unstripped binary for debuginfo; a stripped binary for code).
    public init(files: [LocalDebugFile], missing: [BuildID: Set<DebugFileKind>]) {
        var uploads: [BuildID: [Upload]] = [:]
        var present: [LocalDebugFile] = []
        var problems: [Problem] = []
        var hasDebugInfo = Set<BuildID>()
        for file in files where file.facts.kinds.contains(.debuginfo) {
            if let id = file.facts.buildID { hasDebugInfo.insert(id) }
        }
        for file in files {
            guard let id = file.facts.buildID else {
                problems.append(Problem(kind: .noBuildID, path: file.path, buildID: nil))
                continue
            }
            if !hasDebugInfo.contains(id), !problems.contains(where: { $0.kind == .noDebugInfo && $0.buildID == id }) {
                problems.append(Problem(kind: .noDebugInfo, path: file.path, buildID: id))
            }
        }
        var byID: [BuildID: [LocalDebugFile]] = [:]
        for file in files { if let id = file.facts.buildID { byID[id, default: []].append(file) } }
        for (id, group) in byID {
            let lacking = missing[id] ?? []
            var assigned: [String: Set<DebugFileKind>] = [:]
            for kind in lacking.sorted() {
                guard let best = group.filter({ $0.facts.kinds.contains(kind) }).min(by: { ($0.size, $0.path) < ($1.size, $1.path) })
                else { continue }
                assigned[best.path, default: []].insert(kind)
            }
            for file in group {
                if let kinds = assigned[file.path] {
                    uploads[id, default: []].append(Upload(file: file, kinds: kinds))
                } else if lacking.isDisjoint(with: file.facts.kinds) {
                    present.append(file)
                }
            }
        }
        self.uploads = uploads.values.flatMap { $0 }.sorted { $0.file.path < $1.file.path }
        self.present = present.sorted { $0.path < $1.path }
        self.problems = problems
    }
}
