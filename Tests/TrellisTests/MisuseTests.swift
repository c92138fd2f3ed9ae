import Foundation
import Testing
@testable import Trellis

/// Programmer misuse traps with Realm's message (exit tests run the body in a child process).
@Suite struct MisuseTests {
    static func freshRealm() -> Realm {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("trellis-exit-\(UUID()).realm")
        do {
            return try Realm(configuration: .init(fileURL: url, objectTypes: [Dog.self, Person.self, PKDog.self]))
        } catch {
            fatalError("could not open \(url): \(error)")
        }
    }


    @Test func addingOutsideAWriteTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            MisuseTests.freshRealm().add(Dog())
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("Can only add, remove, or create objects in a Realm in a write transaction"))
    }

    @Test func settingAManagedPropertyOutsideAWriteTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let realm = MisuseTests.freshRealm()
            let dog = Dog()
            try? realm.write { realm.add(dog) }
            dog.name = "x"
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("Attempting to modify object outside of a write transaction"))
    }

    @Test func readingADeletedObjectTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let realm = MisuseTests.freshRealm()
            let dog = Dog()
            try? realm.write { realm.add(dog) }
            try? realm.write { realm.delete(dog) }
            _ = dog.name
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("Object has been deleted or invalidated."))
    }

    @Test func duplicatePrimaryKeyTrapsWithTheValue() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let realm = MisuseTests.freshRealm()
            try? realm.write {
                realm.add(PKDog(value: ["pk": "pk"]))
                realm.add(PKDog(value: ["pk": "pk"]))
            }
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("Attempting to create an object of type 'PKDog' with an existing primary key value 'pk'"))
    }

    @Test func changingAManagedPrimaryKeyTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let realm = MisuseTests.freshRealm()
            let dog = PKDog(value: ["pk": "a"])
            try? realm.write {
                realm.add(dog)
                dog.pk = "b"
            }
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("Primary key can't be changed after an object is inserted."))
    }

    @Test func nestedWriteTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let realm = MisuseTests.freshRealm()
            try? realm.write { realm.beginWrite() }
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("The Realm is already in a write transaction"))
    }

    @Test func cancelWithoutAWriteTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            MisuseTests.freshRealm().cancelWrite()
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("Can't cancel a non-existing write transaction"))
    }

    @Test func deletingAnUnmanagedObjectTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let realm = MisuseTests.freshRealm()
            try? realm.write { realm.delete(Dog()) }
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("Can only delete an object from the Realm it belongs to."))
    }

    @Test func usingARealmFromAnotherThreadTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let realm = MisuseTests.freshRealm()
            let dog = Dog()
            try? realm.write { realm.add(dog) }
            let box = LockedBox<Dog?>(dog)
            let thread = Thread { _ = box.get()?.name }
            thread.start()
            sleep(5)
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("Realm accessed from incorrect thread."))
    }
}
