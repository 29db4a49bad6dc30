import Foundation
import Synchronization
import TestSupport

/// The reference walker: Breakpad's processor as the PyPI `symbolic` 8.8.0 ships it (the last release with
/// `ProcessState.from_minidump`), in its own Python 3.11 venv under `~/.cache/faultline/symbolic-8.8.0`, installed
/// with pip when missing. Given the modules' files, it walks with their CFI (`CfiCache.from_object`), as Sentry did.
enum SymbolicOracle {
    struct Frame: Decodable, Equatable {
        var instruction: UInt64
        var trust: String
    }

    struct Thread: Decodable {
        var id: UInt64
        var frames: [Frame]
    }

    struct Walk: Decodable {
        /// The index of the crashing thread in `threads`.
        var requesting: Int
        var threads: [Thread]
    }

    static let venv = FileManager.default.homeDirectoryForCurrentUser.path + "/.cache/faultline/symbolic-8.8.0"
    private static let installed = Mutex(false)

    /// The venv's python, after installing `symbolic==8.8.0` into it if needed.
    static func python() throws -> String {
        try installed.withLock { done in
            let python = venv + "/bin/python"
            let check = "import importlib.metadata as m, sys; sys.exit(m.version('symbolic') != '8.8.0')"
            if !done, (try? Command.run(python, ["-c", check]))?.status != 0 {
                try Command.check("python3.11", ["-m", "venv", venv])
                try Command.check(python, ["-m", "pip", "install", "--quiet", "symbolic==8.8.0"])
            }
            done = true
            return python
        }
    }

    /// Walks `dump` with the CFI of the files given for its modules (by the module's path as the dump names it).
    static func walk(dump: String, files: [String: String]) throws -> Walk {
        let folder = try TempFolder("symbolic-oracle")
        let script = try folder.write("oracle.py", Self.script)
        let map = try folder.write("files.json", String(decoding: try JSONEncoder().encode(files), as: UTF8.self))
        let out = try Command.check(try python(), [script, dump, map])
        return try JSONDecoder().decode(Walk.self, from: Data(out.utf8))
    }

    static let script = """
        import json, sys
        from symbolic import Archive
        from symbolic.minidump import CfiCache, FrameInfoMap, ProcessState

        dump, files = sys.argv[1], json.load(open(sys.argv[2]))
        infos = FrameInfoMap.new()
        for module in ProcessState.from_minidump(dump).modules():
            if module.code_file in files and module.debug_id:
                # An ELF archive holds one object (the dump's debug id is in Breakpad's spelling, not symbolic's).
                obj = next(Archive.open(files[module.code_file]).iter_objects())
                infos.add(module.debug_id, CfiCache.from_object(obj))
        state = ProcessState.from_minidump(dump, infos)
        print(json.dumps({
            "requesting": state.requesting_thread,
            "threads": [
                {"id": t.thread_id, "frames": [{"instruction": f.instruction, "trust": f.trust} for f in t.frames()]}
                for t in state.threads()
            ],
        }))
        """
}
