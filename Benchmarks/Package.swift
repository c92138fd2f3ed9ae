// swift-tools-version: 6.1
// Benchmarks live in their own package so the library never depends on what they compare with.
import Foundation
import PackageDescription

// SwiftPM names a path dependency after its folder, so the root package's identity is the name of
// whatever folder the repository was cloned into (lowercased).
let rootPackage = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .lastPathComponent.lowercased()

let package = Package(
    name: "TrellisBenchmarks",
    // As the root package (a package may not target lower versions than one it depends on).
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        // What the benchmark executables share: timing, scratch files, callgrind counts.
        .target(name: "BenchSupport"),
        // W1-W8 of the brief on Trellis and on GRDB, side by side in one process.
        .executableTarget(name: "TrellisBench", dependencies: [
            "BenchSupport",
            .product(name: "Trellis", package: rootPackage),
            // Only for the decrypted-page cache's default bound, which `--encrypted` reports.
            .product(name: "TrellisStorage", package: rootPackage),
            .product(name: "GRDB", package: "GRDB.swift"),
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        // LMDB from the system (liblmdb-dev), StorageBench's peer. Its own module name: the root
        // package's CLMDB is not a product.
        .systemLibrary(name: "CLMDBPeer", pkgConfig: "lmdb", providers: [.apt(["liblmdb-dev"])]),
        // TrellisStorage (issue 35) against LMDB on the same operations, and durable commits
        // against GRDB (SQLite WAL, synchronous = FULL): `bash Scripts/bench.sh --storage`.
        .executableTarget(name: "StorageBench", dependencies: [
            "BenchSupport", "CLMDBPeer",
            .product(name: "TrellisStorage", package: rootPackage),
            .product(name: "GRDB", package: "GRDB.swift"),
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        // Cost of one managed property read and of a to-one hop (ns per call).
        .executableTarget(name: "ReadCost", dependencies: [.product(name: "Trellis", package: rootPackage)]),
    ]
)
