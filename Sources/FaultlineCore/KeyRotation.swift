/// Bounds of a project key rotation (`ProjectService.rotate`), shared by the CLI and the settings page.
public enum KeyRotation {
    /// Days an old ingest key stays accepted when nothing else is said: a week, long enough to ship a fix release.
    public static let defaultKeepOldDays = 7
    /// The most days an old ingest key may stay accepted after a rotation (a quarter: long enough to ship a release
    /// through the app stores, short enough that a leaked key ends).
    public static let maxKeepOldDays = 90
}
