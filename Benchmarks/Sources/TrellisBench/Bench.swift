import ArgumentParser
import Foundation
import GRDB
import Trellis

/// Runs W1-W8 of the brief on Trellis and GRDB in one process and prints one table.
@main
struct Bench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "TrellisBench",
        abstract: "Trellis vs GRDB on the brief's workloads W1-W8 (medians, GRDB time / Trellis time).")

    @Option(help: "Comma-separated workloads to run (W1,…,W8).")
    var workloads = "W1,W2,W3,W4,W5,W6,W7,W8"
    @Option(help: "Objects for W1, W2, W5, W7.")
    var objects: Int?
    @Option(help: "People with a List of dogs for W3, W4.")
    var listOwners: Int?
    @Option(help: "Durable write transactions for W6.")
    var commits: Int?
    @Option(help: "Repetitions per figure (the median is reported).")
    var repetitions: Int?
    @Flag(help: "Print JSON instead of a table.")
    var json = false
    @Flag(help: "Small counts and one repetition: checks that every workload still runs.")
    var smoke = false
    @Flag(help: "Instructions per operation (valgrind's callgrind) of issue 18's seven operations, against realm-core.")
    var instructions = false
    @Flag(help: ArgumentHelp(
        "W1, W2, W5 and W7 on a plain and on an encrypted file (encryptionKey), with the ratio; with "
            + "--instructions, instructions per operation of both.",
        discussion: "Needs Trellis built on TrellisStorage (the default build): the LMDB build "
            + "(TRELLIS_STORAGE_ENGINE=lmdb) cannot encrypt. `bash Scripts/bench.sh --encrypted` always builds the default one."))
    var encrypted = false
    @Option(help: "With --instructions: keep the callgrind profiles in this folder (for callgrind_annotate).")
    var profiles: String?
    @Option(help: .hidden)
    var child: String?
    @Option(help: .hidden)
    var measureInstructions: String?
    @Argument(help: .hidden)
    var childArguments: [String] = []

    mutating func run() throws {
        if let child {
            try ChildProcess.run(child, childArguments)
            return
        }
        var sizes = Sizes()
        if instructions || measureInstructions != nil {
            sizes = Sizes(objects: 10_000, listOwners: 1_000, listLength: 10, commits: 0, lookups: 10_000, repetitions: 1)
        }
        if smoke {
            sizes = Sizes(objects: 2_000, listOwners: 200, listLength: 10, commits: 50, lookups: 500, repetitions: 1)
            if instructions { (sizes.objects, sizes.listOwners) = (300, 30) }
        }
        if let objects { sizes.objects = objects }
        if let listOwners { sizes.listOwners = listOwners }
        if let commits { sizes.commits = commits }
        if let repetitions { sizes.repetitions = repetitions }
        sizes.lookups = Swift.min(sizes.lookups, sizes.objects)
        let selected = Set(workloads.uppercased().split(separator: ",").map(String.init))
        if let measureInstructions {
            try InstructionChild.run(measureInstructions, sizes: sizes,
                                     encryptionKey: encrypted ? BenchEncryption.key : nil)
            return
        }
        if encrypted {
            try runEncrypted(sizes: sizes, selected: selected)
            return
        }
        if instructions {
            let counter = InstructionCounter(sizes: sizes, selected: selected,
                                             profiles: profiles.map { URL(fileURLWithPath: $0) })
            let results = try counter.run(log: !json)
            print(json ? try InstructionCounter.json(results) : InstructionCounter.table(results, sizes: sizes))
            return
        }
        let rows = try Runner(sizes: sizes, selected: selected, log: !json).run()
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            let report = JSONReport(sizes: sizes, rows: rows)
            print(String(decoding: try encoder.encode(report), as: UTF8.self))
        } else {
            print(Report.table(rows))
        }
    }
}

