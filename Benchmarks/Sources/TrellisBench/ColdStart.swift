import ArgumentParser
import Foundation
import GRDB
import Trellis

/// W8: opening a file whose schema has 50 classes, in a fresh process each time (nothing
/// cached), and the peak memory of W1 in a fresh process per engine.
struct ColdStart {
    let sizes: Sizes
    let scratch: Scratch

    func rows() throws -> [Row] {
        let realmFile = scratch.file("fifty.realm"), sqliteFile = scratch.file("fifty.sqlite")
        try ChildProcess.createFiftyClassFiles(realm: realmFile, sqlite: sqliteFile)
        let (trellisInside, trellisOpen) = try opening("open-trellis", realmFile)
        let (grdbInside, grdbOpen) = try opening("open-grdb", sqliteFile)
        // The files W1 leaves are opened afterwards: that measures the structure check, which
        // reads the file.
        let w1Realm = scratch.file("mem.realm"), w1SQLite = scratch.file("mem.sqlite")
        let trellisMemory = try child("w1-memory-trellis", w1Realm.path, String(sizes.objects))
        let grdbMemory = try child("w1-memory-grdb", w1SQLite.path, String(sizes.objects))
        let megabytes = Self.mebibytes(w1Realm.path)
        // GRDB's database with whatever its WAL and shared memory still hold after it closed.
        let grdbMegabytes = [w1SQLite.path, w1SQLite.path + "-wal", w1SQLite.path + "-shm"].map(Self.mebibytes).reduce(0, +)
        let (checkedInside, _) = try opening("open-trellis-w1", w1Realm, "check")
        let (uncheckedInside, _) = try opening("open-trellis-w1", w1Realm, "no-check")
        let (grdbW1Inside, _) = try opening("open-grdb-w1", w1SQLite)
        return [
            Row("W8", String(format: "open W1's %.0f MiB file, structure check on (default), first read", megabytes),
                trellis: checkedInside, peers: [("DatabasePool + first read", grdbW1Inside)]),
            Row("W8", "the same with verifiesFileOnOpen = false", trellis: uncheckedInside,
                peers: [("DatabasePool + first read", grdbW1Inside)]),
            Row("W8", "open a 50-class file (measured inside a new process)", trellis: trellisInside,
                peers: [("DatabasePool + first read", grdbInside)]),
            Row("W8", "the same, whole process start to exit", trellis: trellisOpen,
                peers: [("DatabasePool + first read", grdbOpen)]),
            Row("W8", "peak memory of W1 (fresh process, max RSS; lower is better)", trellis: trellisMemory,
                peers: [("records", grdbMemory)], unit: "MiB"),
            Row("W8", "file size after W1 (lower is better)", trellis: megabytes,
                peers: [("records, with its WAL", grdbMegabytes)], unit: "MiB"),
        ]
    }

    /// The size of the file at `path` in MiB (0 if there is none).
    private static func mebibytes(_ path: String) -> Double {
        Double((try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0) / 1_048_576
    }

    /// Medians of opening `file` in a new process: as the child measures it (process start
    /// excluded) and as the parent sees it (start to exit), from the same runs.
    private func opening(_ child: String, _ file: URL, _ option: String = "") throws -> (inside: Double, whole: Double) {
        var inside = [Double]()
        let whole = try median(sizes.repetitions) { inside.append(try self.child(child, file.path, option)) }
        return (inside.sorted()[inside.count / 2], whole)
    }

    /// Runs this executable as a child and returns the number it prints.
    private func child(_ arguments: String...) throws -> Double {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = ["--child", arguments[0]] + arguments.dropFirst()
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0,
              let value = Double(String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
        else {
            throw ValidationError("child '\(arguments[0])' failed (status \(process.terminationStatus))")
        }
        return value
    }
}

/// What the child processes do.
enum ChildProcess {
    static func run(_ name: String, _ arguments: [String]) throws {
        switch name {
        case "open-trellis":
            let start = DispatchTime.now().uptimeNanoseconds
            var configuration = Realm.Configuration(fileURL: URL(fileURLWithPath: arguments[0]),
                                                    objectTypes: fiftyClasses)
            configuration.maximumFileSize = 8 << 30
            let realm = try Realm(configuration: configuration)
            let count = realm.objects(Fifty00.self).count
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            precondition(count == 1)
            print(seconds)
        case "open-grdb":
            let start = DispatchTime.now().uptimeNanoseconds
            let pool = try DatabasePool(path: arguments[0])
            let count = try pool.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM t00") ?? 0 }
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            precondition(count == 1)
            print(seconds)
        case "open-trellis-w1":
            let start = DispatchTime.now().uptimeNanoseconds
            var configuration = Realm.Configuration(fileURL: URL(fileURLWithPath: arguments[0]),
                                                    objectTypes: [BenchDog.self, BenchPerson.self])
            configuration.maximumFileSize = 8 << 30
            configuration.verifiesFileOnOpen = arguments.dropFirst().first != "no-check"
            let realm = try Realm(configuration: configuration)
            let first = realm.objects(BenchPerson.self).first?.name
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            precondition(first != nil)
            print(seconds)
        case "open-grdb-w1":
            let start = DispatchTime.now().uptimeNanoseconds
            let pool = try DatabasePool(path: arguments[0])
            let first = try pool.read { try PersonRecord.fetchOne($0) }
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            precondition(first != nil)
            print(seconds)
        case "w1-memory-trellis", "w1-memory-grdb":
            var sizes = Sizes()
            sizes.objects = Int(arguments[1]) ?? sizes.objects
            let scratch = Scratch(), sums = Checksums()
            let url = URL(fileURLWithPath: arguments[0])
            if name.hasSuffix("trellis") {
                let workloads = TrellisWorkloads(sizes: sizes, scratch: scratch, sums: sums)
                try workloads.insertPeopleWithDogs(workloads.open(url))
            } else {
                let workloads = GRDBWorkloads(sizes: sizes, scratch: scratch, sums: sums)
                try workloads.insertPeopleWithDogs(workloads.open(url))
            }
            print(peakResidentMiB())
        default:
            throw ValidationError("unknown child '\(name)'")
        }
    }

    /// The process's peak resident set (VmHWM). Not `getrusage`: its `ru_maxrss` carries the
    /// parent's peak into a spawned child.
    static func peakResidentMiB() -> Double {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            let kib = line.split(separator: " ").compactMap { Double($0) }.first ?? 0
            return kib / 1024
        }
        return 0
    }

    static func createFiftyClassFiles(realm: URL, sqlite: URL) throws {
        var configuration = Realm.Configuration(fileURL: realm, objectTypes: fiftyClasses)
        configuration.maximumFileSize = 8 << 30
        let trellis = try Realm(configuration: configuration)
        try trellis.write {
            for type in fiftyClasses {
                guard let objectType = type as? Object.Type else { continue }
                trellis.create(objectType, value: ["id": 1, "name": "one"])
            }
        }
        let pool = try DatabasePool(path: sqlite.path)
        try pool.write { db in
            for index in 0..<50 {
                let name = String(format: "t%02d", index)
                try db.create(table: name) { t in
                    t.primaryKey("id", .integer)
                    t.column("name", .text)
                    t.column("value", .double)
                    t.column("date", .datetime)
                    let next = t.column("nextId", .integer)
                    if index > 0 { next.references(String(format: "t%02d", index - 1)) }
                }
                try db.execute(sql: "INSERT INTO \(name) (id, name) VALUES (1, 'one')")
            }
        }
    }
}
