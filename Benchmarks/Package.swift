// swift-tools-version: 6.1
// Benchmarks live in their own package so the library never depends on what they compare with.
import PackageDescription

let package = Package(
    name: "TrellisBenchmarks",
    // The root package is referenced by its folder name, as SwiftPM names path dependencies.
    dependencies: [.package(path: "..")],
    targets: [
        // Cost of one managed property read and of a to-one hop (ns per call).
        .executableTarget(name: "ReadCost", dependencies: [.product(name: "Trellis", package: "main")]),
    ]
)
