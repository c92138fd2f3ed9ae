import ArgumentParser
import BenchSupport
import Foundation

/// TrellisStorage against LMDB on the same operations, and durable commits against GRDB, in one
/// run with the peers interleaved (issue 35's benchmarks; docs/BENCHMARKS.md "Storage engine").
@main
struct StorageBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "StorageBench",
        abstract: "TrellisStorage vs LMDB (and GRDB for durable commits): medians of interleaved rounds.")

    @Option(help: "Entries in the tree for put, get and scan.")
    var entries: Int?
    @Option(help: "Random point reads per figure.")
    var reads: Int?
    @Option(help: "Durable commits (one put each) per engine and round.")
    var commits: Int?
    @Option(help: "Rounds; each figure is the median of the rounds.")
    var rounds: Int?
    @Option(help: "Entries and reads for the instruction counts under callgrind.")
    var instructionEntries: Int?
    @Flag(help: "Skip the instruction counts (no valgrind needed).")
    var noInstructions = false
    @Flag(help: "Print one JSON object instead of a table.")
    var json = false
    @Flag(help: "Small sizes and one round: checks that every measurement still runs.")
    var smoke = false
    @Option(help: "With instruction counts: keep the callgrind profiles in this folder (for callgrind_annotate).")
    var profiles: String?
    @Option(help: .hidden)
    var measureInstructions: String?

    mutating func run() throws {
        var sizes = StorageSizes()
        if smoke { sizes = StorageSizes(entries: 2_000, reads: 2_000, commits: 20, rounds: 1, instructionEntries: 2_000) }
        if let entries { sizes.entries = entries }
        if let reads { sizes.reads = reads }
        if let commits { sizes.commits = commits }
        if let rounds { sizes.rounds = rounds }
        if let instructionEntries { sizes.instructionEntries = instructionEntries }
        if let measureInstructions {
            try InstructionChild.run(measureInstructions, entries: sizes.instructionEntries)
            return
        }
        let quiet = json
        let log: (String) -> Void = { text in
            if !quiet { FileHandle.standardError.write(Data("… \(text)\n".utf8)) }
        }
        var report = try StorageRunner(sizes: sizes, log: log).run()
        if !noInstructions {
            report.instructions = try InstructionChild.measureAll(entries: sizes.instructionEntries,
                                                                  profiles: profiles.map { URL(fileURLWithPath: $0) },
                                                                  log: log)
        }
        print(json ? try report.json() : report.table())
    }
}

struct StorageSizes: Codable {
    var entries = 100_000
    var reads = 100_000
    var commits = 500
    var rounds = 5
    var instructionEntries = 50_000
}

/// `i` as an 8-byte big-endian key: byte order is numeric order.
func benchKey(_ i: Int) -> [UInt8] {
    withUnsafeBytes(of: UInt64(i).bigEndian) { Array($0) }
}

/// A 100-byte value that differs per key.
func benchValue(_ i: Int) -> [UInt8] {
    (0..<100).map { UInt8(truncatingIfNeeded: i &+ $0) }
}

/// A fixed-seed permutation of `0..<count` (SplitMix64), so every run puts the same keys.
func shuffledIndices(_ count: Int, seed: UInt64) -> [Int] {
    var state = seed
    var indices = Array(0..<count)
    for i in stride(from: count - 1, to: 0, by: -1) {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        indices.swapAt(i, Int(z % UInt64(i + 1)))
    }
    return indices
}

/// Seconds taken by `body`.
func timed(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}
