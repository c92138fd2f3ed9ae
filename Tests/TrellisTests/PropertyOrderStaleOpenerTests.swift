import Foundation
import Testing
@testable import Trellis

/// A class's rows are laid out in its model's property order, and a writable Realm that opens
/// the file with the properties declared in another order stores the class again in its order
/// (``PropertyOrderTests``). A Realm bound to the old order before that (another process, or
/// another model class of the same name) would read the new rows with the old layout and write
/// rows the others misread: before, it read "" and 0 for every value and corrupted the file
/// (primary-key index, links, backlinks). Now its next snapshot traps, as realm-core does for
/// unsupported schema changes made by another process, before any row is read or written.
@Suite struct PropertyOrderStaleOpenerTests {
    static func configuration(_ url: URL, _ types: [ObjectBase.Type]) -> Realm.Configuration {
        Realm.Configuration(fileURL: url, objectTypes: types)
    }

    /// Opens a new file with OrderA, fills it, has another thread's Realm store it in OrderB,
    /// then runs `body` with the OrderA Realm (still bound to OrderA's layout).
    static func withStaleRealm(_ body: @escaping @Sendable (Realm) throws -> Void) {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("trellis-exit-\(UUID()).realm")
        do {
            try onOtherThread {
                let old = try Realm(configuration: configuration(url, OrderA.types))
                try old.write {
                    let rex = old.create(OrderA.Pet.self, value: ["name": "Rex", "_id": 10])
                    let ada = old.create(OrderA.Owner.self, value: ["name": "Ada", "_id": 1, "city": "London", "age": 36])
                    ada.pets.append(rex)
                    ada.best = rex
                }
                try onOtherThread {
                    let new = try Realm(configuration: configuration(url, OrderB.types))
                    precondition(new.object(ofType: OrderB.Owner.self, forPrimaryKey: 1)?.age == 36)
                }
                try body(old)
            }
        } catch {
            fatalError("\(error)")
        }
    }

    static let message = "Unsupported schema changes were made by another client or process"

    @Test func aRealmBoundToTheOldOrderTrapsWhenItsSnapshotReachesTheReorderedRows() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            PropertyOrderStaleOpenerTests.withStaleRealm { old in
                let ada = old.object(ofType: OrderA.Owner.self, forPrimaryKey: 1)
                old.refresh()
                // Before: "" (the row read with the old layout).
                print(ada?.name ?? "-")
            }
        }
        let text = exitTestStandardError(result)
        #expect(text.contains(Self.message))
        #expect(text.contains("The properties of 'POOwner' are now stored in the order _id, age, best, city, name"))
    }

    @Test func aRealmBoundToTheOldOrderTrapsBeforeWritingRowsInIt() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            PropertyOrderStaleOpenerTests.withStaleRealm { old in
                // Before: the row was written in the old layout, corrupting the file.
                try old.write {
                    _ = old.create(OrderA.Owner.self, value: ["name": "Alan", "_id": 2, "city": "Wilmslow", "age": 41])
                }
            }
        }
        #expect(exitTestStandardError(result).contains(Self.message))
    }

    /// Another Realm on the same model (or one that only added an index) commits: no trap.
    @Test func aRealmWhoseLayoutIsUnchangedKeepsWorkingAcrossOtherRealmsCommits() throws {
        let folder = TemporaryFolder()
        let url = folder.file()
        try onOtherThread {
            let first = try Realm(configuration: Self.configuration(url, OrderA.types))
            try first.write { _ = first.create(OrderA.Owner.self, value: ["name": "Ada", "_id": 1, "age": 36]) }
            let ada = try #require(first.object(ofType: OrderA.Owner.self, forPrimaryKey: 1))
            try onOtherThread {
                let second = try Realm(configuration: Self.configuration(url, OrderA.types))
                try second.write { second.object(ofType: OrderA.Owner.self, forPrimaryKey: 1)?.age = 37 }
            }
            first.refresh()
            #expect(ada.age == 37)
            try first.write { ada.name = "Ada L." }
            #expect(first.objects(OrderA.Owner.self).filter("age == 37").first?.name == "Ada L.")
        }
    }
}
