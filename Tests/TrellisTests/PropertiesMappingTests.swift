import Foundation
import Testing
@testable import Trellis

// Models whose properties are stored under other names (Realm 10.54's propertiesMapping()).
enum Mapped {
    final class Person: Object {
        override class func className() -> String { "PMPerson" }
        @Persisted(primaryKey: true) var id = 0
        @Persisted(indexed: true) var firstName = ""
        @Persisted var age = 0
        @Persisted var dogs: List<Dog>
        @Persisted var address: Address?
        @Persisted var nick = ""

        override class func propertiesMapping() -> [String: String] {
            ["id": "_id", "firstName": "first_name", "age": "years", "dogs": "owned_dogs", "address": "home",
             "notAProperty": "ignored"]
        }
    }

    final class Dog: Object {
        override class func className() -> String { "PMDog" }
        @Persisted(primaryKey: true) var name = ""
        @Persisted var weight = 0.0
        @Persisted(originProperty: "dogs") var owners: LinkingObjects<Person>

        override class func propertiesMapping() -> [String: String] { ["weight": "kilograms"] }
    }

    final class Address: EmbeddedObject {
        override class func className() -> String { "PMAddress" }
        @Persisted var city = ""

        override class func propertiesMapping() -> [String: String] { ["city": "town"] }
    }

    /// A class a Realm can be opened with that leaves the mapped classes out.
    final class Other: Object {
        override class func className() -> String { "PMOther" }
        @Persisted var value = 0
    }

    static let types: [ObjectBase.Type] = [Person.self, Dog.self, Address.self]
}

/// The old-style declaration of LinkingObjects naming a mapped property by its Swift name.
final class MappedKennel: Object {
    override class func className() -> String { "PMKennel" }
    @Persisted var label = ""
    @Persisted var residents: List<MappedResident>
    override class func propertiesMapping() -> [String: String] { ["residents": "dogs_here"] }
}

final class MappedResident: Object {
    override class func className() -> String { "PMResident" }
    @Persisted var name = ""
    let kennels = LinkingObjects(fromType: MappedKennel.self, property: "residents")
}

// One class in three versions, for migrations of mapped properties.
enum RenameV0 {
    final class Book: Object {
        override class func className() -> String { "PMBook" }
        @Persisted(primaryKey: true) var id = 0
        @Persisted var title = ""
    }
}

enum RenameV1 {
    /// The Swift name changed, the stored name did not: no migration.
    final class Book: Object {
        override class func className() -> String { "PMBook" }
        @Persisted(primaryKey: true) var id = 0
        @Persisted var heading = ""
        override class func propertiesMapping() -> [String: String] { ["heading": "title"] }
    }
}

enum RenameV2 {
    /// The stored name changes too: a migration renames it.
    final class Book: Object {
        override class func className() -> String { "PMBook" }
        @Persisted(primaryKey: true) var id = 0
        @Persisted var heading = ""
        override class func propertiesMapping() -> [String: String] { ["heading": "book_title"] }
    }
}

enum DuplicateColumns {
    final class Clash: Object {
        override class func className() -> String { "PMClash" }
        @Persisted var a = 0
        @Persisted var b = 0
        override class func propertiesMapping() -> [String: String] { ["b": "a"] }
    }
}

/// `propertiesMapping()`: the file stores the persisted name; the Swift API uses the Swift name.
@Suite struct PropertiesMappingTests {
    let folder = TemporaryFolder()

    func realm() throws -> Realm {
        try Realm(configuration: folder.configuration(Mapped.types))
    }

