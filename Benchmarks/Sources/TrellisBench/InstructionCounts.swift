import ArgumentParser
import Foundation
import Trellis

/// The operations of issue 18 measured in instructions (valgrind's callgrind), with the
/// figure realm-core, Realm's C++ engine, needs for the same work on this machine kind.
///
/// Instruction counts do not move with the machine's load, so they compare runs that wall-clock
/// figures cannot (the machine is shared).
enum InstructionWorkload: String, CaseIterable {
    case w1 = "W1", w2 = "W2", w3Build = "W3build", w3Iterate = "W3iterate", w4 = "W4", w5Lookup = "W5lookup",
         w5Scan = "W5scan", w7 = "W7", w6Commit = "W6commit"
    /// Not the brief's: `count` of a MutableSet and of a Map of 10 members (`--workloads C`).
    case setCount = "CsetCount", mapCount = "CmapCount"

    var operation: String {
        switch self {
        case .w1: "insert, per object (Dogs and Persons linking them, commit included)"
        case .w2: "`person.dog?.age`, per hop"
        case .w3Build: "build Lists, per list element"
        case .w3Iterate: "iterate a List, per element (`dog.age`)"
        case .w4: "`dog.owners.count`, per dog"
        case .w5Lookup: "`object(ofType:forPrimaryKey:)`, per lookup"
        case .w5Scan: "`filter(\"age > 40\").count`, per object scanned"
        case .w7: "enumerate, read `name` and `age`, per object"
        case .w6Commit: "a write transaction adding one Dog, per commit (no fsync)"
        case .setCount: "`owner.tags.count` of a MutableSet<Int> of 10, per set"
        case .mapCount: "`owner.scores.count` of a Map<String, Int> of 10, per map"
        }
    }

    /// realm-core's instructions for one operation (issues 18 and 19, measured side by side).
    var realmCore: Int? {
        switch self {
        case .w5Scan: 21
        case .w1: 9_219
        case .w2: 1_101
        case .w3Build: 10_854
        case .w3Iterate: 1_040
        case .w4: 507
        case .w5Lookup: 1_758
        case .w7: 513
        case .w6Commit, .setCount, .mapCount: nil  // not measured for realm-core
        }
    }

    /// Issue 18's (and for W5scan issue 19's) target for Trellis.
    var target: Int? {
        switch self {
        case .w5Scan: 40
        case .w1: 9_000
        case .w2: 1_000
        case .w3Build: 10_000
        case .w3Iterate: 1_000
        case .w4: 500
        case .w5Lookup: 1_500
        case .w7: 600
        case .w6Commit: nil  // issue 19: no higher than before column copies (see BENCHMARKS.md)
        case .setCount, .mapCount: nil
        }
    }
}

extension InstructionWorkload {
    /// Runs this workload in a child process of this executable under callgrind
    /// (``InstructionChild``), on an encrypted file when `encrypted`; the profile is named after
    /// the workload (with "-encrypted").
    func measure(sizes: Sizes, encrypted: Bool = false, in folder: URL, log: Bool) throws -> Callgrind.Measurement {
        let label = rawValue + (encrypted ? "-encrypted" : "")
        if log { FileHandle.standardError.write(Data("… \(label) under callgrind\n".utf8)) }
        return try Callgrind.measure(label, arguments: [
            "--measure-instructions", rawValue,
            "--objects", String(sizes.objects), "--list-owners", String(sizes.listOwners),
        ] + (encrypted ? ["--encrypted"] : []), in: folder)
    }
}

/// Runs each operation in its own process under callgrind and reports instructions per op.
struct InstructionCounter {
    let sizes: Sizes
    let selected: Set<String>
    /// Where to keep the callgrind profiles (for `callgrind_annotate`); nil to discard them.
    let profiles: URL?

    struct Result {
        var workload: InstructionWorkload
        var instructions: Int
        var operations: Int
        var perOperation: Double { Double(instructions) / Double(Swift.max(operations, 1)) }
    }

    var workloads: [InstructionWorkload] {
        InstructionWorkload.allCases.filter { workload in
            selected.contains { workload.rawValue.uppercased().hasPrefix($0) }
        }
    }

    func run(log: Bool) throws -> [Result] {
        let folder = try Callgrind.folder(kept: profiles)
        defer { folder.cleanUp() }
        var results = [Result]()
        for workload in workloads {
            let measurement = try workload.measure(sizes: sizes, in: folder.url, log: log)
            results.append(Result(workload: workload, instructions: measurement.instructions,
                                  operations: measurement.operations))
        }
        return results
    }

