import Foundation
import Testing
@testable import Trellis

// Version 0 and version 1 of a small model. Class names are set explicitly so both versions
// name the same stored classes.
enum ModelV0 {
    final class Person: Object {
        override class func className() -> String { "MPerson" }
        @Persisted(primaryKey: true) var id = 0
        @Persisted var firstName = ""
        @Persisted var lastName = ""
        @Persisted var age = 0
        @Persisted var nickname: String?
        @Persisted var dog: Dog?
        @Persisted var dogs: List<Dog>
        @Persisted var address: Address?
        @Persisted var tags: MutableSet<String>
    }

    final class Dog: Object {
        override class func className() -> String { "MDog" }
        @Persisted var name = ""
        @Persisted(originProperty: "dogs") var owners: LinkingObjects<Person>
    }

    final class Address: EmbeddedObject {
        override class func className() -> String { "MAddress" }
        @Persisted var street = ""
    }

    final class Obsolete: Object {
        override class func className() -> String { "MObsolete" }
        @Persisted var value = 0
    }

    static let types: [ObjectBase.Type] = [Person.self, Dog.self, Address.self, Obsolete.self]
}

enum ModelV1 {
    /// `firstName` + `lastName` became `fullName`; `age` became a String; `nickname` was
    /// renamed `alias`; `score` (defaulted) and `motto` (optional) are new.
    final class Person: Object {
        override class func className() -> String { "MPerson" }
        @Persisted(primaryKey: true) var id = 0
        @Persisted var fullName = ""
        @Persisted var age = ""
        @Persisted var alias: String?
        @Persisted var score = 7
        @Persisted var motto: String?
        @Persisted var dog: Dog?
        @Persisted var dogs: List<Dog>
        @Persisted var address: Address?
        @Persisted var tags: MutableSet<String>
    }

    final class Dog: Object {
        override class func className() -> String { "MDog" }
        @Persisted var name = ""
        @Persisted var legs = 4
        @Persisted(originProperty: "dogs") var owners: LinkingObjects<Person>
    }

    final class Address: EmbeddedObject {
        override class func className() -> String { "MAddress" }
        @Persisted var street = ""
    }

    final class Toy: Object {
        override class func className() -> String { "MToy" }
        @Persisted var name = ""
    }

    static let types: [ObjectBase.Type] = [Person.self, Dog.self, Address.self, Toy.self]
}

/// Schema versions and migrations, as in Realm: a changed model needs a higher
/// `schemaVersion`; additive changes then migrate by themselves; a `migrationBlock` moves
/// values; relationships survive; a failed migration leaves the file as it was.
@Suite struct MigrationTests {
    let folder = TemporaryFolder()

    func configuration(_ types: [ObjectBase.Type], version: UInt64, block: MigrationBlock? = nil) -> Realm.Configuration {
        Realm.Configuration(fileURL: folder.file(), schemaVersion: version, migrationBlock: block, objectTypes: types)
    }

    /// Two people sharing dogs, with addresses, tags and an obsolete object.
    func writeVersion0() throws {
        try onOtherThread {
            let realm = try Realm(configuration: configuration(ModelV0.types, version: 0))
            try realm.write {
                let rex = ModelV0.Dog(value: ["name": "Rex"])
                let fido = ModelV0.Dog(value: ["name": "Fido"])
                let ada = ModelV0.Person(value: ["id": 1, "firstName": "Ada", "lastName": "Lovelace", "age": 36,
                                                 "nickname": "Countess", "address": ["street": "St James's Square"]])
                ada.dog = rex
                ada.dogs.append(objectsIn: [rex, fido])
                ada.tags.insert(objectsIn: ["math", "poetry"])
                let alan = ModelV0.Person(value: ["id": 2, "firstName": "Alan", "lastName": "Turing", "age": 41])
                alan.dogs.append(fido)
                realm.add([ada, alan])
                realm.add(ModelV0.Obsolete(value: ["value": 3]))
            }
        }
    }

    @Test func changedModelWithoutAHigherVersionIsASchemaMismatch() throws {
        try writeVersion0()
        let error = try onOtherThread { () -> Realm.Error? in
            do { _ = try Realm(configuration: configuration(ModelV1.types, version: 0)); return nil } catch {
                return error as? Realm.Error
            }
        }
        #expect(error?.code == .schemaMismatch)
        #expect(error?.message.contains("Property 'MPerson.firstName' has been removed.") == true)
        #expect(error?.message.contains("Property 'MPerson.age' has been changed from 'int' to 'string'.") == true)
        #expect(error?.message.contains("Increase Realm.Configuration.schemaVersion") == true)
    }

    @Test func additiveChangesMigrateWithoutABlock() throws {
        try writeVersion0()
        try onOtherThread {
            let realm = try Realm(configuration: configuration(ModelV1.types, version: 1))
            let ada = try #require(realm.object(ofType: ModelV1.Person.self, forPrimaryKey: 1))
            #expect(ada.fullName == "")          // new property: default
            #expect(ada.age == "")               // retyped without a block: default
            #expect(ada.alias == nil)            // renamed without a block: lost, as in Realm
            #expect(ada.score == 7)              // the model's default value
            #expect(ada.motto == nil)
            #expect(ada.dog?.name == "Rex")
            #expect(ada.dogs.map(\.name) == ["Rex", "Fido"])
            #expect(ada.address?.street == "St James's Square")
            #expect(Set(ada.tags) == ["math", "poetry"])
            #expect(realm.objects(ModelV1.Dog.self).map(\.legs) == [4, 4])
            #expect(realm.objects(ModelV1.Toy.self).isEmpty)
            #expect(realm.schema["MToy"] != nil)
            #expect(realm._consistencyProblems().isEmpty)
        }
    }