    /// Ada (id 1, 36, dogs Rex and Fido, London), Alan (id 2, 41, dog Rex, Wilmslow).
    @discardableResult
    func addPeople(_ realm: Realm) throws -> (Mapped.Person, Mapped.Person) {
        let rex = Mapped.Dog(value: ["name": "Rex", "weight": 30.5])
        let fido = Mapped.Dog(value: ["name": "Fido", "weight": 12.0])
        let ada = Mapped.Person(value: ["id": 1, "firstName": "Ada", "age": 36, "nick": "A"])
        ada.dogs.append(objectsIn: [rex, fido])
        ada.address = Mapped.Address(value: ["city": "London"])
        let alan = Mapped.Person(value: ["id": 2, "firstName": "Alan", "age": 41])
        alan.dogs.append(rex)
        alan.address = Mapped.Address(value: ["city": "Wilmslow"])
        try realm.write { realm.add([ada, alan]) }
        return (ada, alan)
    }

    @Test func theSchemaNamesPropertiesBySwiftNameWithTheirPersistedNames() throws {
        let realm = try realm()
        let schema = try #require(realm.schema["PMPerson"])
        #expect(schema.properties.map(\.name) == ["id", "firstName", "age", "dogs", "address", "nick"])
        #expect(schema.properties.map(\.columnName) == ["_id", "first_name", "years", "owned_dogs", "home", "nick"])
        #expect(schema["firstName"]?.columnName == "first_name")
        #expect(schema.primaryKeyProperty?.name == "id")
        #expect(schema.description.contains("columnName = first_name;"))
        // Realm prints every property's column name, mapped or not (RLMProperty's description).
        #expect(schema.description.contains("columnName = nick;"))
        #expect(Mapped.Address().objectSchema["city"]?.columnName == "town")
        #expect(realm.schema["PMDog"]?.computedProperties.first?.linkOriginPropertyName == "dogs")
    }

    @Test func theSwiftAPIUsesSwiftNamesEverywhere() throws {
        let realm = try realm()
        let (ada, _) = try addPeople(realm)
        let people = realm.objects(Mapped.Person.self)
        // Text queries, typed queries, through links, embedded objects and backlinks.
        #expect(people.filter("firstName == 'Ada'").map(\.id) == [1])
        #expect(people.filter("age > %@", 40).map(\.firstName) == ["Alan"])
        #expect(people.where { $0.firstName.starts(with: "Al") }.map(\.id) == [2])
        #expect(people.filter("address.city == 'London'").map(\.id) == [1])
        #expect(people.where { $0.address.city == "Wilmslow" }.map(\.id) == [2])
        #expect(people.filter("ANY dogs.weight < 20").map(\.id) == [1])
        #expect(people.filter("dogs.@count == 2").map(\.id) == [1])
        let dogs = realm.objects(Mapped.Dog.self)
        #expect(dogs.filter("ANY owners.firstName == 'Alan'").map(\.name) == ["Rex"])
        #expect(Set(try #require(realm.object(ofType: Mapped.Dog.self, forPrimaryKey: "Rex")).owners.map(\.id)) == [1, 2])
        #expect(realm.object(ofType: Mapped.Person.self, forPrimaryKey: 2)?.firstName == "Alan")
        // Sorting, distinct, sectioning, aggregates.
        #expect(people.sorted(byKeyPath: "age", ascending: false).map(\.id) == [2, 1])
        #expect(people.sorted(by: \.firstName, ascending: false).map(\.id) == [2, 1])
        #expect(people.sorted(byKeyPath: "address.city").map(\.id) == [1, 2])
        #expect(people.distinct(by: ["nick"]).count == 2)
        #expect(people.max(ofProperty: "age") as Int? == 41)
        #expect(people.sum(of: \.age) == 77)
        #expect(dogs.average(ofProperty: "weight") as Double? == 21.25)
        let sections = people.sectioned(by: \.firstName, ascending: true)
        #expect(sections.allKeys == ["Ada", "Alan"])
        // KVC and dynamic collections.
        #expect(ada["firstName"] as? String == "Ada")
        #expect(ada.value(forKey: "age") as? Int == 36)
        #expect(people.value(forKey: "firstName") as? [String] == ["Ada", "Alan"])
        #expect(ada.dynamicList("dogs").count == 2)
        try realm.write {
            ada["firstName"] = "Augusta"
            ada.setValue(37, forKey: "age")
        }
        #expect(people.filter("firstName == 'Augusta' AND age == 37").count == 1)
        // The indexed mapped property's index is kept right.
        #expect(realm._consistencyProblems().isEmpty)
    }

