import BenchSupport
import Foundation

/// The figures of one run: seconds per operation (medians of the rounds) and instruction counts.
struct StorageReport {
    typealias Engine = StorageRunner.Engine
    typealias Operation = StorageRunner.Operation

    struct Row {
        var operation: Operation
        var secondsPerOperation: [Engine: Double]
        var samples: [Engine: [Double]]

        func perSecond(_ engine: Engine) -> Double? {
            secondsPerOperation[engine].map { 1 / max($0, 1e-12) }
        }
    }

    struct Instructions {
        var storageGet: Double
        var lmdbGet: Double
        var storageReadTransaction: Double
        var lmdbReadTransaction: Double
        /// User-space instructions per durable commit of one put (the sync's time is not counted).
        var storageCommit: Double
        var lmdbCommit: Double
        var entries: Int
    }

    var sizes: StorageSizes
    var machine: String
    var rows: [Row]
    /// TrellisStorage's I/O calls during its durable commits, and how many commits that was.
    var storageIO: StorageIO
    var storageCommits: Int
    var instructions: Instructions?

    /// `count` per durable commit of TrellisStorage.
    func perCommit(_ count: Int) -> Double { Double(count) / Double(max(storageCommits, 1)) }
    var storageSyncsPerCommit: Double { perCommit(storageIO.syncs) }

    func row(_ operation: Operation) -> Row? { rows.first { $0.operation == operation } }

    private static func format(_ seconds: Double) -> String {
        if seconds >= 1e-3 { return String(format: "%.2f ms", seconds * 1e3) }
        if seconds >= 1e-6 { return String(format: "%.2f µs", seconds * 1e6) }
        return String(format: "%.0f ns", seconds * 1e9)
    }

    func table() -> String {
        var lines = [
            "TrellisStorage vs LMDB (and GRDB, SQLite WAL synchronous = FULL, for durable commits): time per "
                + "operation, median of \(sizes.rounds) interleaved rounds; \(sizes.entries) entries (8-byte keys, "
                + "100-byte values), \(sizes.reads) reads, \(sizes.commits) durable commits per round.",
            "Machine: \(machine)",
            "",
            "| operation | TrellisStorage | LMDB | LMDB / TrellisStorage | GRDB | GRDB / TrellisStorage |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        for row in rows {
            guard let storage = row.secondsPerOperation[.storage] else { continue }
            let lmdb = row.secondsPerOperation[.lmdb]
            let grdb = row.secondsPerOperation[.grdb]
            lines.append("| \(row.operation.description) | \(Self.format(storage)) | "
                + "\(lmdb.map(Self.format) ?? "—") | \(lmdb.map { String(format: "%.2fx", $0 / storage) } ?? "—") | "
                + "\(grdb.map(Self.format) ?? "—") | \(grdb.map { String(format: "%.2fx", $0 / storage) } ?? "—") |")
        }
        lines.append("")
        if let commits = row(.durableCommit) {
            let storage = commits.perSecond(.storage) ?? 0, lmdb = commits.perSecond(.lmdb) ?? 0
            let grdb = commits.perSecond(.grdb) ?? 0
            let versusLMDB = storage / max(lmdb, 1e-9), versusGRDB = storage / max(grdb, 1e-9)
            lines.append("Durable commits/s: TrellisStorage \(Int(storage.rounded())), LMDB \(Int(lmdb.rounded())), "
                + "GRDB \(Int(grdb.rounded())): " + String(format: "%.2fx", versusLMDB)
                + " LMDB (target >= 2x: \(versusLMDB >= 2 ? "met" : "not met")), " + String(format: "%.2fx", versusGRDB)
                + " GRDB (target >= 1x: \(versusGRDB >= 1 ? "met" : "not met")). TrellisStorage syncs per commit: "
                + String(format: "%.2f", storageSyncsPerCommit) + " (counted by its I/O layer), with "
                + String(format: "%.2f", perCommit(storageIO.writes)) + " pwrite calls of "
                + String(format: "%.2f", perCommit(storageIO.bytes) / 4096) + " pages and "
                + String(format: "%.3f", perCommit(storageIO.truncates)) + " ftruncate calls.")
        }
        if let instructions {
            let ratio = instructions.storageGet / max(instructions.lmdbGet, 1)
            lines.append("Instructions per random point get (callgrind, \(instructions.entries) entries, warm, one read "
                + "transaction): TrellisStorage \(Int(instructions.storageGet.rounded())), LMDB "
                + "\(Int(instructions.lmdbGet.rounded())): " + String(format: "%.2fx", ratio)
                + " (target <= 1.1x: \(ratio <= 1.1 ? "met" : "not met")). Per read transaction (begin + one get + "
                + "end): TrellisStorage \(Int(instructions.storageReadTransaction.rounded())), LMDB "
                + "\(Int(instructions.lmdbReadTransaction.rounded())). Per durable commit of one put (user space, "
                + "the sync not counted): TrellisStorage \(Int(instructions.storageCommit.rounded())), LMDB "
                + "\(Int(instructions.lmdbCommit.rounded())).")
        }
        return lines.joined(separator: "\n")
    }

