import FaultlineCore
import Formats
import Logging
import Pipeline
import Symbolication

/// Walks the stacks of minidump reports for the symbolication worker: the dump stored with the event (Formats reads
/// it into a `ProcessSnapshot`), walked with libdwfl (Symbolication's `StackWalker`) over the project's stored files
/// of each module: its executable or library first (the `.eh_frame` a stripped binary keeps), else its debug file.
///
/// A report whose dump is gone (kept only until processed, or pruned) keeps the walk saved with its last result, so
/// regrouping it never loses its stack.
struct MinidumpStackWalker: StackWalking {
    let dumps: any MinidumpStore
    let results: any SymbolicationStore
    let files: any DebugFileStore
    let limits: IngestLimits
    let logger: Logger

    func walk(_ report: Report, reportID: Int64, project: ProjectID) async -> WalkedStacks? {
        let bytes: [UInt8]?
        do {
            bytes = try await dumps.minidump(eventID: report.eventID, project: project)
        } catch {
            logger.error(
                "cannot read a stored minidump",
                metadata: [Telemetry.LogKey.reportID: "\(reportID)", Telemetry.LogKey.error: "\(error)"])
            return await previous(reportID)
        }
        guard let bytes else { return await previous(reportID) }
        let snapshot: ProcessSnapshot
        do {
            snapshot = try Minidump(bytes: bytes).snapshot()
        } catch {
            // Ingest read it before storing it: only a dump stored by an older reader ends here.
            logger.warning(
                "a stored minidump cannot be walked",
                metadata: [Telemetry.LogKey.reportID: "\(reportID)", Telemetry.LogKey.error: "\(error)"])
            return await previous(reportID)
        }
        let walker = StackWalker(
            limits: StackWalker.Limits(maxFrames: limits.maxFramesPerThread, maxThreads: limits.maxThreads),
            resolveELF: await localFiles(snapshot.modules, project: project))
        return Self.stacks(walker.walk(snapshot))
    }

    /// The walk saved with the report's last result, if any.
    func previous(_ reportID: Int64) async -> WalkedStacks? {
        (try? await results.result(reportID: reportID))?.report?.walk
    }

    /// The local file to report each module with, looked up once per build-id before the walk (the walker's callback
    /// is synchronous).
    func localFiles(_ modules: [ProcessSnapshot.Module], project: ProjectID) async
        -> @Sendable (ProcessSnapshot.Module) -> String?
    {
        var paths: [BuildID: String] = [:]
        var asked: Set<BuildID> = []
        for module in modules.prefix(StackWalker.Limits().maxModules) {
            guard let id = module.buildID, asked.insert(id).inserted else { continue }
            for kind in [DebugFileKind.executable, .debuginfo] {
                if let path = try? await files.path(of: id, kind: kind, project: project) {
                    paths[id] = path
                    break
                }
            }
        }
        let found = paths
        return { module in module.buildID.flatMap { found[$0] } }
    }

    static func stacks(_ threads: [WalkedThread]) -> WalkedStacks {
        WalkedStacks(
            threads: threads.map { thread in
                WalkedStacks.Thread(
                    id: thread.id, name: thread.name, crashed: thread.crashed,
                    frames: thread.frames.map { WalkedStacks.Frame(address: $0.address, trust: $0.trust) },
                    end: describe(thread.end))
            })
    }

    static func describe(_ end: WalkedThread.End) -> String {
        switch end {
        case .outermost: return WalkedStacks.Thread.outermostEnd
        case .frameLimit: return "frame limit"
        case .stackPointerNotIncreasing: return "stack pointer did not increase"
        case .unwindFailed(let message): return "unwinding stopped: \(message)"
        }
    }
}