    @Test func observationNamesChangedPropertiesBySwiftName() throws {
        let realm = try realm()
        let (ada, _) = try addPeople(realm)
        let changed = LockedBox<[[String]]>([])
        let token = ada.observe(keyPaths: ["firstName", "age"]) { (change: ObjectChange<Mapped.Person>) in
            if case .change(_, let properties) = change { changed.mutate { $0.append(properties.map(\.name)) } }
        }
        let modified = LockedBox<[[Int]]>([])
        let resultsToken = realm.objects(Mapped.Person.self).sorted(byKeyPath: "id")
            .observe(keyPaths: [\Mapped.Person.age]) { change in
                if case .update(_, _, _, let modifications) = change { modified.mutate { $0.append(modifications) } }
            }
        try realm.write { ada.nick = "not observed" }
        try realm.write { ada.age = 37 }
        try realm.write { ada.firstName = "Augusta" }
        #expect(changed.get() == [["age"], ["firstName"]])
        #expect(modified.get() == [[0]])
        token.invalidate()
        resultsToken.invalidate()
    }

    @Test func theFileStoresPersistedNamesWhichARealmWithoutTheModelClassesSees() throws {
        try onOtherThread {
            _ = try addPeople(try realm())
        }
        try onOtherThread {
            // As in Realm (AnyRealmValueObjectTests.testDynamicObjectAccessor), the Realm's schema
            // is its objectTypes: the mapped classes are not in this one's (and, as in Realm,
            // its dynamic API traps for them: RealmBehaviorTests).
            #expect(try Realm(configuration: folder.configuration([Mapped.Other.self])).schema["PMPerson"] == nil)
            // A Realm of the file's stored schema (Realm's dynamic Realm, the trellis tool's)
            // walks the file by its stored names, as a Realm opened without the models does.
            let realm = try Realm(configuration: .storedSchema(fileURL: folder.file(), readOnly: true))
            let ada = try #require(realm.dynamicObjects("PMPerson").filter("first_name == 'Ada'").first)
            #expect(ada.objectSchema.properties.map(\.name) == ["_id", "first_name", "years", "owned_dogs", "home", "nick"])
            #expect(ada["years"] as? Int == 36)
            #expect((ada["home"] as? DynamicObject)?["town"] as? String == "London")
            #expect(ada.dynamicList("owned_dogs").map { $0["kilograms"] as? Double } == [30.5, 12.0])
            let rex = try #require(realm.dynamicObject(ofType: "PMDog", forPrimaryKey: "Rex"))
            #expect(Set((rex["owners"] as? LinkingObjects<DynamicObject>)?.map { $0["_id"] as? Int } ?? []) == [1, 2])
            #expect(realm.dynamicObjects("PMPerson").sorted(byKeyPath: "years", ascending: false).first?["_id"] as? Int == 2)
        }
        // The trellis tool's view (the file's stored schema) and its Extended JSON export.
        let inspection = try FileInspection(fileURL: folder.file())
        #expect(inspection.schema["PMPerson"]?.properties.map(\.name).contains("first_name") == true)
        let documents = try ExtendedJSON.documents(inFile: folder.file())
        let first = try #require(documents["PMPerson"]?.first)
        let json = try #require(try JSONSerialization.jsonObject(with: first) as? [String: Any])
        #expect(Set(json.keys) == ["_id", "first_name", "years", "owned_dogs", "home", "nick"])
        #expect((json["home"] as? [String: Any])?["town"] as? String == "London")
    }

