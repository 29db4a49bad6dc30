/// What `faultline --version` prints: the release (semantic versioning) and the commit it was built from.
enum FaultlineVersion {
    /// The release. Bumped with every release; the schema it writes is its last migration (docs/operations.md).
    static let semver = "0.14.0"

    /// `0.14.0 (commit 0123456789ab)`.
    static var description: String { "\(semver) (commit \(BuildCommit.value))" }
}
