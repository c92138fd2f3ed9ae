import Foundation
import Testing
@testable import Trellis

final class InMemoryNote: Object {
    @Persisted var text = ""
}

/// Realm's in-memory Realms live as long as some instance of them does: "When all in-memory Realm
/// instances with a particular identifier go out of scope with no references, all data in that
/// Realm is deleted" (RLMRealmConfiguration's documentation). Realm's own tests depend on it: the
/// collection tests open `Realm.Configuration(inMemoryIdentifier: "collection")` in every test and
/// count the objects each test made.
@Suite struct InMemoryRealmLifetimeTests {
    private func configuration(_ identifier: String) -> Realm.Configuration {
        Realm.Configuration(inMemoryIdentifier: identifier, objectTypes: [InMemoryNote.self])
    }

    private func addNote(_ configuration: Realm.Configuration, _ text: String) throws {
        let realm = try Realm(configuration: configuration)
        try realm.write { realm.add(InMemoryNote(value: ["text": text])) }
    }

    @Test func dataIsDeletedWhenTheLastInstanceIsReleased() throws {
        let configuration = configuration("lifetime-\(UUID().uuidString)")
        try addNote(configuration, "first")
        try addNote(configuration, "second")
        #expect(try Realm(configuration: configuration).objects(InMemoryNote.self).count == 0)
    }

    @Test func dataLivesWhileAnInstanceIsHeld() throws {
        let configuration = configuration("held-\(UUID().uuidString)")
        let held = try Realm(configuration: configuration)
        try addNote(configuration, "first")
        try addNote(configuration, "second")
        #expect(try Realm(configuration: configuration).objects(InMemoryNote.self).count == 2)
        #expect(held.objects(InMemoryNote.self).count == 2)
    }

    @Test func aManagedObjectKeepsItsInMemoryRealmAlive() throws {
        let configuration = configuration("object-\(UUID().uuidString)")
        let note: InMemoryNote = try {
            let realm = try Realm(configuration: configuration)
            return try realm.write { realm.create(InMemoryNote.self, value: ["text": "kept"]) }
        }()
        #expect(try Realm(configuration: configuration).objects(InMemoryNote.self).map(\.text) == ["kept"])
        #expect(note.text == "kept")
    }

    @Test func anotherThreadsInstanceKeepsTheData() throws {
        let configuration = configuration("threads-\(UUID().uuidString)")
        let held = try Realm(configuration: configuration)
        let count = try onOtherThread {
            let realm = try Realm(configuration: configuration)
            try realm.write { realm.add(InMemoryNote(value: ["text": "from another thread"])) }
            return realm.objects(InMemoryNote.self).count
        }
        #expect(count == 1)
        held.refresh()
        #expect(held.objects(InMemoryNote.self).count == 1)
    }

    /// realm-core removes an in-memory Realm's file on its last close; Trellis left it in the
    /// temporary directory (a test suite left thousands).
    @Test func theFileIsRemovedWhenTheLastInstanceCloses() throws {
        let configuration = configuration("closing-\(UUID().uuidString)")
        let path = configuration.path
        try onOtherThread {
            try addNote(configuration, "first")
            let realm = try Realm(configuration: configuration)
            try realm.write { realm.add(InMemoryNote(value: ["text": "second"])) }
            #expect(FileManager.default.fileExists(atPath: path))
        }
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(!FileManager.default.fileExists(atPath: path + "-lock"))
        #expect(try Realm(configuration: configuration).objects(InMemoryNote.self).count == 0)
    }

    @Test func theFileStaysWhileAnotherThreadsInstanceIsOpen() throws {
        let configuration = configuration("kept-\(UUID().uuidString)")
        let held = try Realm(configuration: configuration)
        try held.write { held.add(InMemoryNote(value: ["text": "kept"])) }
        let count = try onOtherThread { try Realm(configuration: configuration).objects(InMemoryNote.self).count }
        #expect(count == 1)
        #expect(FileManager.default.fileExists(atPath: configuration.path))
        #expect(held.objects(InMemoryNote.self).count == 1)
    }
}