    @Test func aTypedRealmsDynamicAPIUsesSwiftNames() throws {
        let realm = try realm()
        try addPeople(realm)
        let ada = try #require(realm.dynamicObjects("PMPerson").filter("firstName == 'Ada'").first)
        #expect(ada.age as? Int == 36)
        #expect(ada.objectSchema["firstName"]?.columnName == "first_name")
        try realm.write { ada.age = 40 }
        #expect(realm.object(ofType: Mapped.Person.self, forPrimaryKey: 1)?.age == 40)
        try realm.write { realm.dynamicCreate("PMPerson", value: ["id": 3, "firstName": "Grace", "age": 85]) }
        #expect(realm.objects(Mapped.Person.self).filter("age > 80").first?.firstName == "Grace")
    }

    @Test func appServicesSchemaAndExtendedJSONUseThePersistedNames() throws {
        let schema = try AppServicesSchema(objectTypes: Mapped.types)
        let person = try #require(try JSONSerialization.jsonObject(with: schema.jsonSchema(for: "PMPerson")) as? [String: Any])
        let properties = try #require(person["properties"] as? [String: Any])
        #expect(Set(properties.keys) == ["_id", "first_name", "years", "owned_dogs", "home", "nick"])
        #expect(((properties["home"] as? [String: Any])?["properties"] as? [String: Any])?.keys.first == "town")
        #expect(Set(person["required"] as? [String] ?? []) == ["_id", "first_name", "years", "nick"])
        let relationships = try #require(try JSONSerialization.jsonObject(
            with: schema.relationships(for: "PMPerson", database: "app")) as? [String: Any])
        #expect(Array(relationships.keys) == ["owned_dogs"])
        #expect((relationships["owned_dogs"] as? [String: Any])?["foreign_key"] as? String == "name")

        // Extended JSON documents are keyed by the persisted names, and import back.
        let realm = try realm()
        let (ada, _) = try addPeople(realm)
        let document = try ExtendedJSON.document(for: ada)
        let json = try #require(try JSONSerialization.jsonObject(with: document) as? [String: Any])
        #expect(json["first_name"] as? String == "Ada")
        #expect(json["firstName"] == nil)
        let other = TemporaryFolder()
        let copy = try Realm(configuration: other.configuration(Mapped.types))
        try copy.write { copy.create(Mapped.Dog.self, value: ["name": "Rex"]); copy.create(Mapped.Dog.self, value: ["name": "Fido"]) }
        try ExtendedJSON.importDocuments([document], as: Mapped.Person.self, into: copy)
        let imported = try #require(copy.object(ofType: Mapped.Person.self, forPrimaryKey: 1))
        #expect(imported.firstName == "Ada")
        #expect(imported.age == 36)
        #expect(imported.address?.city == "London")
        #expect(imported.dogs.map(\.name) == ["Rex", "Fido"])
    }

    @Test func legacyLinkingObjectsFollowAMappedPropertyBySwiftName() throws {
        let realm = try Realm(configuration: folder.configuration([MappedKennel.self, MappedResident.self]))
        let rex = MappedResident(value: ["name": "Rex"])
        try realm.write {
            realm.add(MappedKennel(value: ["label": "North", "residents": [rex]]))
            realm.add(MappedKennel(value: ["label": "South", "residents": [rex]]))
        }
        #expect(Set(rex.kennels.map(\.label)) == ["North", "South"])
        #expect(realm.schema["PMKennel"]?["residents"]?.columnName == "dogs_here")
    }

    @Test func twoPropertiesStoredUnderOneNameAreRefused() throws {
        do {
            _ = try Realm(configuration: folder.configuration([DuplicateColumns.Clash.self]))
            Issue.record("opened a schema with two properties stored as 'a'")
        } catch let error as Realm.Error {
            #expect(error.code == .invalidSchema)
            #expect(error.message.contains("'PMClash.a' and 'PMClash.b' are both stored as 'a'"))
        }
    }

    @Test func renamingOnlyTheSwiftPropertyNeedsNoMigration() throws {
        try onOtherThread {
            let realm = try Realm(configuration: folder.configuration([RenameV0.Book.self]))
            try realm.write { realm.create(RenameV0.Book.self, value: ["id": 1, "title": "Dune"]) }
        }
        try onOtherThread {
            let realm = try Realm(configuration: folder.configuration([RenameV1.Book.self]))
            #expect(realm.object(ofType: RenameV1.Book.self, forPrimaryKey: 1)?.heading == "Dune")
            #expect(realm.objects(RenameV1.Book.self).filter("heading BEGINSWITH 'Du'").count == 1)
        }
        #expect(try schemaVersionAtURL(folder.file()) == 0)
    }

    @Test func aMigrationRenamesAMappedProperty() throws {
        try onOtherThread {
            let realm = try Realm(configuration: folder.configuration([RenameV1.Book.self]))
            try realm.write {
                realm.create(RenameV1.Book.self, value: ["id": 1, "heading": "Dune"])
                realm.create(RenameV1.Book.self, value: ["id": 2, "heading": "Emma"])
            }
        }
        // Without a migration, a changed stored name is a schema change.
        let mismatch = try onOtherThread { () -> Realm.Error? in
            do { _ = try Realm(configuration: folder.configuration([RenameV2.Book.self])); return nil } catch {
                return error as? Realm.Error
            }
        }
        #expect(mismatch?.code == .schemaMismatch)
        #expect(mismatch?.message.contains("'PMBook.title' has been removed") == true)
        #expect(mismatch?.message.contains("'PMBook.heading' (stored as 'book_title') has been added") == true)
        let seen = LockedBox<[String]>([])
        try onOtherThread {
            var config = folder.configuration([RenameV2.Book.self])
            config.schemaVersion = 1
            config.migrationBlock = { migration, _ in
                // The old object names properties as the file stored them; the new one as the model.
                migration.enumerateObjects(ofType: "PMBook") { old, new in
                    seen.mutate { $0.append("\(old?["title"] as? String ?? "?")/\(new?["heading"] as? String ?? "?")") }
                }
                migration.renameProperty(onType: "PMBook", from: "title", to: "heading")
            }
            let realm = try Realm(configuration: config)
            #expect(realm.objects(RenameV2.Book.self).sorted(byKeyPath: "id").map(\.heading) == ["Dune", "Emma"])
            #expect(realm._consistencyProblems().isEmpty)
        }
        // Before the rename the new property holds its default.
        #expect(seen.get() == ["Dune/", "Emma/"])
        let stored = try FileInspection(fileURL: folder.file()).schema["PMBook"]
        #expect(stored?.properties.map(\.name) == ["id", "book_title"])
    }

    @Test func aMigrationObjectIsADynamicObject() throws {
        try onOtherThread {
            let realm = try Realm(configuration: folder.configuration([RenameV0.Book.self]))
            try realm.write { realm.create(RenameV0.Book.self, value: ["id": 1, "title": "Dune"]) }
        }
        let described = LockedBox<[String]>([])
        try onOtherThread {
            var config = folder.configuration([RenameV2.Book.self])
            config.schemaVersion = 1
            config.migrationBlock = { migration, _ in
                migration.enumerateObjects(ofType: "PMBook") { old, new in
                    guard let old, let new else { return }
                    let dynamic: DynamicObject = new
                    dynamic.heading = "\(old.title as? String ?? "?") (2nd ed.)"
                    described.mutate {
                        $0.append(old.objectSchema.properties.map(\.name).joined(separator: ","))
                        $0.append(new.objectSchema.properties.map(\.columnName).joined(separator: ","))
                        $0.append(new.description)
                    }
                }
            }
            let realm = try Realm(configuration: config)
            #expect(realm.object(ofType: RenameV2.Book.self, forPrimaryKey: 1)?.heading == "Dune (2nd ed.)")
        }
        let lines = described.get()
        #expect(lines.count == 3)
        #expect(lines.first == "id,title")
        #expect(lines.dropFirst().first == "id,book_title")
        #expect(lines.last?.hasPrefix("PMBook {") == true)
    }
}
