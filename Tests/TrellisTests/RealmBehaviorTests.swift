import Foundation
import Testing
@testable import Trellis

/// Behaviour that matches Realm where Trellis used to differ.
@Suite struct RealmBehaviorTests {
    let folder = TemporaryFolder()

    @Test func localizedDescriptionIsTheErrorMessage() throws {
        let url = folder.file("not-a-realm")
        try Data("hello".utf8).write(to: url)
        do {
            _ = try Realm(fileURL: url)
            Issue.record("opened a text file")
        } catch {
            // What Realm's documentation prints: `error.localizedDescription`.
            // A 5-byte file: Realm's words for a file too small to be a database.
            #expect(error.localizedDescription.contains("file is non-empty but too small (5 bytes) to be a valid Realm"))
            #expect(!error.localizedDescription.contains("could not be completed"))
        }
    }

    @Test func theDefaultRealmWorksWhenItsFolderIsMissing() throws {
        let data = folder.url.appendingPathComponent("xdg/data")  // does not exist yet
        let process = Process()
        process.executableURL = processHelperURL()
        process.arguments = ["open-default", "-"]
        process.environment = ProcessInfo.processInfo.environment.merging(["XDG_DATA_HOME": data.path]) { $1 }
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(printed.hasPrefix(data.path))
        #expect(printed.trimmingCharacters(in: .whitespacesAndNewlines).hasSuffix("default.realm"))
    }

    @Test func readOnlyWithDeleteIfMigrationNeededTrapsBeforeTouchingTheFile() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("never-\(UUID()).realm")
            _ = try? Realm(configuration: .init(fileURL: url, readOnly: true, deleteRealmIfMigrationNeeded: true))
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("Cannot set `deleteRealmIfMigrationNeeded` when `readOnly` is set."))
    }

    @Test func aClassOutsideObjectTypesIsRefusedWithRealmsMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("subset-\(UUID()).realm")
            guard let realm = try? Realm(configuration: .init(fileURL: url, objectTypes: [Dog.self])) else { return }
            try? realm.write { realm.add(Pet("not listed")) }
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("Object type 'Pet' is not managed by the Realm. If using a custom `objectClasses` / "
            + "`objectTypes` array in your configuration, add `Pet` to the list of `objectClasses` / `objectTypes`."))
    }

    /// Realm's message for a class outside `objectTypes`, as `RLMSchemaInfo` throws it.
    static func notManagedMessage(_ name: String) -> String {
        "Object type '\(name)' is not managed by the Realm. If using a custom `objectClasses` / `objectTypes` array in "
            + "your configuration, add `\(name)` to the list of `objectClasses` / `objectTypes`."
    }

    /// A class the file stores but the configuration's `objectTypes` leaves out is not the
    /// Realm's: reading it by type traps as in Realm (`RLMGetObject`, `RLMGetObjects` look the
    /// class up in the Realm's schema), also while another Realm of the file that lists it is
    /// open. Before, the other Realm's table was found and the object read.
    @Test func readingAClassOutsideObjectTypesByTypeTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("subset-\(UUID()).realm")
            defer { try? FileManager.default.removeItem(at: url) }
            // The Realm listing the class stays open on another thread (one Realm per thread and file).
            let written = DispatchSemaphore(value: 0), finished = DispatchSemaphore(value: 0)
            Thread {
                let full = try? Realm(configuration: .init(fileURL: url, objectTypes: [UPItem.self, Dog.self]))
                try? full?.write { full?.create(UPItem.self, value: ["_id": 1]) }
                written.signal()
                finished.wait()
                withExtendedLifetime(full) {}
            }.start()
            written.wait()
            defer { finished.signal() }
            guard let subset = try? Realm(configuration: .init(fileURL: url, objectTypes: [Dog.self])) else { return }
            _ = subset.object(ofType: UPItem.self, forPrimaryKey: 1)
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains(Self.notManagedMessage("UPItem")))
    }

    /// The same for the dynamic API: `dynamicObjects(_:)` of a class the file stores but
    /// `objectTypes` leaves out traps with Realm's message. Before, the file's class was read.
    @Test func readingAClassOutsideObjectTypesDynamicallyTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("subset-\(UUID()).realm")
            defer { try? FileManager.default.removeItem(at: url) }
            if let full = try? Realm(configuration: .init(fileURL: url, objectTypes: [UPItem.self, Dog.self])) {
                try? full.write { full.create(UPItem.self, value: ["_id": 1]) }
            }
            guard let subset = try? Realm(configuration: .init(fileURL: url, objectTypes: [Dog.self])) else { return }
            _ = subset.dynamicObjects("UPItem").count
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains(Self.notManagedMessage("UPItem")))
    }
}

