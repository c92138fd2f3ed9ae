// swift-tools-version: 6.1
// libFuzzer targets, in their own package because they are built with
// `-sanitize=fuzzer,address -parse-as-library` (libFuzzer provides `main`). Run them with
// `bash Scripts/fuzz.sh [SECONDS]`.
import Foundation
import PackageDescription

// SwiftPM names a path dependency after its folder (see Benchmarks/Package.swift).
let rootPackage = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .lastPathComponent.lowercased()

let package = Package(
    name: "TrellisFuzz",
    dependencies: [.package(path: "..")],
    targets: [
        // Query text (NSPredicate / RQL) parsed, checked against a schema and evaluated.
        .executableTarget(name: "FuzzQuery", dependencies: [.product(name: "Trellis", package: rootPackage)]),
        // Arbitrary bytes opened as a database file, then read through.
        .executableTarget(name: "FuzzFile", dependencies: [.product(name: "Trellis", package: rootPackage)]),
        // Extended JSON documents imported through the model classes and through a file's stored
        // schema (`trellis import`).
        .executableTarget(name: "FuzzExtendedJSON", dependencies: [.product(name: "Trellis", package: rootPackage)]),
        // App Services schema.json / relationships.json read into Swift models (`trellis schema codegen`).
        .executableTarget(name: "FuzzSchema", dependencies: [.product(name: "Trellis", package: rootPackage)]),
    ]
)
