import BenchSupport
import Foundation

/// Instructions per random point get, per read transaction and per durable commit (user space: a
/// sync's wait is not an instruction), under callgrind: each count runs in its own child process
/// (`--measure-instructions`), the way TrellisBench's `--instructions` does (BenchSupport's
/// `Callgrind`); only ``trellisMeasuredRegion()`` is collected.
enum InstructionChild {
    static let kinds = ["storage-get", "lmdb-get", "storage-transaction", "lmdb-transaction", "storage-commit",
                        "lmdb-commit"]
    /// Durable commits measured per commit count (their syncs make them slow under callgrind).
    static let measuredCommits = 200

    static func measureAll(entries: Int, profiles: URL?, log: (String) -> Void) throws -> StorageReport.Instructions {
        let folder = try Callgrind.folder(kept: profiles)
        defer { folder.cleanUp() }
        var perOperation: [String: Double] = [:]
        for kind in kinds {
            log("\(kind) under callgrind")
            perOperation[kind] = try Callgrind.measure(kind, arguments: [
                "--measure-instructions", kind, "--instruction-entries", String(entries),
            ], in: folder.url).perOperation
        }
        return StorageReport.Instructions(storageGet: perOperation["storage-get"] ?? 0,
                                          lmdbGet: perOperation["lmdb-get"] ?? 0,
                                          storageReadTransaction: perOperation["storage-transaction"] ?? 0,
                                          lmdbReadTransaction: perOperation["lmdb-transaction"] ?? 0,
                                          storageCommit: perOperation["storage-commit"] ?? 0,
                                          lmdbCommit: perOperation["lmdb-commit"] ?? 0,
                                          entries: entries)
    }

    /// Builds a tree of `entries` entries (not collected), runs the operation once untimed so
    /// that one-time costs (first-read checksums, page faults, metadata) stay out, then runs it
    /// inside ``trellisMeasuredRegion()`` and prints how many operations that was.
    static func run(_ kind: String, entries: Int) throws {
        guard kinds.contains(kind) else { throw LMDBFailure(description: "unknown measurement '\(kind)' (one of \(kinds))") }
        let scratch = Scratch()
        let path = scratch.file("instructions").path
        let peer: KeyValuePeer = kind.hasPrefix("storage") ? try StoragePeer(path: path) : try LMDBPeer(path: path)
        defer { peer.close() }
        let keys = shuffledIndices(entries, seed: 35).map(benchKey)
        try peer.putAll(keys, value: benchValue(7), append: false)
        let reads = Array(shuffledIndices(entries, seed: 37).map(benchKey).prefix(max(entries / 2, 1)))
        let operations: Int
        var sum = 0
        if kind.hasSuffix("get") {
            sum &+= try peer.getAll(reads)
            try measured { sum &+= try peer.getAll(reads) }
            operations = reads.count
        } else if kind.hasSuffix("commit") {
            // New keys among the tree's, one durable commit each (as the timed durable commits).
            let keys = shuffledIndices(Self.measuredCommits + 10, seed: 38).map { benchKey(entries + $0) }
            try peer.commitEach(Array(keys.prefix(10)), value: benchValue(7))
            try measured { try peer.commitEach(Array(keys.dropFirst(10)), value: benchValue(7)) }
            sum &+= try peer.getAll(keys)
            operations = Self.measuredCommits
        } else {
            let count = max(entries / 10, 1)
            sum &+= try peer.readTransactions(count, key: reads[0])
            try measured { sum &+= try peer.readTransactions(count, key: reads[0]) }
            operations = count
        }
        guard sum > 0 else { throw LMDBFailure(description: "\(kind): read nothing") }
        print(operations)
    }
}