    @Test func migrationBlockReadsOldValuesWritesNewOnesAndRenames() throws {
        try writeVersion0()
        let seen = LockedBox<[UInt64]>([])
        try onOtherThread {
            let realm = try Realm(configuration: configuration(ModelV1.types, version: 1) { migration, oldVersion in
                seen.mutate { $0.append(oldVersion) }
                migration.renameProperty(onType: "MPerson", from: "nickname", to: "alias")
                migration.enumerateObjects(ofType: "MPerson") { oldObject, newObject in
                    guard let oldObject, let newObject else { return }
                    let first = oldObject["firstName"] as? String ?? ""
                    let last = oldObject.lastName as? String ?? ""
                    newObject["fullName"] = "\(first) \(last)"
                    newObject["age"] = "\(oldObject["age"] as? Int ?? 0) years"
                    #expect((oldObject["dog"] as? MigrationObject)?["name"] as? String == (first == "Ada" ? "Rex" : nil))
                }
                migration.enumerateObjects(ofType: "MDog") { oldObject, newObject in
                    if oldObject?["name"] as? String == "Fido" { newObject?["legs"] = 3 }
                }
            })
            let people = realm.objects(ModelV1.Person.self).sorted(byKeyPath: "id")
            #expect(people.map(\.fullName) == ["Ada Lovelace", "Alan Turing"])
            #expect(people.map(\.age) == ["36 years", "41 years"])
            #expect(people.map(\.alias) == ["Countess", nil])
            let fido = try #require(realm.objects(ModelV1.Dog.self).filter("name == 'Fido'").first)
            #expect(fido.legs == 3)
            #expect(Set(fido.owners.map(\.fullName)) == ["Ada Lovelace", "Alan Turing"])
            #expect(realm._consistencyProblems().isEmpty)
        }
        #expect(seen.get() == [0])
        // Reopening at the same version runs nothing again and keeps the values.
        let reopened = try onOtherThread {
            try Realm(configuration: configuration(ModelV1.types, version: 1) { _, _ in seen.mutate { $0.append(99) } })
                .objects(ModelV1.Person.self).sorted(byKeyPath: "id").map(\.fullName)
        }
        #expect(reopened == ["Ada Lovelace", "Alan Turing"])
        #expect(seen.get() == [0])
    }

    @Test func deleteDataRemovesAClassAndDeleteRemovesAnObject() throws {
        try writeVersion0()
        try onOtherThread {
            let realm = try Realm(configuration: configuration(ModelV1.types, version: 1) { migration, _ in
                #expect(migration.deleteData(forType: "MObsolete"))
                #expect(!migration.deleteData(forType: "NoSuchClass"))
                migration.enumerateObjects(ofType: "MDog") { oldObject, newObject in
                    if oldObject?["name"] as? String == "Rex", let newObject { migration.delete(newObject) }
                }
                let toy = migration.create("MToy", value: ["name": "ball"])
                #expect(toy["name"] as? String == "ball")
            })
            #expect(realm.schema["MObsolete"] == nil)
            #expect(realm.objects(ModelV1.Dog.self).map(\.name) == ["Fido"])
            let ada = try #require(realm.object(ofType: ModelV1.Person.self, forPrimaryKey: 1))
            #expect(ada.dog == nil)                       // the link to the deleted dog is cleared
            #expect(ada.dogs.map(\.name) == ["Fido"])
            #expect(realm.objects(ModelV1.Toy.self).map(\.name) == ["ball"])
            #expect(realm._consistencyProblems().isEmpty)
        }
    }

    @Test func failedMigrationLeavesTheFileAsItWas() throws {
        try writeVersion0()
        let before = try Data(contentsOf: folder.file())
        let error = try onOtherThread { () -> Realm.Error? in
            do {
                _ = try Realm(configuration: configuration(ModelV1.types, version: 1) { migration, _ in
                    migration.enumerateObjects(ofType: "MPerson") { _, newObject in newObject?["id"] = 5 }
                })
                return nil
            } catch {
                return error as? Realm.Error
            }
        }
        #expect(error?.code == .primaryKeyExists)
        #expect(error?.message.contains("'MPerson.id' has duplicate values after migration") == true)
        #expect(try Data(contentsOf: folder.file()) == before)
        let names = try onOtherThread {
            try Realm(configuration: configuration(ModelV0.types, version: 0)).objects(ModelV0.Person.self).map(\.firstName)
        }
        #expect(names.sorted() == ["Ada", "Alan"])
    }

    @Test func higherVersionWithTheSameModelRunsTheBlock() throws {
        try writeVersion0()
        let runs = LockedBox(0)
        try onOtherThread {
            let realm = try Realm(configuration: configuration(ModelV0.types, version: 3) { migration, oldVersion in
                runs.mutate { $0 += 1 }
                #expect(oldVersion == 0)
                migration.enumerateObjects(ofType: "MPerson") { _, newObject in newObject?["age"] = 1 }
            })
            #expect(realm.objects(ModelV0.Person.self).map(\.age) == [1, 1])
            #expect(realm.configuration.schemaVersion == 3)
        }
        #expect(runs.get() == 1)
    }
}
