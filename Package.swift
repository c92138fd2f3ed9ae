// swift-tools-version: 6.1
import Foundation
import PackageDescription

/// The storage engine Trellis is built on (issue 37), chosen at build time:
/// by default (or `TRELLIS_STORAGE_ENGINE=trellis`) TrellisStorage (Sources/TrellisStorage,
/// Sources/Trellis/Storage/Engine): no C library, files of earlier versions converted on open
/// (TrellisLMDBFormat); `TRELLIS_STORAGE_ENGINE=lmdb`: the old engine, LMDB from the system
/// (`CLMDB`, Sources/Trellis/Storage/LMDB), kept buildable and tested by CI. Build it in its own
/// folder (`--scratch-path .build-lmdb`): switching in one folder rebuilds Trellis and everything
/// above it. A build-time switch, not an open-time one: each build reads leaf pages in place for
/// its own page format with no dispatch on the hot paths.
/// In the default build nothing but test targets depends on CLMDB (TrellisStorageTests: the
/// differential tests of TrellisStorage against LMDB), so `swift build` and every product need no
/// LMDB; `swift build --build-tests` does (Scripts/install-deps.sh --tests).
let storageEngine = ProcessInfo.processInfo.environment["TRELLIS_STORAGE_ENGINE"] ?? "trellis"
guard ["trellis", "lmdb"].contains(storageEngine) else {
    fatalError("TRELLIS_STORAGE_ENGINE is '\(storageEngine)': use 'trellis' (the default, TrellisStorage) or 'lmdb'.")
}
let onLMDB = storageEngine == "lmdb"
let engineDefines: [SwiftSetting] = onLMDB ? [.define("TRELLIS_LMDB")] : []

