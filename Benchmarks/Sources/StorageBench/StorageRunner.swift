import BenchSupport
import Foundation

/// Runs every operation on each engine, round after round, alternating which engine goes first,
/// each on its own fresh files; reports the median of the rounds.
struct StorageRunner {
    let sizes: StorageSizes
    let log: (String) -> Void
    /// Durable commits an engine makes before the next engine's turn.
    static let commitsPerTurn = 10

    enum Operation: String, CaseIterable, Codable {
        case randomPut, append, firstScan, scan, randomGet, durableCommit

        var description: String {
            switch self {
            case .randomPut: "random put (one transaction, keys in a fixed random order)"
            case .append: "append (one transaction, ascending keys; LMDB: MDB_APPEND)"
            case .firstScan: "sequential scan, first read of the pages in this process"
            case .scan: "sequential scan, again"
            case .randomGet: "random point get (one read transaction)"
            case .durableCommit: "durable commit of one put (a sync per commit)"
            }
        }
    }

    enum Engine: String, CaseIterable, Codable {
        case storage = "TrellisStorage", lmdb = "LMDB", grdb = "GRDB"
    }

    func run() throws -> StorageReport {
        let scratch = Scratch()
        let random = shuffledIndices(sizes.entries, seed: 35)
        let randomKeys = random.map(benchKey)
        let ascendingKeys = (0..<sizes.entries).map(benchKey)
        let readKeys = (0..<sizes.reads).map { randomKeys[$0 % randomKeys.count] }
        let commitKeys = shuffledIndices(sizes.commits, seed: 36).map(benchKey)
        let value = benchValue(7)
        var samples: [Operation: [Engine: [Double]]] = [:]
        var io = (counts: StorageIO(syncs: 0, writes: 0, bytes: 0, truncates: 0), commits: 0)
        var checksums: [Operation: Int] = [:]
        func record(_ operation: Operation, _ engine: Engine, _ seconds: Double, operations: Int) {
            samples[operation, default: [:]][engine, default: []].append(seconds / Double(max(operations, 1)))
        }
        func agree(_ operation: Operation, _ sum: Int) throws {
            if let previous = checksums[operation], previous != sum {
                throw LMDBFailure(description: "\(operation.rawValue): the engines read different data (\(previous) vs \(sum))")
            }
            checksums[operation] = sum
        }
        func open(_ engine: Engine, _ name: String) throws -> KeyValuePeer {
            let path = scratch.file("\(name).\(engine == .storage ? "trls" : "mdb")").path
            return engine == .storage ? try StoragePeer(path: path) : try LMDBPeer(path: path)
        }

        for round in 0..<sizes.rounds {
            let engines: [Engine] = round % 2 == 0 ? [.storage, .lmdb] : [.lmdb, .storage]
            for engine in engines {
                log("round \(round + 1)/\(sizes.rounds): \(engine.rawValue) put, scan, get, append")
                let peer = try open(engine, "random")
                record(.randomPut, engine, try timed { try peer.putAll(randomKeys, value: value, append: false) },
                       operations: sizes.entries)
                var sum = 0
                record(.firstScan, engine, try timed { sum = try peer.scan() }, operations: sizes.entries)
                try agree(.firstScan, sum)
                record(.scan, engine, try timed { sum = try peer.scan() }, operations: sizes.entries)
                try agree(.scan, sum)
                record(.randomGet, engine, try timed { sum = try peer.getAll(readKeys) }, operations: sizes.reads)
                try agree(.randomGet, sum)
                peer.close()
                let appended = try open(engine, "append")
                record(.append, engine, try timed { try appended.putAll(ascendingKeys, value: value, append: true) },
                       operations: sizes.entries)
                appended.close()
            }
            // Durable commits: the disk's flush latency on this shared machine moves by 10x from one
            // second to the next, so the three engines take turns every few commits (first one
            // rotating) and each round's figure is an engine's total over the same stretch of time.
            log("round \(round + 1)/\(sizes.rounds): \(sizes.commits) durable commits on each engine, interleaved")
            let storage = try StoragePeer(path: scratch.file("commits.trls").path)
            let lmdb = try LMDBPeer(path: scratch.file("commits.mdb").path)
            let grdb = try GRDBPeer(path: scratch.file("commits.sqlite").path)
            let committers: [(Engine, ([[UInt8]]) throws -> Void)] = [
                (.storage, { try storage.commitEach($0, value: value) }),
                (.lmdb, { try lmdb.commitEach($0, value: value) }),
                (.grdb, { try grdb.commitEach($0, value: value) }),
            ]
            var totals: [Engine: Double] = [:]
            let ioBefore = storage.io
            for (turn, start) in stride(from: 0, to: commitKeys.count, by: Self.commitsPerTurn).enumerated() {
                let keys = Array(commitKeys[start..<min(start + Self.commitsPerTurn, commitKeys.count)])
                for index in 0..<committers.count {
                    let (engine, commit) = committers[(index + turn + round) % committers.count]
                    totals[engine, default: 0] += try timed { try commit(keys) }
                }
            }
            io.counts = io.counts + (storage.io - ioBefore)
            io.commits += sizes.commits
            for (engine, seconds) in totals { record(.durableCommit, engine, seconds, operations: sizes.commits) }
            storage.close()
            lmdb.close()
            try grdb.close()
        }
        var rows: [StorageReport.Row] = []
        for operation in Operation.allCases {
            var medians: [Engine: Double] = [:]
            for (engine, values) in samples[operation] ?? [:] { medians[engine] = values.sorted()[values.count / 2] }
            rows.append(StorageReport.Row(operation: operation, secondsPerOperation: medians,
                                          samples: samples[operation] ?? [:]))
        }
        return StorageReport(sizes: sizes, machine: Machine.describe(path: scratch.url.path), rows: rows,
                             storageIO: io.counts, storageCommits: io.commits)
    }
}