    func json() throws -> String {
        var object: [String: Any] = [
            "machine": machine,
            "entries": sizes.entries, "reads": sizes.reads, "commits": sizes.commits, "rounds": sizes.rounds,
            "storageSyncsPerCommit": storageSyncsPerCommit,
            "storageWritesPerCommit": perCommit(storageIO.writes),
            "storagePagesWrittenPerCommit": perCommit(storageIO.bytes) / 4096,
            "storageTruncatesPerCommit": perCommit(storageIO.truncates),
        ]
        if let commits = row(.durableCommit) {
            object["storageDurableCommitsPerSecond"] = commits.perSecond(.storage)
            object["lmdbDurableCommitsPerSecond"] = commits.perSecond(.lmdb)
            object["grdbDurableCommitsPerSecond"] = commits.perSecond(.grdb)
            object["durableCommitSamplesSeconds"] = Dictionary(uniqueKeysWithValues: commits.samples.map {
                ($0.key.rawValue, $0.value.map { $0 * Double(sizes.commits) })
            })
        }
        var nanoseconds: [String: [String: Double]] = [:]
        for row in rows {
            nanoseconds[row.operation.rawValue] = Dictionary(uniqueKeysWithValues: row.secondsPerOperation.map {
                ($0.key.rawValue, ($0.value * 1e9 * 10).rounded() / 10)
            })
        }
        object["nanosecondsPerOperation"] = nanoseconds
        if let instructions {
            object["storageGetInstructions"] = Int(instructions.storageGet.rounded())
            object["lmdbGetInstructions"] = Int(instructions.lmdbGet.rounded())
            object["storageReadTransactionInstructions"] = Int(instructions.storageReadTransaction.rounded())
            object["lmdbReadTransactionInstructions"] = Int(instructions.lmdbReadTransaction.rounded())
            object["storageCommitInstructions"] = Int(instructions.storageCommit.rounded())
            object["lmdbCommitInstructions"] = Int(instructions.lmdbCommit.rounded())
            object["instructionEntries"] = instructions.entries
        }
        let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }
}

enum Machine {
    /// CPU model, cores, memory and the file system the scratch files live on.
    static func describe(path: String) -> String {
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let model = cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
            .map { $0.split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "" }
            ?? "unknown CPU"
        let memory = Double(ProcessInfo.processInfo.physicalMemory) / Double(1 << 30)
        var fileSystem = "unknown file system"
        if let mounts = try? String(contentsOfFile: "/proc/mounts", encoding: .utf8) {
            var best = ""
            for line in mounts.split(separator: "\n") {
                let fields = line.split(separator: " ")
                guard fields.count >= 3 else { continue }
                let point = String(fields[1])
                if path.hasPrefix(point), point.count > best.count {
                    best = point
                    fileSystem = "\(fields[2]) on \(fields[0]) (\(point))"
                }
            }
        }
        let cores = ProcessInfo.processInfo.activeProcessorCount
        return "\(model), \(cores) cores, \(Int(memory.rounded())) GiB; files on \(fileSystem)"
    }
}
