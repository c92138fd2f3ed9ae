// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "Trellis",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "Trellis", targets: ["Trellis"]),
        .executable(name: "trellis", targets: ["TrellisCLI"]),
        // Trellis's log messages to swift-log, for servers (its own product: the core library
        // keeps no dependency).
        .library(name: "TrellisLogging", targets: ["TrellisLogging"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        // `swift package generate-documentation --target Trellis` (DocC).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.4.0"),
    ],
    targets: [
        // LMDB from the system (Debian: liblmdb-dev). Only Sources/Trellis/Storage imports it.
        .systemLibrary(
            name: "CLMDB",
            pkgConfig: "lmdb",
            providers: [.apt(["liblmdb-dev"]), .brew(["lmdb"])]
        ),
        .target(
            name: "Trellis",
            dependencies: ["CLMDB"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .executableTarget(
            name: "TrellisCLI",
            dependencies: [
                "Trellis",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .target(
            name: "TrellisLogging",
            dependencies: ["Trellis", .product(name: "Logging", package: "swift-log")],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // A second process for the persistence and isolation tests.
        .executableTarget(
            name: "TrellisProcessHelper",
            dependencies: ["Trellis"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .testTarget(
            name: "TrellisTests",
            dependencies: ["Trellis", "TrellisProcessHelper"],
            // Read from the source tree by path (inputs found by the fuzzers).
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
