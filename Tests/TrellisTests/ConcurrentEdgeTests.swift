import Foundation
import Testing
@testable import Trellis

/// Edges found by the reliability work (issue 20): deleting an object someone else already
/// deleted, several threads or processes creating one new file at once, and how `asyncWrite`
/// takes the write lock.
@Suite struct ConcurrentEdgeTests {
    let folder = TemporaryFolder()

    // MARK: - Deleting an object that is already gone (Realm's RLMDeleteObjectFromRealm)

    @Test func deletingAnObjectAnotherAccessorDeletedInTheSameWriteDoesNothing() throws {
        let realm = try Realm(configuration: folder.configuration([PKDog.self]))
        let dog = PKDog(value: ["pk": "rex"])
        try realm.write { realm.add(dog) }
        let other = try #require(realm.object(ofType: PKDog.self, forPrimaryKey: "rex"))
        try realm.write {
            realm.delete(dog)
            realm.delete(other)
        }
        #expect(realm.objects(PKDog.self).isEmpty)
        #expect(other.isInvalidated)
    }

    @Test func deletingAnObjectAnotherThreadDeletedDoesNothing() throws {
        let configuration = folder.configuration([PKDog.self])
        let realm = try Realm(configuration: configuration)
        try realm.write {
            realm.add(PKDog(value: ["pk": "rex"]))
            realm.add(PKDog(value: ["pk": "fido"]))
        }
        let rex = try #require(realm.object(ofType: PKDog.self, forPrimaryKey: "rex"))
        try onOtherThread {
            let mine = try Realm(configuration: configuration)
            try mine.write { mine.delete(mine.objects(PKDog.self).filter("pk == 'rex'")) }
        }
        try realm.write { realm.delete(rex) }  // rex is gone once this write begins
        #expect(realm.objects(PKDog.self).map(\.pk) == ["fido"])
        #expect(realm._consistencyProblems().isEmpty)
    }

    @Test func theAccessorThatDeletedAnObjectHasNoRealmAndOthersKeepTheirs() throws {
        let realm = try Realm(configuration: folder.configuration([PKDog.self]))
        let dog = PKDog(value: ["pk": "rex"])
        try realm.write { realm.add(dog) }
        let other = try #require(realm.object(ofType: PKDog.self, forPrimaryKey: "rex"))
        try realm.write { realm.delete(dog) }
        #expect(dog.isInvalidated && other.isInvalidated)
        #expect(dog.realm == nil)
        #expect(other.realm == realm)
    }

