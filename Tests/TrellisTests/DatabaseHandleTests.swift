import Foundation
import Testing
@testable import Trellis

/// LMDB's rules for named-database handles (see `DatabaseHandles`): a reader never sees a
/// stored class as empty because its handle was opened at the wrong moment, opening never waits
/// for a writer, and a reopened file's map still grows.
@Suite struct DatabaseHandleTests {
    let folder = TemporaryFolder()

    /// Writes `count` dogs in a Realm that is released again, so the next open in this process
    /// loads the file anew (as a relaunched app does).
    func writeDogs(_ count: Int, to configuration: Realm.Configuration) throws {
        let realm = try Realm(configuration: configuration)
        try realm.write {
            for index in 0..<count { realm.add(Dog(value: ["name": "dog \(index)", "age": index])) }
        }
    }

    @Test func aRealmOpenedWithoutObjectTypesInANewProcessSeesItsObjectsAtOnce() throws {
        let path = folder.file().path
        #expect(try runHelper(["write", path, "50"]) == "wrote 50")
        #expect(try runHelper(["count-untyped", path]) == "50 false")
    }

    @Test func aRealmOpenedWithoutObjectTypesSeesItsObjectsBeforeAnyRefresh() throws {
        try writeDogs(40, to: folder.configuration([Dog.self]))
        let realm = try Realm(configuration: folder.configuration())
        #expect(realm.objects(Dog.self).count == 40)
        #expect(!realm.isEmpty)
        #expect(realm.objects(Dog.self).filter("age >= 20").count == 20)
    }

    @Test func aClassFirstUsedInACancelledWriteStillReadsItsObjects() throws {
        try writeDogs(100, to: folder.configuration([Dog.self]))
        let realm = try Realm(configuration: folder.configuration())
        realm.beginWrite()
        #expect(realm.objects(Dog.self).count == 100)
        realm.cancelWrite()
        #expect(realm.objects(Dog.self).count == 100)
        #expect(realm._consistencyProblems().isEmpty)
        let other = try onOtherThread { try Realm(configuration: folder.configuration()).objects(Dog.self).count }
        #expect(other == 100)
    }

    @Test func threadsOpeningAClosedFileAtOnceAllSeeEveryObject() throws {
        try writeDogs(300, to: folder.configuration([Dog.self]))
        for round in 0..<25 {
            let counts = LockedBox<[Int]>([])
            let group = DispatchGroup()
            for thread in 0..<8 {
                group.enter()
                let configuration = thread.isMultiple(of: 2) ? folder.configuration([Dog.self]) : folder.configuration()
                Thread {
                    let count = (try? Realm(configuration: configuration).objects(Dog.self).count) ?? -1
                    counts.mutate { $0.append(count) }
                    group.leave()
                }.start()
            }
            group.wait()
            #expect(counts.get() == Array(repeating: 300, count: 8), "round \(round)")
            // Every Realm of the round is released: the next round loads the file anew.
            #expect(!FileState.isOpen(path: folder.file().path))
        }
    }

    @Test func aClassAnotherProcessCreatedIsReadAfterRefresh() throws {
        try writeDogs(5, to: folder.configuration([Dog.self]))
        // Without objectTypes (as `try Realm()` opens): any stored class may be read.
        let realm = try Realm(configuration: folder.configuration())
        #expect(realm.objects(Dog.self).count == 5)
        // The helper adds a class this process has never opened a handle for.
        #expect(try runHelper(["write", folder.file().path, "30"]) == "wrote 30")
        realm.refresh()
        #expect(realm.objects(ProcessDog.self).count == 30)
        let fresh = try onOtherThread {
            try Realm(configuration: .init(fileURL: folder.file())).objects(ProcessDog.self).count
        }
        #expect(fresh == 30)
        #expect(realm._consistencyProblems().isEmpty)
    }

