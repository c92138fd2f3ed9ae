import Foundation
import Testing
@testable import Trellis

/// Holds values across threads the way an app's view model would.
final class DogHolder: @unchecked Sendable {
    // @unchecked Sendable: @ThreadSafe properties may be read from any thread.
    @ThreadSafe var dog: Dog?
    @ThreadSafe var puppies: Results<Dog>?
}

/// Realm's `@ThreadSafe` property wrapper: set on one thread, resolved on another.
@Suite struct ThreadSafeWrapperTests {
    let folder = TemporaryFolder()

    func realm() throws -> Realm { try Realm(configuration: folder.configuration([Dog.self])) }

    @Test func anObjectSetOnOneThreadIsReadOnAnother() throws {
        let holder = DogHolder()
        try onOtherThread {
            let realm = try realm()
            try realm.write { realm.add(Dog(value: ["name": "Rex", "age": 3])) }
            holder.dog = realm.objects(Dog.self).first
        }
        let (name, sameRealm) = try onOtherThread { () -> (String?, Bool) in
            let dog = holder.dog
            return (dog?.name, dog?.realm == (try? realm()))
        }
        #expect(name == "Rex")
        #expect(sameRealm)  // resolved in the reading thread's own Realm
        // Read again, from yet another thread: a new reference is kept after each access.
        #expect(try onOtherThread { holder.dog?.age } == 3)
    }

    @Test func aDeletedObjectReadsAsNil() throws {
        let holder = DogHolder()
        try onOtherThread {
            let realm = try realm()
            try realm.write { realm.add(Dog(value: ["name": "Rex"])) }
            holder.dog = realm.objects(Dog.self).first
            try realm.write { realm.deleteAll() }
        }
        // A Realm that reads a newer version than the reference's resolves there (one in no read
        // transaction yet would begin at the reference's version, where the dog still exists).
        #expect(try onOtherThread { () -> Bool in
            let reader = try realm()
            _ = reader.objects(Dog.self).count
            return holder.dog == nil
        })
    }

    @Test func resultsFollowTheirQueryOnTheReadingThread() throws {
        let holder = DogHolder()
        try onOtherThread {
            let realm = try realm()
            try realm.write { for age in 0..<5 { realm.add(Dog(value: ["name": "d\(age)", "age": age])) } }
            holder.puppies = realm.objects(Dog.self).filter("age < 2").sorted(byKeyPath: "age")
        }
        #expect(try onOtherThread { holder.puppies.map { Array($0.map(\.name)) } } == ["d0", "d1"])
        // Live: a later commit shows on the next access.
        try onOtherThread {
            let realm = try realm()
            try realm.write { realm.add(Dog(value: ["name": "new", "age": 1])) }
        }
        // (Read from a Realm already at the newest version: see aDeletedObjectReadsAsNil.)
        #expect(try onOtherThread { () -> Int? in
            let reader = try realm()
            _ = reader.objects(Dog.self).count
            return holder.puppies?.count
        } == 3)
    }

    @Test func settingNilClearsIt() throws {
        let holder = DogHolder()
        try onOtherThread {
            let realm = try realm()
            try realm.write { realm.add(Dog()) }
            holder.dog = realm.objects(Dog.self).first
            holder.dog = nil
        }
        #expect(try onOtherThread { holder.dog == nil })
    }

    /// Realm's message (its @ThreadSafe setter checks the value's Realm before making a
    /// reference; ThreadSafeWrapperTests.testThreadSafeWrapperInvalidConstruction).
    @Test func anUnmanagedObjectTrapsWithRealmsMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let holder = DogHolder()
            holder.dog = Dog()
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("Only managed objects may be wrapped as thread safe."))
    }
}