    @Test func deletingTwiceThroughTheSameAccessorTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let realm = MisuseTests.freshRealm()
            let dog = PKDog(value: ["pk": "rex"])
            try? realm.write { realm.add(dog) }
            try? realm.write {
                realm.delete(dog)
                realm.delete(dog)
            }
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("Can only delete an object from the Realm it belongs to."))
    }

    // MARK: - Creating one new file from several threads and processes at once

    /// LMDB makes the file, then writes its first pages: an opener that looked in between saw an
    /// empty file and refused it ("is an empty file, not a Trellis database").
    @Test func threadsCreatingOneNewFileAtOnceAllOpenIt() throws {
        for round in 0..<20 {
            let configuration = folder.configuration([Dog.self], name: "new-\(round).realm")
            let start = DispatchSemaphore(value: 0)
            let errors = LockedBox<[String]>([])
            let group = DispatchGroup()
            for _ in 0..<8 {
                group.enter()
                Thread {
                    start.wait()
                    do {
                        let realm = try Realm(configuration: configuration)
                        try realm.write { realm.add(Dog()) }
                    } catch {
                        errors.mutate { $0.append("\(error)") }
                    }
                    group.leave()
                }.start()
            }
            for _ in 0..<8 { start.signal() }
            group.wait()
            #expect(errors.get().isEmpty, "round \(round): \(errors.get().first ?? "")")
            let count = try onOtherThread { try Realm(configuration: configuration).objects(Dog.self).count }
            #expect(count == 8, "round \(round)")
        }
    }

    /// The moment in between made to last: a file that is empty while its lock file exists is
    /// given time to get its first pages (here another file takes its place after 100 ms), and
    /// only a file that stays empty is refused.
    @Test func anEmptyFileBeingCreatedIsWaitedForAndOneThatStaysEmptyIsRefused() throws {
        let configuration = folder.configuration([Dog.self], name: "finished.realm")
        do {
            let realm = try Realm(configuration: configuration)
            try realm.write { realm.add(Dog(value: ["name": "made elsewhere"])) }
        }
        let path = folder.file("creating.realm").path
        FileManager.default.createFile(atPath: path, contents: nil)
        FileManager.default.createFile(atPath: path + "-lock", contents: nil)
        let finisher = Thread {
            usleep(100_000)
            _ = rename(configuration.path, path)
        }
        finisher.start()
        let realm = try Realm(configuration: folder.configuration([Dog.self], name: "creating.realm"))
        #expect(realm.objects(Dog.self).first?.name == "made elsewhere")

        let empty = folder.file("empty.realm").path
        FileManager.default.createFile(atPath: empty, contents: nil)
        FileManager.default.createFile(atPath: empty + "-lock", contents: nil)
        #expect(throws: Realm.Error.self) { try Realm(configuration: folder.configuration([Dog.self], name: "empty.realm")) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: empty)).isEmpty)
    }

    @Test func processesCreatingOneNewFileAtOnceAllOpenIt() throws {
        for round in 0..<8 {
            let path = folder.file("processes-\(round).realm").path
            let writers = try (0..<4).map { _ in
                let process = Process()
                process.executableURL = processHelperURL()
                process.arguments = ["write", path, "1"]
                process.standardOutput = FileHandle.nullDevice
                let errors = Pipe()
                process.standardError = errors
                try process.run()
                return (process, errors)
            }
            for (process, errors) in writers {
                let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                process.waitUntilExit()
                #expect(process.terminationStatus == 0, "round \(round): \(message)")
            }
            #expect(try runHelper(["count", path]) == "4")
        }
    }

    // MARK: - asyncWrite takes the write lock without a gap

    /// `asyncWrite` used to test the lock and then take it with a blocking call: another thread
    /// could take it in between, and the wait that followed could not be cancelled. It then
    /// polled with `tryAcquire`, which never waits; it now queues with `acquireSuspending`
    /// (FileGrowthTests checks the order of turns).
    @Test func tryAcquireTakesAFreeGateAndNeverWaitsForAHeldOne() throws {
        let gate = HandleGate()
        #expect(gate.tryAcquire())
        #expect(gate.isHeld)
        let takenElsewhere = try onOtherThread { gate.tryAcquire() }
        #expect(!takenElsewhere)
        gate.release()
        let taken = try onOtherThread { () -> Bool in
            defer { gate.release() }
            return gate.tryAcquire()
        }
        #expect(taken)
        #expect(!gate.isHeld)
    }

    actor Writer {
        func addTwice(_ configuration: Realm.Configuration) async throws {
            let realm = try await Realm.open(configuration: configuration)
            try await realm.asyncWrite { realm.add(Dog()) }
            try await realm.asyncWrite { realm.add(Dog()) }
        }
    }

    @Test func asyncWritesLeaveTheWriteLockFreeForOtherThreads() async throws {
        let configuration = folder.configuration([Dog.self])
        try await Writer().addTwice(configuration)
        let gate = try Realm(configuration: configuration).core.file.environment.handles.gate
        #expect(!gate.isHeld)
        let count = try onOtherThread { () -> Int in
            let realm = try Realm(configuration: configuration)
            try realm.write { realm.add(Dog()) }
            return realm.objects(Dog.self).count
        }
        #expect(count == 3)
    }

    @Test func asyncWriteInsideAWriteOfTheSameRealmTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            actor Nester {
                func run() async {
                    let url = FileManager.default.temporaryDirectory.appendingPathComponent("trellis-exit-\(UUID()).realm")
                    guard let realm = try? await Realm.open(configuration: .init(fileURL: url, objectTypes: [Dog.self]))
                    else { return }
                    realm.beginWrite()
                    _ = try? await realm.asyncWrite { realm.add(Dog()) }
                }
            }
            await Nester().run()
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("The Realm is already in a write transaction"))
    }
}