@Suite struct RealmNotificationTimingTests {
    let folder = TemporaryFolder()

    @Test func realmObserveRunsSynchronouslyAtTheEndOfEveryLocalWrite() throws {
        let realm = try Realm(configuration: folder.configuration([Dog.self]))
        var calls = 0
        let token = realm.observe { notification, _ in
            #expect(notification == .didChange)
            calls += 1
        }
        try realm.write { realm.add(Dog()) }
        #expect(calls == 1)
        try realm.write {}
        #expect(calls == 2)
        realm.beginWrite()
        realm.add(Dog())
        try realm.commitWrite()
        #expect(calls == 3)
        token.invalidate()
    }
}

@Suite struct CreateFromManagedObjectTests {
    let folder = TemporaryFolder()

    func ownerWithPets(_ realm: Realm) throws -> Owner {
        try realm.write {
            let owner = realm.create(Owner.self, value: ["name": "Ann", "age": 40])
            let rex = realm.create(Pet.self, value: ["name": "Rex", "age": 3])
            owner.dog = rex
            owner.dogs.append(objectsIn: [rex, realm.create(Pet.self, value: ["name": "Bo", "age": 5])])
            owner.tags.append("x")
            owner.nicknames["k"] = "v"
            return owner
        }
    }

    @Test func fromTheSameRealmLinksTheSameObjects() throws {
        let realm = try Realm(configuration: folder.configuration([Owner.self, Pet.self]))
        let ann = try ownerWithPets(realm)
        let copy = try realm.write { realm.create(Owner.self, value: ann) }
        #expect(realm.objects(Owner.self).count == 2)
        #expect(realm.objects(Pet.self).count == 2)
        #expect(copy.dog?.isSameObject(as: ann.dog) == true)
        #expect(copy.dogs.map(\.name) == ["Rex", "Bo"])
        #expect(Array(copy.tags) == ["x"])
        #expect(copy.nicknames["k"] == "v")
        #expect(realm._consistencyProblems().isEmpty)
    }

    @Test func fromAnotherRealmCopiesTheGraph() throws {
        let source = try Realm(configuration: folder.configuration([Owner.self, Pet.self], name: "a.realm"))
        let ann = try ownerWithPets(source)
        let target = try Realm(configuration: folder.configuration([Owner.self, Pet.self], name: "b.realm"))
        let copy = try target.write { target.create(Owner.self, value: ann) }
        #expect(target.objects(Owner.self).count == 1)
        #expect(target.objects(Pet.self).count == 2)  // Rex once, though linked twice
        #expect(copy.dog?.name == "Rex")
        #expect(copy.dogs.first?.isSameObject(as: copy.dog) == true)
        #expect(copy.realm == target)
        #expect(target._consistencyProblems().isEmpty)
        #expect(source.objects(Pet.self).count == 2)
    }

    @Test func embeddedObjectsAreCopiedEvenInTheSameRealm() throws {
        let realm = try Realm(configuration: folder.configuration([Holder.self, Child.self, Grandchild.self, Pet.self, Parent.self, Owner.self]))
        let holder = try realm.write {
            realm.create(Holder.self, value: ["child": ["value": 7, "grandchild": ["value": 8]],
                                              "children": [["value": 1], ["value": 2]]])
        }
        let copy = try realm.write { realm.create(Holder.self, value: holder) }
        #expect(copy.child?.value == 7)
        #expect(copy.child?.grandchild?.value == 8)
        #expect(copy.children.map(\.value) == [1, 2])
        #expect(holder.child?.value == 7)
        try realm.write { copy.child?.value = 70 }
        #expect(holder.child?.value == 7)
        #expect(realm._consistencyProblems().isEmpty)
    }
}

class Holder: Object {
    @Persisted var child: Child?
    @Persisted var children: List<Child>
}

@Suite struct MutableSetPositionTests {
    @Test func indexMatchingOnAMutableSetTrapsWithRealmsMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("set-\(UUID()).realm")
            guard let realm = try? Realm(configuration: .init(fileURL: url, objectTypes: [Owner.self, Pet.self]))
            else { return }
            try? realm.write { realm.add(Owner(value: ["name": "o"])) }
            _ = realm.objects(Owner.self).first?.scores.index(matching: "self > 1")
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("index(matching:) is not available on MutableSet"))
    }
}
