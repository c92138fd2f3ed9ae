// A second process for Trellis's persistence, isolation and crash tests.
//   TrellisProcessHelper write PATH N          adds N ProcessDog objects in one transaction
//   TrellisProcessHelper write-many PATH N     adds N ProcessDog objects, one per transaction
//   TrellisProcessHelper count PATH            prints the number of ProcessDog objects
//   TrellisProcessHelper count-read-only PATH  the same, opened with readOnly: true
//   TrellisProcessHelper as-user NAME COMMAND PATH …  runs COMMAND as the user NAME (needs root; UnprivilegedUser)
//   TrellisProcessHelper crash-write PATH SEED writes random transactions until killed
//   TrellisProcessHelper crash-check PATH [SINCE]  checks a crash-test file, prints JSON: all of it, or
//                                              (SINCE) what transactions after SINCE wrote, changed or deleted
//   TrellisProcessHelper read-damaged PATH     opens a damaged file read-only and reads it through
//   TrellisProcessHelper flip-make PATH N      writes the flip test's file (every kind of property, N objects)
//   TrellisProcessHelper flip-read PATH        reads all of it read-only; prints "read N objects digest D" or
//                                              "error: …"
//   TrellisProcessHelper count-untyped PATH    opens without objectTypes (as `try Realm()` does); prints
//                                              "count isEmpty" of ProcessDog
//   TrellisProcessHelper hold-readers PATH N   commits N tiny transactions, freezing the Realm after each (one
//                                              reader slot per frozen version); prints "holding N"; waits to be killed
//   TrellisProcessHelper hold-write PATH FLAG  adds one ProcessDog in a write that stays open until the
//                                              file FLAG exists (at most 60 s); prints "holding" first
//   TrellisProcessHelper soak PATH POOLS INSTANCE SECONDS SEED
//                                              one soak-test thread per pool (POOLS: "0,1,2"), see SoakWorkload
//   TrellisProcessHelper soak-check PATH       the soak file's consistency problems and ids, as JSON
// The crash test's other victims and their checks (CrashScenarios; each victim runs until done or killed):
//   crash-read PATH                    reads the crash-write file in a loop, freezing versions
//   migrate-prepare PATH N             writes version 1 of the migration file, N objects
//   crash-migrate PATH                 opens it at version 2, migrating
//   migrate-check PATH N               JSON: the version found and problems
//   crash-copy PATH DEST               writeCopy of the crash-write file
//   copy-check PATH DEST               JSON: whether DEST is absent or whole, and problems
//   import-prepare PATH FOLDER BLOCK N makes the import file and FOLDER/ImportItem.json of block BLOCK
//   crash-import PATH FOLDER           imports FOLDER's documents through the stored schema
//   import-check PATH N                JSON: objects per block and problems
// The class-creation race (ClassRace; "wait" makes a command wait for a line on stdin first):
//   race-prepare PATH                  a file holding only RaceCounter (at 0) and RaceVal
//   race-write PATH N [PAUSE] [wait]   N writes through Realm(fileURL:), each adding RaceA, RaceB, RaceC and
//                                      bumping the counter, PAUSE µs apart
//   race-read PATH THREADS SEED [wait] THREADS threads open the file at once and check their first snapshot
//   race-count PATH                    "count filtered iterated" of RaceA through Realm(fileURL:)
// With TRELLIS_TEST_ENCRYPTION_KEY (128 hex characters), write, write-many, count and the crash workload open
// the file with that key (TestEncryptionKey.swift).
import Foundation
import Trellis

class ProcessDog: Object {
    @Persisted var name = ""
    @Persisted var age = 0
}