let package = Package(
    name: "Trellis",
    // The lowest versions the code allows: the Synchronization module's Mutex and Atomic (Swift 6.0's
    // runtime). Why not lower: docs/ARCHITECTURE.md, "Platforms". Linux needs no entry.
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "Trellis", targets: ["Trellis"]),
        // The page store of our own (issue 35, docs/STORAGE.md); Trellis is built on it (issue 37).
        .library(name: "TrellisStorage", targets: ["TrellisStorage"]),
        // Reads and converts files of earlier Trellis versions (LMDB format), without LMDB.
        .library(name: "TrellisLMDBFormat", targets: ["TrellisLMDBFormat"]),
        .executable(name: "trellis", targets: ["TrellisCLI"]),
        // Trellis's log messages to swift-log, for servers (its own product: the core library
        // keeps no dependency).
        .library(name: "TrellisLogging", targets: ["TrellisLogging"]),
        // Sync (issue 21): the client library and the server. See docs/SYNC.md.
        .library(name: "TrellisSync", targets: ["TrellisSync"]),
        // Test support: preloaded into the helper that reads damaged files, it stops the process
        // on any allocation over TRELLIS_ALLOCATION_LIMIT bytes (DamagedFileFlipTests).
        .library(name: "TrellisAllocationLimit", type: .dynamic, targets: ["TrellisAllocationLimit"]),
        .executable(name: "trellis-sync", targets: ["TrellisSyncServer"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        // AES-256-GCM, HKDF and HMAC for encrypted files (TrellisStorage, issue 38); CryptoKit on
        // Apple platforms, BoringSSL elsewhere. Already in the graph through jwt-kit.
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        // `swift package generate-documentation --target Trellis` (DocC).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.4.0"),
        // Sync only (TrellisSync client, trellis-sync server); the core Trellis target uses none.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/hummingbird-project/swift-websocket", from: "1.6.2"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.7.1"),
        // TrellisSync's HTTPS requests with the app's own trust roots (URLSession on Linux
        // cannot be given one); NIOSSL for the certificates of client and server TLS.
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
    ],
    targets: [
        // LMDB from the system (Debian: liblmdb-dev): Sources/Trellis/Storage/LMDB in the LMDB
        // build, and the tests of TrellisStorage against LMDB. No product of the default build.
        .systemLibrary(
            name: "CLMDB",
            pkgConfig: "lmdb",
            providers: [.apt(["liblmdb-dev"]), .brew(["lmdb"])]
        ),
        // Swift Observation's per-thread "tracking?" check in a few instructions (the runtime
        // has no public one): one C file, the platform C library only. DWARF 4: valgrind 3.19
        // (bench.sh --instructions) cannot read clang's default DWARF 5 and gives up on the binary.
        .target(name: "CTrellisObservation", cSettings: [.unsafeFlags(["-gdwarf-4"])]),
        .target(
            name: "Trellis",
            // On TrellisStorage, TrellisLMDBFormat converts files of earlier versions on open.
            dependencies: (onLMDB ? ["CLMDB"] : ["TrellisStorage", "TrellisLMDBFormat"]) + ["CTrellisObservation"],
            swiftSettings: [.swiftLanguageMode(.v6)] + engineDefines
        ),
        // Issue 35: copy-on-write B+trees in a checksummed file, one sync per commit. Only
        // Foundation, the platform C library (Sources/TrellisStorage/Platform.swift) and
        // swift-crypto (encrypted files, PageCipher.swift).
        // Trellis's engine (issue 37) unless built with TRELLIS_STORAGE_ENGINE=lmdb.
        .target(
            name: "TrellisStorage",
            dependencies: [.product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // Issue 37: reads files of earlier Trellis versions (LMDB's page format, read here, no
        // LMDB code) and converts them to TrellisStorage files (docs/STORAGE.md, section 10).
        .target(
            name: "TrellisLMDBFormat",
            dependencies: ["TrellisStorage"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .executableTarget(
            name: "TrellisCLI",
            dependencies: [
                "Trellis", "TrellisLMDBFormat", "TrellisStorage",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .target(
            name: "TrellisLogging",
            dependencies: ["Trellis", .product(name: "Logging", package: "swift-log")],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // malloc's size checked against a limit, for the damaged-file test's child processes.
        .target(name: "TrellisAllocationLimit"),
        // What the test targets and the process helpers share: the seeded generator SplitMix64.
        // No dependency, and in no product.
        .target(name: "TrellisTestSupport", swiftSettings: [.swiftLanguageMode(.v6)]),
        // A second process for the persistence and isolation tests.
        .executableTarget(
            name: "TrellisProcessHelper",
            dependencies: ["Trellis", "TrellisTestSupport"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // Sync (issue 21): wire messages shared by client and server (Codable, no networking).
        .target(
            name: "TrellisSyncProtocol",
            dependencies: ["Trellis"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .target(
            name: "TrellisSync",
            dependencies: [
                "Trellis", "TrellisSyncProtocol",
                .product(name: "WSClient", package: "swift-websocket"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .executableTarget(
            name: "TrellisSyncServer",
            dependencies: [
                "Trellis", "TrellisSyncProtocol",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // Scripts/sync-demo.sh: two clients of the seeds' Person/Dog models converge.
        .executableTarget(
            name: "TrellisSyncDemo",
            dependencies: ["Trellis", "TrellisSync"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // The sync tests' model that the client helper also opens (SyncTask): declared once here,
        // where both see it. No product.
        .target(
            name: "TrellisSyncTestModels",
            dependencies: ["Trellis"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // A sync client in a process of its own, for tests that run it under another clock
        // (`faketime`: ClockSkewProcessTests).
        .executableTarget(
            name: "TrellisSyncClientHelper",
            dependencies: ["Trellis", "TrellisSync", "TrellisSyncTestModels"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // Benchmarks/SyncBench (Scripts/bench-sync.sh, docs/BENCHMARKS.md "Sync"): upload and
        // download throughput and commit -> notification latency against PostgreSQL and a real
        // trellis-sync. Part of this package, not of Benchmarks/Package.swift, so it shares this
        // package's build of the server stack instead of building it a second time.
        .executableTarget(
            name: "SyncBench",
            // TrellisSyncProtocol and WSClient: the load test's raw protocol sessions (`--load`).
            dependencies: ["Trellis", "TrellisSync", "TrellisSyncProtocol",
                           .product(name: "WSClient", package: "swift-websocket")],
            path: "Benchmarks/SyncBench",
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // Integration tests of sync: a real PostgreSQL (Scripts/postgres.sh) and real servers.
        .testTarget(
            name: "TrellisSyncTests",
            dependencies: [
                "Trellis", "TrellisSync", "TrellisSyncProtocol", "TrellisSyncServer", "TrellisSyncClientHelper",
                "TrellisSyncTestModels", "TrellisTestSupport",
                // Raw protocol frames and test JWTs.
                .product(name: "WSClient", package: "swift-websocket"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Logging", package: "swift-log"),
                // SubscriptionSQLTests run the SQL of subscriptions directly.
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            // TRELLIS_LMDB: encrypted synced Realms (issue 38) are tested on TrellisStorage only.
            swiftSettings: [.swiftLanguageMode(.v6)] + engineDefines
        ),
        .testTarget(
            name: "TrellisTests",
            // CLMDB: the tests of the LMDB build's in-place page reads (TRELLIS_LMDB only).
            dependencies: ["Trellis", "TrellisProcessHelper", "TrellisLMDBFormat", "TrellisStorage", "TrellisTestSupport"]
                + (onLMDB ? ["CLMDB"] : []),
            // Read from the source tree by path (inputs found by the fuzzers).
            exclude: ["Resources"],
            swiftSettings: [.swiftLanguageMode(.v6)] + engineDefines
        ),
        // Writer and reader processes for TrellisStorageTests' kill test. No CLMDB: its
        // `hold-lmdb` mode loads liblmdb when it runs, so `swift build` needs no LMDB.
        .executableTarget(
            name: "TrellisStorageProcessHelper",
            dependencies: ["TrellisStorage", "TrellisLMDBFormat"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // TrellisStorage against LMDB (CLMDB is test-only here), simulated power loss, I/O errors.
        .testTarget(
            name: "TrellisStorageTests",
            dependencies: ["TrellisStorage", "TrellisStorageProcessHelper", "CLMDB", "TrellisLMDBFormat",
                           "TrellisTestSupport"],
            // Read from the source tree by path (inputs found by the storage fuzzer).
            exclude: ["Resources"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .testTarget(
            name: "TrellisLoggingTests",
            dependencies: ["TrellisLogging", .product(name: "Logging", package: "swift-log")],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)
