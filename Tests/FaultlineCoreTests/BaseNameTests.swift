import Testing

@testable import FaultlineCore

/// `Grouping.baseName(ofPath:)` reads ASCII paths from their bytes; it must give what splitting by characters gave
/// (module names feed fingerprints, so any difference would split or merge issues).
@Suite struct BaseNameTests {
    static func reference(_ path: String) -> String { path.split(separator: "/").last.map(String.init) ?? path }

    @Test(arguments: [
        "", "/", "//", "libc.so.6", "/usr/lib/libc.so.6", "/usr/lib/", "a//b//", "/a", "a/", "./x", "../y/z", "a b/c d",
        "/lib/x86_64-linux-gnu/libstdc++.so.6", "é/日本/ü.so", "dir/\u{301}name", "a/\u{301}", "/\u{0}/x",
    ])
    func sameAsSplittingByCharacters(path: String) {
        #expect(Grouping.baseName(ofPath: path) == Self.reference(path))
    }
}
