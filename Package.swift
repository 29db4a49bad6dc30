// swift-tools-version:6.1
import PackageDescription

/// Faultline: a self-hosted crash and error collection server.
///
/// The module graph follows `shared/DESIGN.md`: pure domain logic in `FaultlineCore`, wire formats in
/// `Formats`, SQLite in `SQLiteStorage`, use cases in `Pipeline`, HTTP at the edge in `FaultlineHTTP`, and one
/// composition root in the `faultline` executable. Each external dependency lives in exactly one module.
let strict: [SwiftSetting] = [.enableUpcomingFeature("ExistentialAny")]

let package = Package(
    name: "Faultline",
    platforms: [.macOS(.v15)],
    // What a package that depends on Faultline sees: the SDK its app links, the launcher that runs any program with
    // reporting (docs/sdk.md), symupload for its CI and the server itself. The example and the benchmarks are not
    // products: SwiftPM gives every executable target of the root package a product of the target's name, so
    // `swift build --product ingest-bench` works here and nowhere else.
    products: [
        .executable(name: "faultline", targets: ["faultline"]),
        .executable(name: "symupload", targets: ["symupload"]),
        .library(name: "FaultlineSDK", targets: ["FaultlineSDK"]),
        .executable(name: "faultline-run", targets: ["faultline-run"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird", exact: "2.28.1"),
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", exact: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", exact: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", exact: "2.4.1"),
        .package(url: "https://github.com/apple/swift-crypto", exact: "3.12.3"),
        .package(url: "https://github.com/adam-fowler/compress-nio", exact: "1.5.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", exact: "2.13.0"),
        .package(url: "https://github.com/swift-server/async-http-client", exact: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", exact: "2.101.3"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", exact: "1.35.2"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache", exact: "2.1.1"),
        .package(url: "https://github.com/vapor/postgres-nio", exact: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", exact: "2.37.6"),
        // HTTPTypes (`HTTPRequest`, `HTTPField`) is the vocabulary of Hummingbird 2's API; FaultlineHTTP names it.
        .package(url: "https://github.com/apple/swift-http-types.git", exact: "1.8.0"),
    ],
    targets: [
        .target(name: "FaultlineCore", swiftSettings: strict),
        // A bounds-checked reader of Mach-O files (thin and fat) through a caller-given read closure: no I/O, so both
        // Formats (the debug-file store) and Symbolication read Apple binaries with it without depending on each other.
        .target(name: "MachO", dependencies: ["FaultlineCore"], swiftSettings: strict),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(
            name: "CBrotli", pkgConfig: "libbrotlidec", providers: [.apt(["libbrotli-dev"]), .brew(["brotli"])]),
        .systemLibrary(name: "CLibdw", pkgConfig: "libdw", providers: [.apt(["libdw-dev"])]),
        .target(name: "Symbolication", dependencies: ["FaultlineCore", "MachO", "CLibdw"], swiftSettings: strict),
        // The SDK goes into every app: no package dependencies. It uses the toolchain's Foundation
        // (URLSession for HTTPS and proxies, JSON), Runtime (the calling thread's stack and images) and
        // Synchronization (Mutex), and zlib (gzip bodies) through CZlib, a module map only.
        .target(name: "FaultlineSDK", dependencies: ["CZlib"], swiftSettings: strict),
        // faultline-run's tracer: glibc's variadic `ptrace` behind a fixed signature (Swift cannot call variadics).
        .target(name: "CPtrace"),
        .executableTarget(
            name: "faultline-run",
            dependencies: [
                "FaultlineSDK", "CPtrace", .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict),
        .executableTarget(
            name: "faultline-example", dependencies: ["FaultlineSDK"], path: "Examples/CrashOnRequest",
            swiftSettings: strict),
        // The Swift program the SDK's end-to-end tests run (Tests/FaultlineHTTPTests/SDK).
        .executableTarget(
            name: "SDKFixture", dependencies: ["FaultlineSDK"], path: "Tests/Fixtures/SDKFixture",
            swiftSettings: strict),
        .target(
            name: "Formats",
            dependencies: [
                "FaultlineCore", "MachO", "CZlib", "CBrotli",
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: strict),
        // Content-addressed files on disk (the debug-file blobs), shared by both storage engines' debug-file stores.
        // FaultlineCore stays free of I/O; this module holds the file system calls alone, no database.
        .target(name: "DataFolder", dependencies: ["FaultlineCore"], swiftSettings: strict),
        .target(
            name: "SQLiteStorage",
            dependencies: [
                "FaultlineCore", "DataFolder",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: strict),
        // The second storage engine (issue #14, docs/scaling.md): the same ports on PostgreSQL. Only `--database
        // postgres://…` starts it; the SQLite default never opens a connection.
        .target(
            name: "PostgresStorage",
            dependencies: [
                "FaultlineCore", "DataFolder",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                // TLS settings for `sslmode` (PostgresNIO takes NIOSSL's configuration).
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),
        // `faultline migrate` (issue #14): a SQLite installation copied into PostgreSQL, verified, re-runnable.
        .target(
            name: "StoreMigration", dependencies: ["FaultlineCore", "DataFolder", "SQLiteStorage", "PostgresStorage"],
            swiftSettings: strict),
        .target(
            name: "Pipeline",
            dependencies: [
                "FaultlineCore",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict),
        .target(
            name: "Dashboard",
            dependencies: ["FaultlineCore", .product(name: "Mustache", package: "swift-mustache")],
            swiftSettings: strict),
        .target(
            name: "FaultlineHTTP",
            dependencies: [
                "FaultlineCore", "Formats", "Pipeline",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Crypto", package: "swift-crypto"),
                // scrypt for people's passwords (`KDF.Scrypt`, issue #37).
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                // The connection guard (read timeouts, connection cap) sits in Hummingbird's NIO pipeline.
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
            ],
            swiftSettings: strict),
        // The composition root as a library, so that tests start exactly what `faultline serve` starts.
        .target(
            name: "FaultlineApp",
            dependencies: [
                "FaultlineCore", "Formats", "SQLiteStorage", "DataFolder", "PostgresStorage", "Pipeline",
                "FaultlineHTTP", "Symbolication", "Dashboard",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                // The SMTP client (`SMTPSender`): a TCP connection of its own, TLS at once or after STARTTLS.
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: strict),
        .executableTarget(
            name: "faultline",
            dependencies: [
                "FaultlineCore", "FaultlineApp", "Formats", "SQLiteStorage", "PostgresStorage", "Pipeline",
                "FaultlineHTTP", "Dashboard",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                "StoreMigration",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict,
            plugins: ["VersionStamp"]),
        // `faultline --version`'s commit, stamped before each build (Plugins/VersionStamp).
        .plugin(name: "VersionStamp", capability: .buildTool()),
        .target(
            name: "SymbolUpload",
            dependencies: [
                "FaultlineCore", "Formats", "MachO",
                // libdw reads the line tables of `--include-sources` only; symupload also runs on macOS (an Xcode build
                // phase), where there is no libdw: tools/check-imports proves that closure has no CLibdw and no
                // unconditional Glibc.
                .target(name: "Symbolication", condition: .when(platforms: [.linux])),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                // The upload client makes AsyncHTTPClient's request bodies (ByteBuffer) and methods (HTTPMethod) itself.
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: strict),
        .executableTarget(
            name: "symupload",
            dependencies: [
                "SymbolUpload", "FaultlineCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            swiftSettings: strict),
        .executableTarget(
            name: "ingest-bench",
            dependencies: [
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "tools/bench/ingest/Sources",
            swiftSettings: strict),
        // The ingest routes' and the worker's per-report CPU work, without HTTP, small enough for callgrind.
        .executableTarget(
            name: "ingest-count",
            dependencies: [
                "Formats", "FaultlineCore", "FaultlineHTTP", "Pipeline", "SQLiteStorage",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "tools/bench/ingest/Count", swiftSettings: strict),
        // Helpers shared by the test targets: running tools, temp folders, ELF fixtures built by gcc, SHA-256 by coreutils.
        .target(name: "TestSupport", dependencies: ["FaultlineCore"], path: "Tests/TestSupport"),
        .executableTarget(
            name: "aggregate-bench",
            dependencies: [
                "Dashboard", "FaultlineApp", "FaultlineCore", "Formats", "Pipeline", "SQLiteStorage",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "tools/bench/aggregate/Sources", swiftSettings: strict),
        // The storage engines side by side (issue #14, docs/scaling.md).
        .executableTarget(
            name: "store-bench",
            dependencies: [
                // FaultlineHTTP: the server's HMAC-SHA-256 for the keyed per-user rollups (`IdentityHashers.hmacSHA256`).
                "FaultlineCore", "FaultlineHTTP", "SQLiteStorage", "PostgresStorage", "StoreMigration",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "tools/bench/stores/Sources", swiftSettings: strict),
        // The upgrade snapshots: a database at each earlier schema version with representative data (issue #38,
        // tools/upgrade/make-snapshots), and the batched-rewrite measurement at 1 M reports (tools/bench/upgrade/run).
        .executableTarget(
            name: "upgrade-snapshots",
            dependencies: [
                "FaultlineCore", "FaultlineHTTP", "SQLiteStorage", "PostgresStorage",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "tools/upgrade/Sources", swiftSettings: strict),
        .executableTarget(
            name: "sdk-bench", dependencies: ["FaultlineSDK"], path: "tools/bench/sdk/Sources", swiftSettings: strict),
        .executableTarget(
            name: "symbolicate-bench", dependencies: ["Symbolication"], path: "tools/bench/symbolicate/Sources",
            swiftSettings: strict),
        // Minidumps read, walked and symbolicated per second, and the memory per walk (issue #34, tools/bench/walk/run).
        .executableTarget(
            name: "walk-bench", dependencies: ["Symbolication", "Formats", "FaultlineCore"],
            path: "tools/bench/walk/Sources",
            swiftSettings: strict),
        .testTarget(name: "FaultlineCoreTests", dependencies: ["FaultlineCore"]),
        .testTarget(name: "MachOTests", dependencies: ["MachO", "FaultlineCore", "TestSupport"]),
        .testTarget(
            name: "FormatsTests",
            dependencies: [
                "Formats", "FaultlineCore", "TestSupport", .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            exclude: ["Fixtures"]),
        .testTarget(
            name: "SQLiteStorageTests",
            // FaultlineHTTP: the server's HMAC-SHA-256 for the keyed per-user rollups (`IdentityHashers.hmacSHA256`).
            dependencies: [
                "SQLiteStorage", "DataFolder", "FaultlineCore", "FaultlineHTTP", "TestSupport",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]),
        // One suite, two engines: the stores' behaviour on SQLite and on a real PostgreSQL server (tools/test starts
        // one and sets FAULTLINE_TEST_POSTGRES_URL).
        .testTarget(
            name: "StoreConformanceTests",
            dependencies: [
                "SQLiteStorage", "PostgresStorage", "FaultlineCore", "TestSupport",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"), .product(name: "Logging", package: "swift-log"),
                // MigrationTests: `faultline migrate` between the two engines' real stores.
                "StoreMigration", "DataFolder",
                // The server's HMAC-SHA-256 for the keyed per-user rollups (`IdentityHashers.hmacSHA256`).
                "FaultlineHTTP",
            ],
            // The upgrade snapshots (UpgradeSnapshotTests read them by path).
            exclude: ["Fixtures"]),
        .testTarget(
            name: "PipelineTests",
            dependencies: [
                "Pipeline", "FaultlineCore", .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]),
        .testTarget(name: "DashboardTests", dependencies: ["Dashboard", "FaultlineCore", "TestSupport"]),
        // Formats and FaultlineCore only to check what the SDK builds with the server's own parsers (the SDK never links them).
        .testTarget(
            name: "FaultlineSDKTests", dependencies: ["FaultlineSDK", "TestSupport", "Formats", "FaultlineCore"]),
        .testTarget(
            name: "SymbolUploadTests", dependencies: ["SymbolUpload", "FaultlineCore", "Formats", "TestSupport"]),
        .testTarget(
            name: "SymbolicationTests",
            // Formats: the stack walker's tests read real Crashpad minidumps into snapshots with the minidump reader.
            dependencies: ["Symbolication", "FaultlineCore", "MachO", "TestSupport", "Formats"], exclude: ["Fixtures"]),
        .testTarget(
            name: "FaultlineHTTPTests",
            dependencies: [
                "FaultlineHTTP", "FaultlineApp", "SQLiteStorage", "DataFolder", "Pipeline", "Formats", "FaultlineCore",
                "faultline", "symupload", "CZlib",
                "faultline-run", "SDKFixture", "faultline-example",
                // The SDK's delivery (queue, uploader) is driven in-process by Tests/FaultlineHTTPTests/SDK.
                "FaultlineSDK",
                "Symbolication",
                "TestSupport",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                "Dashboard",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]),
    ]
)

// Fuzzing (docs/fuzzing.md): one libFuzzer executable over the parsers and the symbolicator, declared only
// when `FAULTLINE_FUZZ` is set, so that the normal build and `swift build --build-tests` never see it.
// `tools/fuzz` builds it in its own folder: `FAULTLINE_FUZZ=1 swift build --scratch-path .build-fuzz
// -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library --product faultline-fuzz`.
if Context.environment["FAULTLINE_FUZZ"] != nil {
    package.products.append(.executable(name: "faultline-fuzz", targets: ["FaultlineFuzz"]))
    package.targets.append(
        .executableTarget(
            name: "FaultlineFuzz",
            dependencies: [
                "FaultlineCore", "Formats", "MachO", "Symbolication", .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "tools/fuzzing/Sources"))
}
