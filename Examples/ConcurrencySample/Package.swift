// swift-tools-version: 6.1
// A Swift 6 program (complete concurrency checking, warnings as errors) that opens a Realm on
// an actor, writes with asyncWrite, and hands frozen objects and results to other actors.
// `bash Scripts/concurrency-sample.sh` builds and runs it; the test script does too.
import Foundation
import PackageDescription

// SwiftPM names a path dependency after its folder (see Benchmarks/Package.swift).
let rootPackage = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().lastPathComponent.lowercased()

let package = Package(
    name: "ConcurrencySample",
    dependencies: [.package(path: "../..")],
    targets: [
        // Compile-only: Realm-app helper code generic over RealmCollection and AnyRealmCollection.
        .target(
            name: "RealmAppHelpers",
            dependencies: [.product(name: "Trellis", package: rootPackage)],
            swiftSettings: [
                .swiftLanguageMode(.v6),
                .unsafeFlags(["-warnings-as-errors"]),
            ]
        ),
        .executableTarget(
            name: "ConcurrencySample",
            dependencies: [.product(name: "Trellis", package: rootPackage)],
            swiftSettings: [
                .swiftLanguageMode(.v6),
                .unsafeFlags(["-warnings-as-errors"]),
            ]
        ),
    ]
)