    static func table(_ results: [Result], sizes: Sizes) -> String {
        var lines = [
            "Instructions per operation (callgrind, collection on the workload only; \(sizes.objects) objects, "
                + "\(sizes.listOwners) owners x \(sizes.listLength) dogs, \(sizes.lookups) lookups)",
            "",
            "| workload | operation | Trellis | realm-core | Trellis / realm-core | target | met |",
            "|---|---|---:|---:|---:|---:|---|",
        ]
        for result in results {
            let workload = result.workload
            let perOperation = result.perOperation
            let reference = workload.realmCore.map { (grouped($0), String(format: "%.2fx", perOperation / Double($0))) }
                ?? ("—", "—")
            let goal = workload.target.map { ("≤ " + grouped($0), perOperation <= Double($0) ? "yes" : "no") } ?? ("—", "—")
            lines.append("| \(workload.rawValue) | \(workload.operation) | \(grouped(Int(perOperation.rounded()))) | "
                + "\(reference.0) | \(reference.1) | \(goal.0) | \(goal.1) |")
        }
        return lines.joined(separator: "\n")
    }

    static func json(_ results: [Result]) throws -> String {
        var object = [String: Int]()
        for result in results { object[result.workload.rawValue] = Int(result.perOperation.rounded()) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return String(decoding: try encoder.encode(object), as: UTF8.self)
    }
}

/// What one callgrind child does: builds the data (not collected), runs the operation once
/// untimed so one-time costs (type metadata, caches) stay out, then runs it inside
/// ``trellisMeasuredRegion()`` and prints how many operations that was.
enum InstructionChild {
    /// With `encryptionKey` every file of the workload is encrypted with it (`--encrypted`).
    static func run(_ name: String, sizes: Sizes, encryptionKey: Data? = nil) throws {
        guard let workload = InstructionWorkload(rawValue: name) else {
            throw ValidationError("unknown workload '\(name)' (one of \(InstructionWorkload.allCases.map(\.rawValue)))")
        }
        let scratch = Scratch(), sums = Checksums()
        let trellis = TrellisWorkloads(sizes: sizes, scratch: scratch, sums: sums, encryptionKey: encryptionKey)
        var warmUpSizes = sizes
        warmUpSizes.objects = Swift.min(sizes.objects, 50)
        warmUpSizes.listOwners = Swift.min(sizes.listOwners, 5)
        let warmUp = TrellisWorkloads(sizes: warmUpSizes, scratch: scratch, sums: sums, encryptionKey: encryptionKey)
        let operations: Int
        switch workload {
        case .w1:
            try warmUp.insertPeopleWithDogs(warmUp.open(scratch.file("warm-up.realm")))
            let realm = try trellis.open(scratch.file("w1.realm"))
            try measured { try trellis.insertPeopleWithDogs(realm) }
            operations = 2 * sizes.objects // a Dog and a Person each
        case .w3Build:
            try warmUp.insertListOwners(warmUp.open(scratch.file("warm-up.realm")))
            let realm = try trellis.open(scratch.file("w3.realm"))
            try measured { try trellis.insertListOwners(realm) }
            operations = sizes.listOwners * sizes.listLength
        case .w2, .w5Lookup, .w5Scan, .w7:
            let realm = try trellis.w1File()
            let pass: (Realm) -> Int = switch workload {
            case .w2: trellis.w2Pass
            case .w5Lookup: trellis.w5LookupPass
            case .w5Scan: trellis.w5ScanPass
            default: trellis.w7Pass
            }
            sums.record(name, pass(realm))
            try measured { sums.record(name, pass(realm)) }
            operations = workload == .w5Lookup ? sizes.lookups : sizes.objects
        case .w6Commit:
            // W6 without the fsync (which callgrind does not see): small write transactions.
            let warm = try trellis.open(scratch.file("w6-warm-up.realm"), sync: false)
            try commitDogs(warm, from: 0, count: 50)
            let realm = try trellis.open(scratch.file("w6.realm"), sync: false)
            try commitDogs(realm, from: 0, count: 300)  // the file holds a few chunks already
            let commits = 2_000
            try measured { try commitDogs(realm, from: 300, count: commits) }
            operations = commits
        case .setCount, .mapCount:
            let realm = try trellis.collectionsFile()
            let pass = workload == .setCount ? trellis.setCountPass : trellis.mapCountPass
            sums.record(name, pass(realm))
            try measured { sums.record(name, pass(realm)) }
            operations = sizes.listOwners
        case .w3Iterate, .w4:
            let realm = try trellis.w3File()
            let pass = workload == .w4 ? trellis.w4Pass : trellis.w3IteratePass
            sums.record(name, pass(realm))
            try measured { sums.record(name, pass(realm)) }
            operations = sizes.listOwners * sizes.listLength
        }
        print(operations)
    }
}

/// Adds `count` Dogs, one write transaction each (the W6 workload).
private func commitDogs(_ realm: Realm, from first: Int, count: Int) throws {
    for i in first..<(first + count) {
        try realm.write {
            let dog = BenchDog()
            dog.id = i
            dog.name = "dog \(i)"
            realm.add(dog)
        }
    }
}
