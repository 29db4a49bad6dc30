/// One release, however a client writes it: the release is the version, the build is beneath it.
///
/// Clients name the same release in several ways, and crashes, non-fatals and sessions of one release must meet in
/// one row of every rollup (crash-free numbers divide one by the other). Every format converts at its boundary
/// through ``parse(_:build:)``:
/// - `2.4.0` + a build (Sentry's `dist`, a native report's `app.build`) → release `2.4.0`, build `240`;
/// - `2.4.0 (240)` (how releases used to be shown and stored) → `2.4.0`, build `240`;
/// - `com.example.app@2.4.0+240` (Sentry's `package@version+build`, what Sentry Cocoa sends) → `2.4.0`, build
///   `240`, package `com.example.app`. A package is the text before the first `@` (an npm scope's leading `@`
///   belongs to it: `@scope/web@1.2` → `1.2`), as Sentry's release parser reads it.
///
/// A build given apart (the `dist`) wins over one written in the release. A build is split off with `+` only when
/// both sides are non-empty, and with ` (…)` only when the parentheses close the text. Nothing else is changed: a
/// release that is a git sha or a date stays what it is. Sessions carry no build (Sentry's carry no `dist`), so the
/// release alone is the key that crashes and sessions share; the build is kept beside it on reports.
public struct ReleaseName: Sendable, Equatable {
    /// The release: the version, without package or build.
    public var version: String
    /// The build beneath the release (`CFBundleVersion`, Sentry's `dist`), nil when none was given.
    public var build: String?
    /// The package the release string named (`com.example.app`), nil when none.
    public var package: String?

    public init(version: String, build: String? = nil, package: String? = nil) {
        self.version = version
        self.build = build
        self.package = package
    }

    /// Reads `raw` (and a build given apart) as one release; nil when `raw` is nil or blank.
    public static func parse(_ raw: String?, build: String? = nil) -> ReleaseName? {
        guard let text = trimmed(raw) else { return nil }
        var rest = Substring(text)
        var package: String?
        // `package@version`: the package is the text before the first `@` after an optional leading one.
        let searchFrom = rest.first == "@" ? rest.index(after: rest.startIndex) : rest.startIndex
        if let at = rest[searchFrom...].firstIndex(of: "@"), at > searchFrom {
            let version = rest[rest.index(after: at)...]
            if !version.isEmpty {
                package = String(rest[..<at])
                rest = version
            }
        }
        var written: String?
        // `version (build)`.
        if rest.hasSuffix(")"), let open = rest.lastIndex(of: "("), open > rest.startIndex,
            rest[rest.index(before: open)] == " "
        {
            let inside = rest[rest.index(after: open)..<rest.index(before: rest.endIndex)]
            let head = rest[..<rest.index(before: open)]
            if !inside.isEmpty, !head.isEmpty, !inside.contains(")") {
                written = String(inside)
                rest = head
            }
        }
        // `version+build`.
        if written == nil, let plus = rest.firstIndex(of: "+") {
            let head = rest[..<plus]
            let tail = rest[rest.index(after: plus)...]
            if !head.isEmpty, !tail.isEmpty {
                written = String(tail)
                rest = head
            }
        }
        guard let version = trimmed(String(rest)) else { return nil }
        return ReleaseName(version: version, build: trimmed(build) ?? trimmed(written), package: package)
    }

    /// The name of the release of an app that gave none (what the SDKs send then): listed like any release, but
    /// never taken for the latest one.
    public static let unknown = "unknown"

    /// Whether `release` says which release it is: false for ``unknown`` and for the empty name.
    public static func isNamed(_ release: String) -> Bool {
        !release.isEmpty && release != unknown
    }

    /// The release `raw` names (see ``parse(_:build:)``); `raw` itself when it names none.
    public static func release(of raw: String) -> String {
        parse(raw)?.version ?? raw
    }

    static func trimmed(_ text: String?) -> String? {
        guard let text else { return nil }
        var cut = Substring(text)
        while let first = cut.first, first.isWhitespace { cut.removeFirst() }
        while let last = cut.last, last.isWhitespace { cut.removeLast() }
        return cut.isEmpty ? nil : String(cut)
    }
}
