import Foundation
import Testing
import Trellis

// More of Realm Swift's documentation, run unchanged but for the import: migrations, in-memory
// Realms, actors, key-path notifications and the SwiftUI-style list edits.

final class DocPersonV1: Object {
    @Persisted var firstName = ""
    @Persisted var lastName = ""
    @Persisted var yearsSinceBirth = 0
    override class func className() -> String { "DocPerson" }
}

final class DocPersonV2: Object {
    @Persisted var fullName = ""
    @Persisted var age = 0
    override class func className() -> String { "DocPerson" }
}

final class DocDog: Object {
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted var favoriteToy: DocToy?
    @Persisted(originProperty: "dogs") var owners: LinkingObjects<DocOwner>
}

final class DocToy: Object {
    @Persisted var name = ""
}

final class DocOwner: Object {
    @Persisted var name = ""
    @Persisted var dogs: List<DocDog>
}

actor DocRealmActor {
    var realm: Realm!

    init(configuration: Realm.Configuration) async throws {
        realm = try await Realm(configuration: configuration, actor: self)
    }

    func createDog(name: String, age: Int) async throws {
        try await realm.asyncWrite {
            _ = realm.create(DocDog.self, value: ["name": name, "age": age])
        }
    }

    var count: Int { realm.objects(DocDog.self).count }
}

@Suite(.serialized) struct RealmDocumentationExampleTests2 {
    private func folder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("trellis-docs2-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    @Test func migrationBlockFromTheDocumentationRenamesAndCombines() throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("people.realm")
        do {
            let realm = try Realm(configuration: .init(fileURL: url, objectTypes: [DocPersonV1.self]))
            try realm.write {
                realm.create(DocPersonV1.self, value: ["firstName": "Ada", "lastName": "Lovelace",
                                                       "yearsSinceBirth": 36])
            }
        }
        let config = Realm.Configuration(
            fileURL: url,
            schemaVersion: 2,
            migrationBlock: { migration, oldSchemaVersion in
                if oldSchemaVersion < 1 {
                    migration.renameProperty(onType: DocPersonV2.className(), from: "yearsSinceBirth", to: "age")
                }
                if oldSchemaVersion < 2 {
                    migration.enumerateObjects(ofType: DocPersonV2.className()) { oldObject, newObject in
                        let firstName = oldObject!["firstName"] as! String
                        let lastName = oldObject!["lastName"] as! String
                        newObject!["fullName"] = "\(firstName) \(lastName)"
                    }
                }
            },
            objectTypes: [DocPersonV2.self])
        let realm = try Realm(configuration: config)
        let person = try #require(realm.objects(DocPersonV2.self).first)
        #expect(person.fullName == "Ada Lovelace")
        #expect(person.age == 36)
    }

    @Test func inMemoryRealmsShareDataByIdentifierWhileOpen() throws {
        let config = Realm.Configuration(inMemoryIdentifier: "DocInMemory-\(UUID().uuidString)",
                                         objectTypes: [DocDog.self, DocToy.self, DocOwner.self])
        let realm = try Realm(configuration: config)
        try realm.write { realm.add(DocDog(value: ["name": "Rex", "age": 3])) }
        let other = try Realm(configuration: config)
        #expect(other.objects(DocDog.self).count == 1)
    }

    @Test func actorIsolatedRealmWritesAsynchronously() async throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let config = Realm.Configuration(fileURL: folder.appendingPathComponent("actor.realm"),
                                         objectTypes: [DocDog.self, DocToy.self, DocOwner.self])
        let actor = try await DocRealmActor(configuration: config)
        try await actor.createDog(name: "Rex", age: 3)
        try await actor.createDog(name: "Fido", age: 5)
        #expect(await actor.count == 2)
    }

    @Test func objectNotificationsFilteredByKeyPathSkipOtherChanges() throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let realm = try Realm(configuration: .init(fileURL: folder.appendingPathComponent("n.realm"),
                                                   objectTypes: [DocDog.self, DocToy.self, DocOwner.self]))
        let dog = DocDog(value: ["name": "Rex", "favoriteToy": ["name": "Ball"]])
        try realm.write { realm.add(dog) }
        var changes: [String] = []
        let token = dog.observe(keyPaths: ["favoriteToy.name"]) { change in
            switch change {
            case .change(_, let properties):
                for property in properties {
                    changes.append("Property '\(property.name)' changed to '\(property.newValue!)'")
                }
            case .error(let error):
                Issue.record("\(error)")
            case .deleted:
                changes.append("deleted")
            }
        }
        defer { token.invalidate() }
        try realm.write { dog.age = 4 }
        realm.refresh()
        #expect(changes.isEmpty)
        try realm.write { dog.favoriteToy?.name = "Frisbee" }
        realm.refresh()
        #expect(changes.count == 1)
    }

    @Test func listEditsInTheSwiftUIStyleMoveAndRemoveByOffsets() throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let realm = try Realm(configuration: .init(fileURL: folder.appendingPathComponent("l.realm"),
                                                   objectTypes: [DocDog.self, DocToy.self, DocOwner.self]))
        let owner = DocOwner(value: ["name": "Tim", "dogs": [["name": "A"], ["name": "B"], ["name": "C"]]])
        try realm.write { realm.add(owner) }
        try realm.write {
            owner.dogs.move(fromOffsets: IndexSet(integer: 0), toOffset: 3)
        }
        #expect(owner.dogs.map(\.name) == ["B", "C", "A"])
        try realm.write {
            owner.dogs.remove(atOffsets: IndexSet([0, 2]))
        }
        #expect(owner.dogs.map(\.name) == ["C"])
        #expect(owner.dogs.first?.owners.first?.name == "Tim")
        let older = realm.objects(DocOwner.self).where { $0.dogs.age.avg >= 0 && $0.dogs.count == 1 }
        #expect(older.count == 1)
    }

    @Test func defaultConfigurationCanBeChangedForTheWholeApp() throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let saved = Realm.Configuration.defaultConfiguration
        defer { Realm.Configuration.defaultConfiguration = saved }
        var config = Realm.Configuration.defaultConfiguration
        config.fileURL = folder.appendingPathComponent("app.realm")
        config.objectTypes = [DocDog.self, DocToy.self, DocOwner.self]
        Realm.Configuration.defaultConfiguration = config
        let realm = try Realm()
        #expect(realm.configuration.fileURL == config.fileURL)
        try realm.write { realm.add(DocDog(value: ["name": "Rex"])) }
        #expect(try Realm().objects(DocDog.self).count == 1)
    }
}
