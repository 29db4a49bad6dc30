import Foundation

extension SourceBundles {
    /// The script that writes source bundles byte by byte, honest or hostile (also the fuzz seeds' writer).
    static var craftScript: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("FormatsTests/Fixtures/source-bundle/craft.py").path
    }

    /// A bundle written by `Tests/FormatsTests/Fixtures/source-bundle/craft.py`: `files` files `/src/fN.c` of `size`
    /// zero bytes each (deflated, about 1000:1), each listed under `aliases` names whose directory entries all point
    /// at its one local entry; `overlap` makes the second file's local header start inside the first one's data.
    /// Returns the bundle's path in `folder`.
    public static func crafted(
        buildID: String, files: Int = 1, size: Int = 64, aliases: Int = 1, overlap: Bool = false, in folder: TempFolder,
        name: String = "crafted.sysb"
    ) throws -> String {
        let out = folder.file(name)
        var arguments = [
            craftScript, out, "--build-id", buildID, "--files", "\(files)", "--size", "\(size)", "--aliases",
            "\(aliases)",
        ]
        if overlap { arguments.append("--overlap") }
        _ = try Command.check("python3", arguments)
        return out
    }
}
