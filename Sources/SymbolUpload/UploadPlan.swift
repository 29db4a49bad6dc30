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
        /// The file's label (a slice of a universal file names its architecture).
        public var path: String
        public var buildID: BuildID?
        public var format: DebugFileFormat
        /// The Mach-O slice's architecture (`arm64`), named beside its UUID.
        public var architecture: String?
        public init(kind: Kind, path: String, buildID: BuildID?) {
            self.kind = kind
            self.path = path
            self.buildID = buildID
            self.format = .elf
        }

        /// The problem `kind` of `file`.
        public init(_ kind: Kind, of file: LocalDebugFile) {
            self.kind = kind
            self.path = file.label
            self.buildID = file.facts.buildID
            self.format = file.facts.format
            self.architecture = file.facts.format == .macho ? file.facts.architecture : nil
        }

        /// For Mach-O, the UUID comes first in Apple's spelling with its architecture, so the lines read like
        /// Crashlytics' missing-dSYM list: `UUID 4C4C4433-…-51AEB3BE22A4 (arm64): no dSYM among the files given
        /// (Payload/App.app/App)`.
        public var description: String {
            let id = buildID?.rawValue ?? "?"
            guard format == .macho else {
                switch kind {
                case .noBuildID: return "\(path): no GNU build-id (link with -Wl,--build-id)"
                case .noDebugInfo: return "\(path): no debug information for build-id \(id) in the files given"
                case .missingOnServer: return "\(path): build-id \(id) is not on the server"
                }
            }
            let uuid = buildID.map(AppleUUID.spelling) ?? "?"
            switch kind {
            case .noBuildID: return "\(path): no LC_UUID (do not link with -no_uuid)"
            case .noDebugInfo: return "UUID \(uuid) (\(architecture ?? "?")): no dSYM among the files given (\(path))"
            case .missingOnServer: return "UUID \(uuid) (\(architecture ?? "?")): not on the server (\(path))"
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
                problems.append(Problem(.noBuildID, of: file))
                continue
            }
            if !hasDebugInfo.contains(id), !problems.contains(where: { $0.kind == .noDebugInfo && $0.buildID == id }) {
                problems.append(Problem(.noDebugInfo, of: file))
            }
        }
        var byID: [BuildID: [LocalDebugFile]] = [:]
        for file in files { if let id = file.facts.buildID { byID[id, default: []].append(file) } }
        for (id, group) in byID {
            let lacking = missing[id] ?? []
            var assigned: [String: Set<DebugFileKind>] = [:]
            for kind in lacking.sorted() {
                guard
                    let best = group.filter({ $0.facts.kinds.contains(kind) }).min(by: {
                        ($0.size, $0.label) < ($1.size, $1.label)
                    })
                else { continue }
                assigned[best.label, default: []].insert(kind)
            }
            for file in group {
                if let kinds = assigned[file.label] {
                    uploads[id, default: []].append(Upload(file: file, kinds: kinds))
                } else if lacking.isDisjoint(with: file.facts.kinds) {
                    present.append(file)
                }
            }
        }
        self.uploads = uploads.values.flatMap { $0 }.sorted { $0.file.label < $1.file.label }
        self.present = present.sorted { $0.label < $1.label }
        self.problems = problems
    }
}
