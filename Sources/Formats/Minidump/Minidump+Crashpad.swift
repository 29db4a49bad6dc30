extension Minidump {
    /// `MinidumpCrashpadInfo`: version, report id, client id, process annotations, module annotations.
    func readCrashpadInfo(_ body: Range<Int>) throws(MinidumpError) -> CrashpadInfo {
        guard body.count >= 52 else {
            throw MinidumpError(.truncated, "CrashpadInfo has \(body.count) bytes, fewer than 52")
        }
        let at = body.lowerBound
        var budget = Self.maxAnnotations
        let simple = Location(size: file.u32(at + 36), rva: file.u32(at + 40))
        let moduleList = Location(size: file.u32(at + 44), rva: file.u32(at + 48))
        return CrashpadInfo(
            reportID: Array(file.bytes[(at + 4)..<(at + 20)]), clientID: Array(file.bytes[(at + 20)..<(at + 36)]),
            annotations: try readDictionary(simple, "CrashpadInfo's annotations", budget: &budget),
            modules: try readModuleAnnotations(moduleList, budget: &budget))
    }

    /// A `MinidumpSimpleStringDictionary`: a count, then (key RVA, value RVA) pairs of UTF-8 strings.
    func readDictionary(_ location: Location, _ what: String, budget: inout Int) throws(MinidumpError) -> [String:
        String]
    {
        var out: [String: String] = [:]
        for at in try entries(location, entrySize: 8, what) {
            try spend(&budget)
            out[try file.utf8String(at: file.u32(at), "a key of \(what)")] = try file.utf8String(
                at: file.u32(at + 4), "a value of \(what)")
        }
        return out
    }

    /// `MinidumpModuleCrashpadInfoList`: a count, then (module index, location) links.
    func readModuleAnnotations(_ location: Location, budget: inout Int) throws(MinidumpError) -> [ModuleAnnotations] {
        var out: [ModuleAnnotations] = []
        for at in try entries(location, entrySize: 12, "CrashpadInfo's module list") {
            let index = file.u32(at)
            let info = try file.range(
                UInt64(file.u32(at + 8)), UInt64(file.u32(at + 4)), "module \(index)'s Crashpad info")
            // MinidumpModuleCrashpadInfo: version, list annotations, simple annotations, annotation objects.
            guard info.count >= 28 else {
                throw MinidumpError(
                    .truncated, "module \(index)'s Crashpad info has \(info.count) bytes, fewer than 28")
            }
            let i = info.lowerBound
            out.append(
                ModuleAnnotations(
                    moduleIndex: index,
                    list: try readStringList(
                        Location(size: file.u32(i + 4), rva: file.u32(i + 8)), "module \(index)'s list annotations",
                        budget: &budget),
                    simple: try readDictionary(
                        Location(size: file.u32(i + 12), rva: file.u32(i + 16)), "module \(index)'s simple annotations",
                        budget: &budget),
                    objects: try readAnnotationObjects(
                        Location(size: file.u32(i + 20), rva: file.u32(i + 24)), "module \(index)'s annotation objects",
                        budget: &budget)))
        }
        return out
    }

    /// A `MinidumpRVAList` of UTF-8 strings.
    func readStringList(_ location: Location, _ what: String, budget: inout Int) throws(MinidumpError) -> [String] {
        var out: [String] = []
        for at in try entries(location, entrySize: 4, what) {
            try spend(&budget)
            out.append(try file.utf8String(at: file.u32(at), "an entry of \(what)"))
        }
        return out
    }

    /// A `MinidumpAnnotationList`: (name RVA, type, reserved, value RVA) entries; string-typed values kept.
    func readAnnotationObjects(_ location: Location, _ what: String, budget: inout Int) throws(MinidumpError)
        -> [String: String]
    {
        var out: [String: String] = [:]
        for at in try entries(location, entrySize: 12, what) {
            try spend(&budget)
            guard file.u16(at + 4) == 1 else { continue }  // Annotation::Type::kString
            // The value is a MinidumpByteArray (a length, then bytes), read as a UTF-8 string.
            out[try file.utf8String(at: file.u32(at), "a name of \(what)")] = try file.utf8String(
                at: file.u32(at + 8), "a value of \(what)")
        }
        return out
    }

    /// The offsets of a Crashpad list's entries: a 4-byte count at `location`, then the entries; none when the
    /// location is empty (the list is absent).
    func entries(_ location: Location, entrySize: Int, _ what: String) throws(MinidumpError) -> StrideTo<Int> {
        guard location.size > 0 else { return stride(from: 0, to: 0, by: entrySize) }
        let body = try file.range(UInt64(location.rva), UInt64(location.size), what)
        let count = try file.u32(at: UInt64(body.lowerBound), what)
        let entries = try listEntries(body, count: count, entrySize: entrySize, what)
        return stride(from: entries.lowerBound, to: entries.upperBound, by: entrySize)
    }

    func spend(_ budget: inout Int) throws(MinidumpError) {
        guard budget > 0 else {
            throw MinidumpError(.tooLarge, "CrashpadInfo holds more than \(Self.maxAnnotations) annotations")
        }
        budget -= 1
    }
}