extension Bench {
    /// `--encrypted`: the plain/encrypted comparison, in wall-clock time or (`--instructions`)
    /// instructions per operation.
    func runEncrypted(sizes: Sizes, selected: Set<String>) throws {
        do {
            try BenchEncryption.requireSupport(scratch: Scratch())
        } catch let error as BenchEncryption.Unsupported {
            FileHandle.standardError.write(Data("TrellisBench: \(error)\n".utf8))
            throw ExitCode(2)
        }
        if instructions {
            let counter = EncryptionInstructionCounter(sizes: sizes, selected: selected,
                                                       profiles: profiles.map { URL(fileURLWithPath: $0) })
            let results = try counter.run(log: !json)
            print(json ? try EncryptionInstructionCounter.json(results)
                : EncryptionInstructionCounter.table(results, sizes: sizes))
            return
        }
        let report = try EncryptionRunner(sizes: sizes, selected: selected, log: !json).run()
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(report), as: UTF8.self))
        } else {
            print(EncryptionReport.table(report))
        }
    }
}

struct JSONReport: Codable {
    var sizes: Sizes
    var rows: [Row]
    /// Issue 37's file-size target, from W8's "file size after W1" row (nil without W8): the
    /// Trellis file in bytes, and GRDB's database with its WAL and shared memory.
    var W1FileBytes: Int?
    var W1GRDBFileBytes: Int?

    init(sizes: Sizes, rows: [Row]) {
        self.sizes = sizes
        self.rows = rows
        if let size = rows.first(where: { $0.workload == "W8" && $0.measure.hasPrefix("file size after W1") }) {
            W1FileBytes = Int((size.trellis * 1_048_576).rounded())
            W1GRDBFileBytes = size.peers.first.map { Int(($0.seconds * 1_048_576).rounded()) }
        }
    }
}

/// Runs the selected workloads in order, each engine on its own fresh files.
/// What a benchmark runner is given: the sizes, the workloads chosen, and whether to say on
/// stderr what it is running (``progress(_:)``).
protocol BenchRunner {
    var sizes: Sizes { get }
    var selected: Set<String> { get }
    var log: Bool { get }
}

extension BenchRunner {
    func progress(_ text: String) {
        if log { FileHandle.standardError.write(Data("… \(text)\n".utf8)) }
    }
}

struct Runner: BenchRunner {
    let sizes: Sizes
    let selected: Set<String>
    let log: Bool

