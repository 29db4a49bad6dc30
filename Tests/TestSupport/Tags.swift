import Testing

/// The tags that split the test suite into CI's two stages (docs/testing.md).
///
/// A suite without `.endToEnd` belongs to the fast stage: it runs in-process, needs no network and no service, and
/// the whole stage reports within minutes of the build. A suite that starts a real server, a browser, a database or
/// a client from PyPI carries `.endToEnd`, plus a tag for each thing it needs, so that a developer can run or skip
/// those alone. `tools/test --fast` and `tools/test --e2e` select by these tags (Swift 6.3's `swift test` cannot, so
/// `tools/lib/test-stages.py` turns a tag into a `--filter`/`--skip` of test IDs). Tag the `@Suite`, not each test:
/// a test inherits its suite's tags.
extension Tag {
    /// The second stage: real `faultline`/`symupload` processes on 127.0.0.1, Chromium, PostgreSQL, several nodes,
    /// or the real Sentry clients. Untagged suites form the fast stage.
    @Tag public static var endToEnd: Self

    /// Needs the throwaway PostgreSQL server that `tools/test` starts (`FAULTLINE_TEST_POSTGRES_URL`).
    @Tag public static var postgres: Self

    /// Drives headless Chromium through chromium-driver (the rendered pages, axe-core).
    @Tag public static var chromium: Self

    /// Runs a real Sentry client from PyPI: sentry-cli 3.8.2 or the Python sentry-sdk 2.75.0.
    @Tag public static var sentryClients: Self

    /// Runs several `faultline serve` nodes on one database.
    @Tag public static var multiNode: Self
}
