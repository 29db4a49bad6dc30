import FaultlineCore

/// The issue page's "missing dSYM" banner: for each of the app's own Mach-O modules in an event whose frames were symbolicated
/// without its dSYM (no file, or only the executable's symbol table), how many frames that left without files and
/// lines, and the UUID to upload, as Crashlytics' banner names it. Pure: the event and its symbolication result in,
/// lines out.
enum MissingDSYMNotes {
    /// One line per module, most frames first: `3 frames lack a dSYM for UUID 4C4C…A82A (App, arm64).`
    static func lines(report: Report, symbols: SymbolicatedReport?) -> [String] {
        guard let symbols else { return [] }
        // Mach-O modules of the event by build-id; an id no module names is Apple's when it looks like an LC_UUID.
        var modules: [String: LoadedModule] = [:]
        for module in report.modules {
            if let id = module.buildID?.rawValue, modules[id] == nil { modules[id] = module }
        }
        var counts: [String: Int] = [:]
        for thread in symbols.threads {
            for slot in thread where slot.status == "missing_debug_file" || slot.status == "symbol_table" {
                guard let id = slot.buildID, let buildID = BuildID(id) else { continue }
                let apple = modules[id].map { $0.format == .macho } ?? AppleUUID.looksLikeMachOUUID(buildID)
                // Apple's own libraries have no dSYM to upload: only the app's images are named.
                let system = modules[id].map { Grouping.isSystemModule(name: $0.name, path: $0.path) } ?? false
                guard apple, !system else { continue }
                counts[id, default: 0] += 1
            }
        }
        return counts.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.compactMap { id, count in
            guard let buildID = BuildID(id) else { return nil }
            let module = modules[id]
            let details = [module?.name, module?.arch ?? report.device.arch].compactMap { $0 }.filter { !$0.isEmpty }
            let frames = count == 1 ? "1 frame lacks" : "\(count) frames lack"
            let suffix = details.isEmpty ? "" : " (\(details.joined(separator: ", ")))"
            return "\(frames) a dSYM for UUID \(AppleUUID.spelling(buildID))\(suffix)."
        }
    }
}