    func run() throws -> [Row] {
        let scratch = Scratch(), sums = Checksums()
        let trellis = TrellisWorkloads(sizes: sizes, scratch: scratch, sums: sums)
        let grdb = GRDBWorkloads(sizes: sizes, scratch: scratch, sums: sums)
        var rows = [Row]()
        let n = sizes.objects, owners = sizes.listOwners

        if selected.contains("W1") {
            progress("W1 insert")
            let grdbInsert = try grdb.w1Insert()
            rows.append(Row("W1", "insert \(n) Dog + \(n) Person (to-one), one transaction",
                            trellis: try trellis.w1Insert(), peers: [("records", grdbInsert)]))
            // GRDB's default commit (WAL, synchronous = NORMAL) does not fsync; Trellis's does.
            rows.append(Row("W1", "the same, Trellis committing without fsync like GRDB's default",
                            trellis: try trellis.w1Insert(sync: false), peers: [("records", grdbInsert)]))
        }
        if !selected.isDisjoint(with: ["W2", "W5", "W7"]) {
            progress("W2/W5/W7 data")
            let realm = try trellis.w1File(), pool = try grdb.w1File()
            if selected.contains("W2") {
                progress("W2 to-one")
                rows.append(Row("W2", "sum person.dog.age over \(n) Persons", trellis: trellis.w2ToOne(realm),
                                peers: [("per-row association", try grdb.w2PerRow(pool)),
                                        ("including(required:)", try grdb.w2Eager(pool))]))
            }
            if selected.contains("W5") {
                progress("W5 queries")
                rows.append(Row("W5", "count age > 40 over \(n) Dogs (scan)", trellis: trellis.w5Scan(realm),
                                peers: [("COUNT(*)", try grdb.w5Scan(pool))]))
                rows.append(Row("W5", "sum(of: \\.age) over \(n) Dogs", trellis: trellis.w5Sum(realm),
                                peers: [("SUM(age)", try grdb.w5Sum(pool))]))
                rows.append(Row("W5", "average(ofProperty: \"age\") as Double over \(n) Dogs",
                                trellis: trellis.w5Average(realm), peers: [("AVG(age)", try grdb.w5Average(pool))]))
                rows.append(Row("W5", "min(of: \\.age) and max(of: \\.age) over \(n) Dogs",
                                trellis: trellis.w5MinMax(realm),
                                peers: [("MIN(age), MAX(age) in one query", try grdb.w5MinMax(pool))]))
                rows.append(Row("W5", "count age > 40 AND name BEGINSWITH 'dog 1' over \(n) Dogs",
                                trellis: trellis.w5Prefix(realm),
                                peers: [("COUNT(*), name >= 'dog 1' AND name < 'dog 2'", try grdb.w5Prefix(pool))]))
                rows.append(Row("W5", "sorted(by: \\.age), read the first 100 ages, over \(n) Dogs",
                                trellis: trellis.w5Sorted(realm),
                                peers: [("ORDER BY age LIMIT 100, age column", try grdb.w5SortedAges(pool)),
                                        ("the same, records (SELECT *)", try grdb.w5SortedRecords(pool))]))
                rows.append(Row("W5", "count dog.age > 10 over \(n) Persons (across the link)",
                                trellis: trellis.w5Link(realm), peers: [("JOIN COUNT(*)", try grdb.w5Link(pool))]))
                rows.append(Row("W5", "\(sizes.lookups) primary-key lookups", trellis: trellis.w5Lookup(realm),
                                peers: [("fetchOne(key:)", try grdb.w5Lookup(pool))]))
            }
            if selected.contains("W7") {
                progress("W7 enumerate")
                rows.append(Row("W7", "enumerate \(n) Dogs, read name and age", trellis: trellis.w7Enumerate(realm),
                                peers: [("fetchAll records", try grdb.w7FetchAll(pool)),
                                        ("fetchCursor", try grdb.w7Cursor(pool))]))
            }
        }
        if selected.contains("W3") || selected.contains("W4") {
            if selected.contains("W3") {
                progress("W3 build")
                rows.append(Row("W3", "build \(owners) Persons x \(sizes.listLength) Dogs in a List",
                                trellis: try trellis.w3Build(), peers: [("records + join table", try grdb.w3Build())]))
            }
            progress("W3/W4 data")
            let realm = try trellis.w3File(), pool = try grdb.w3File()
            if selected.contains("W3") {
                progress("W3 iterate")
                rows.append(Row("W3", "sum ages over every List (\(owners * sizes.listLength) elements)",
                                trellis: trellis.w3Iterate(realm),
                                peers: [("per-row association", try grdb.w3PerRow(pool)),
                                        ("including(all:)", try grdb.w3Eager(pool))]))
            }
            if selected.contains("W4") {
                progress("W4 backlinks")
                rows.append(Row("W4", "count each Dog's owners (\(owners * sizes.listLength) Dogs)",
                                trellis: trellis.w4Backlinks(realm),
                                peers: [("per-row COUNT", try grdb.w4PerRow(pool)),
                                        ("one GROUP BY", try grdb.w4Grouped(pool))]))
            }
        }
        if selected.contains("W6") {
            progress("W6 durable commits")
            rows.append(Row("W6", "\(sizes.commits) durable commits (fsync / synchronous=FULL)",
                            trellis: try trellis.w6Commits(sync: true),
                            peers: [("synchronous=FULL", try grdb.w6Commits(synchronous: "FULL"))]))
            rows.append(Row("W6", "\(sizes.commits) relaxed commits (no fsync / synchronous=NORMAL)",
                            trellis: try trellis.w6Commits(sync: false),
                            peers: [("synchronous=NORMAL", try grdb.w6Commits(synchronous: "NORMAL"))]))
        }
        if selected.contains("W8") {
            progress("W8 cold open and peak memory")
            rows += try ColdStart(sizes: sizes, scratch: scratch).rows()
        }
        return rows
    }
}
