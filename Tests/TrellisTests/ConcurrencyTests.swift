import Foundation
import Testing
@testable import Trellis

/// One Realm per thread: writers on several threads serialize, readers keep a consistent
/// snapshot while writers commit, and two processes share a file.
@Suite struct ConcurrencyTests {
    let folder = TemporaryFolder()

    /// Runs `body(index)` on `count` new threads at once and waits for all; rethrows the first error.
    func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) throws -> Void) throws {
        let errors = LockedBox<[any Error]>([])
        let group = DispatchGroup()
        for index in 0..<count {
            group.enter()
            let thread = Thread {
                do { try body(index) } catch { errors.mutate { $0.append(error) } }
                group.leave()
            }
            thread.stackSize = 4 << 20
            thread.start()
        }
        group.wait()
        if let first = errors.get().first { throw first }
    }

    @Test func writersOnSeveralThreadsEachWithItsOwnRealmLoseNothing() throws {
        let configuration = folder.configuration([Owner.self, Pet.self])
        try onThreads(4) { thread in
            let realm = try Realm(configuration: configuration)
            for transaction in 0..<25 {
                try realm.write {
                    let owner = Owner(value: ["name": "t\(thread)-\(transaction)"])
                    owner.dogs.append(Pet("pet of t\(thread)-\(transaction)", age: thread))
                    realm.add(owner)
                }
            }
        }
        let realm = try Realm(configuration: configuration)
        #expect(realm.objects(Owner.self).count == 100)
        #expect(realm.objects(Pet.self).count == 100)
        for thread in 0..<4 {
            #expect(realm.objects(Owner.self).filter("name BEGINSWITH %@", "t\(thread)-").count == 25)
            #expect(realm.objects(Pet.self).filter("ANY listOwners.name BEGINSWITH %@", "t\(thread)-").count == 25)
        }
        #expect(realm._consistencyProblems().isEmpty)
    }

    /// Each write moves one year from one dog to another, so the sum of ages never changes; a
    /// reader that saw half a transaction would see another sum. Readers iterate 2,000 objects
    /// per pass while the writer commits.
    @Test func readersNeverSeeHalfATransactionWhileAWriterCommits() throws {
        let configuration = folder.configuration([Dog.self])
        let dogs = 2000
        do {
            let realm = try Realm(configuration: configuration)
            try realm.write {
                for index in 0..<dogs { realm.add(Dog(value: ["name": "dog \(index)", "age": 50])) }
            }
        }
        let expectedSum = dogs * 50
        let writing = LockedBox(true)
        let passes = LockedBox(0)
        try onThreads(3) { thread in
            let realm = try Realm(configuration: configuration)
            if thread == 0 {
                defer { writing.set(false) }
                let all = Array(realm.objects(Dog.self))
                for step in 0..<300 {
                    try realm.write {
                        all[step % dogs].age -= 1
                        all[(step * 7 + 1) % dogs].age += 1
                    }
                }
            } else {
                while writing.get() {
                    realm.refresh()
                    var sum = 0
                    var count = 0
                    for dog in realm.objects(Dog.self) {
                        sum += dog.age
                        count += 1
                    }
                    #expect(count == dogs)
                    #expect(sum == expectedSum, "a reader saw a partial transaction")
                    passes.mutate { $0 += 1 }
                }
            }
        }
        #expect(passes.get() > 0)
        let realm = try Realm(configuration: configuration)
        #expect(realm.objects(Dog.self).sum(ofProperty: "age") as Int == expectedSum)
    }

    @Test func aPinnedSnapshotIgnoresCommitsOfOtherThreadsUntilRefresh() throws {
        let configuration = folder.configuration([Dog.self])
        let realm = try Realm(configuration: configuration)
        try realm.write { realm.add(Dog(value: ["name": "first"])) }
        let results = realm.objects(Dog.self)
        #expect(results.count == 1)
        try onOtherThread {
            let other = try Realm(configuration: configuration)
            try other.write { other.add(Dog(value: ["name": "second"])) }
        }
        #expect(results.count == 1)
        realm.refresh()
        #expect(results.count == 2)
    }

    @Test func twoProcessesWritingTheSameFileInTurnLoseNothing() throws {
        let url = folder.file("shared.realm")
        let configuration = Realm.Configuration(fileURL: url, objectTypes: [ProcessDog.self])
        let processes = (0..<2).map { _ in
            let process = Process()
            process.executableURL = processHelperURL()
            process.arguments = ["write-many", url.path, "30"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = Pipe()
            return process
        }
        for process in processes { try process.run() }
        // This process writes too, between and alongside the helpers.
        let realm = try Realm(configuration: configuration)
        for index in 0..<30 {
            try realm.write { realm.add(ProcessDog(value: ["name": "main \(index)"])) }
        }
        for process in processes {
            process.waitUntilExit()
            let errors = (process.standardError as? Pipe)?.fileHandleForReading.readDataToEndOfFile() ?? Data()
            #expect(process.terminationStatus == 0, "\(String(decoding: errors, as: UTF8.self))")
        }
        realm.refresh()
        #expect(realm.objects(ProcessDog.self).count == 90)
        #expect(realm.objects(ProcessDog.self).filter("name BEGINSWITH 'main'").count == 30)
    }
}