    @Test func aSnapshotOlderThanANewClassReadsItAsEmptyUntilRefresh() throws {
        try writeDogs(5, to: folder.configuration([Dog.self]))
        // The reader lists Person (as in Realm, reading a class its objectTypes leave out traps),
        // but opening does not give the file a table for it: its first write will.
        let both = folder.configuration([Dog.self, Person.self])
        let reader = try Realm(configuration: both)
        #expect(reader.objects(Dog.self).count == 5)
        try onOtherThread {
            let writer = try Realm(configuration: both)
            try writer.write { writer.add(Person(value: ["name": "Ana"])) }
        }
        // The class did not exist in the reader's snapshot: empty there, and no trap.
        #expect(reader.objects(Person.self).count == 0)
        reader.refresh()
        #expect(reader.objects(Person.self).count == 1)
    }

    @Test func consistencyCheckerReportsATableReadThroughTheWrongHandle() throws {
        try writeDogs(10, to: folder.configuration([Dog.self, Person.self]))
        let realm = try Realm(configuration: folder.configuration([Dog.self, Person.self]))
        try realm.write { realm.add(Person(value: ["name": "Ana"])) }
        #expect(realm._consistencyProblems().isEmpty)
        let file = realm.core.file
        let dogs = try #require(file.table(for: Dog.self))
        let people = try #require(file.table(for: Person.self))
        // Simulate the fault: Dog's table bound to Person's rows database.
        file.publish([Table(info: dogs.info, tableId: dogs.tableId, rows: people.rows, primaryKeys: nil)],
                     catalog: file.catalog)
        let problems = realm._consistencyProblems()
        #expect(problems.contains { $0.contains("Dog reads 't.Dog' through the handle of 't.Person'") }, "\(problems)")
    }

    @Test func openingAndReadingDoNotWaitForAnotherProcesssWrite() throws {
        let path = folder.file().path
        #expect(try runHelper(["write", path, "3"]) == "wrote 3")
        let flag = folder.file("release").path
        let process = Process()
        process.executableURL = processHelperURL()
        process.arguments = ["hold-write", path, flag]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        defer {
            FileManager.default.createFile(atPath: flag, contents: nil)
            process.waitUntilExit()
        }
        let line = String(decoding: output.fileHandleForReading.availableDataUntilNewline(), as: UTF8.self)
        #expect(line == "holding")
        // The helper holds LMDB's write lock until the flag exists (up to 60 s). Opening and
        // reading finish while it still holds it, and see the committed objects only.
        let count = try onOtherThread {
            try Realm(configuration: .init(fileURL: URL(fileURLWithPath: path), objectTypes: [ProcessDog.self]))
                .objects(ProcessDog.self).count
        }
        #expect(count == 3)
        #expect(process.isRunning)
        FileManager.default.createFile(atPath: flag, contents: nil)
        process.waitUntilExit()
        let realm = try Realm(configuration: .init(fileURL: URL(fileURLWithPath: path), objectTypes: [ProcessDog.self]))
        #expect(realm.objects(ProcessDog.self).count == 4)
    }

    @Test func aReopenedFileStillGrowsItsMap() throws {
        var configuration = folder.configuration([Dog.self])
        configuration.initialMapSize = 1 << 20
        try MapGrowthTests.fill(try Realm(configuration: configuration), transactions: 1, dogs: 10)
        #expect(!FileState.isOpen(path: folder.file().path))
        let realm = try Realm(configuration: configuration)
        try MapGrowthTests.fill(realm, transactions: 30, from: 10)  // ~3 MiB of rows
        #expect(realm.objects(Dog.self).count == 3010)
        #expect(realm.core.file.environment.mapSize >= 4 << 20)
    }
}

extension FileHandle {
    /// Reads byte by byte up to a newline (or the end), without the newline.
    func availableDataUntilNewline() -> Data {
        var line = Data()
        while let byte = try? read(upToCount: 1), let first = byte.first, first != UInt8(ascii: "\n") {
            line.append(first)
        }
        return line
    }
}
