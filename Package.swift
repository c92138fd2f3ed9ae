// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "Trellis",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "Trellis", targets: ["Trellis"]),
        .executable(name: "trellis", targets: ["TrellisCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
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
    ]
)