let arguments = UnprivilegedUser.dropIfAsked(CommandLine.arguments)
guard arguments.count >= 3 else {
    FileHandle.standardError.write(Data("usage: TrellisProcessHelper write|count|crash-write|crash-check PATH [N]\n".utf8))
    exit(2)
}
let path = arguments[2]
do {
    switch arguments[1] {
    case "write":
        let realm = try Realm(configuration: TestEncryptionKey.applied(to: .init(fileURL: URL(fileURLWithPath: path), objectTypes: [ProcessDog.self])))
        let count = Int(arguments.count > 3 ? arguments[3] : "1") ?? 1
        try realm.write {
            for i in 0..<count { realm.add(ProcessDog(value: ["name": "helper \(i)", "age": i])) }
        }
        print("wrote \(count)")
    case "write-many":
        let realm = try Realm(configuration: TestEncryptionKey.applied(to: .init(fileURL: URL(fileURLWithPath: path), objectTypes: [ProcessDog.self])))
        let count = Int(arguments.count > 3 ? arguments[3] : "1") ?? 1
        for i in 0..<count {
            try realm.write { realm.add(ProcessDog(value: ["name": "helper \(i)", "age": i])) }
        }
        print("wrote \(count)")
    case "count":
        let realm = try Realm(configuration: TestEncryptionKey.applied(to: .init(fileURL: URL(fileURLWithPath: path), objectTypes: [ProcessDog.self])))
        print(realm.objects(ProcessDog.self).count)
    case "count-read-only":
        var configuration = TestEncryptionKey.applied(to: .init(fileURL: URL(fileURLWithPath: path), objectTypes: [ProcessDog.self]))
        configuration.readOnly = true
        print(try Realm(configuration: configuration).objects(ProcessDog.self).count)
    case "crash-write":
        try CrashWorkload.write(path: path, seed: UInt64(arguments.count > 3 ? arguments[3] : "1") ?? 1)
    case "crash-check":
        try CrashWorkload.check(path: path, since: arguments.count > 3 ? Int(arguments[3]) : nil)
    case "open-default":
        // PATH is ignored: opens `try Realm()` (the default configuration) and adds one object.
        let realm = try Realm()
        try realm.write { realm.add(ProcessDog(value: ["name": "default"])) }
        print(realm.configuration.fileURL?.path ?? "")
    case "count-untyped":
        let realm = try Realm(configuration: .init(fileURL: URL(fileURLWithPath: path)))
        print(realm.objects(ProcessDog.self).count, realm.isEmpty)
    case "hold-readers":
        var configuration = Realm.Configuration(fileURL: URL(fileURLWithPath: path), objectTypes: [ProcessDog.self])
        configuration.syncOnCommit = false
        let realm = try Realm(configuration: configuration)
        let count = Int(arguments.count > 3 ? arguments[3] : "1") ?? 1
        var frozen = [Realm]()
        for i in 0..<count {
            try realm.write { realm.add(ProcessDog(value: ["name": "reader \(i)", "age": i])) }
            frozen.append(realm.freeze())
        }
        FileHandle.standardOutput.write(Data("holding \(frozen.count)\n".utf8))
        while true { sleep(60) }
    case "hold-write":
        let realm = try Realm(configuration: TestEncryptionKey.applied(to: .init(fileURL: URL(fileURLWithPath: path), objectTypes: [ProcessDog.self])))
        let flag = arguments.count > 3 ? arguments[3] : path + ".release"
        realm.beginWrite()
        realm.add(ProcessDog(value: ["name": "held", "age": -1]))
        FileHandle.standardOutput.write(Data("holding\n".utf8))  // unbuffered: the test waits for it
        let deadline = Date().addingTimeInterval(60)
        while !FileManager.default.fileExists(atPath: flag), Date() < deadline { usleep(10_000) }
        try realm.commitWrite()
        print("committed")
    case "soak":
        guard arguments.count >= 7, let instance = Int(arguments[4]), let seconds = Double(arguments[5]),
              let seed = UInt64(arguments[6])
        else { throw CocoaError(.featureUnsupported) }
        SoakWorkload.run(path: path, pools: arguments[3].split(separator: ",").compactMap { Int($0) },
                         instance: instance, seconds: seconds, seed: seed)
    case "soak-check":
        try SoakWorkload.check(path: path)
    case "crash-read":
        try CrashScenarios.read(path: path)
    case "migrate-prepare":
        try CrashScenarios.prepareMigration(path: path, count: Int(arguments[3]) ?? 1000)
    case "crash-migrate":
        try CrashScenarios.migrate(path: path)
    case "migrate-check":
        try CrashScenarios.checkMigration(path: path, count: Int(arguments[3]) ?? 1000)
    case "crash-copy":
        try CrashScenarios.copy(path: path, to: arguments[3])
    case "copy-check":
        try CrashScenarios.checkCopy(path: path, destination: arguments[3])
    case "import-prepare":
        try CrashScenarios.prepareImport(path: path, folder: arguments[3], block: Int(arguments[4]) ?? 0,
                                         count: Int(arguments[5]) ?? 1000)
    case "crash-import":
        try CrashScenarios.importDocuments(path: path, folder: arguments[3])
    case "import-check":
        try CrashScenarios.checkImport(path: path, count: Int(arguments[3]) ?? 1000)
    case "race-prepare":
        try ClassRace.prepare(path: path)
    case "race-write":
        try ClassRace.write(path: path, writes: Int(arguments[3]) ?? 1,
                            pause: arguments.count > 4 ? UInt32(arguments[4]) ?? 0 : 0, waits: arguments.last == "wait")
    case "race-read":
        ClassRace.read(path: path, threads: Int(arguments[3]) ?? 8, seed: UInt64(arguments[4]) ?? 1,
                       waits: arguments.last == "wait")
    case "race-count":
        try ClassRace.count(path: path)
    case "read-damaged":
        DamagedFileReader.read(path: path)
    case "flip-make":
        try FlipFile.make(path: path, count: Int(arguments.count > 3 ? arguments[3] : "200") ?? 200)
    case "flip-read":
        FlipFile.read(path: path)
    default:
        FileHandle.standardError.write(Data("unknown command \(arguments[1])\n".utf8))
        exit(2)
    }
} catch {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    exit(1)
}
