import Foundation
import Testing
@testable import Trellis

@Suite struct SchemaTests {
    @Test func schemaListsPersistedPropertiesInDeclarationOrderAndIgnoresOthers() {
        let schema = AllTypes().objectSchema
        #expect(schema.className == "AllTypes")
        #expect(schema.properties.first?.name == "bool")
        #expect(schema.properties.map(\.name).contains("optSize"))
        #expect(!schema.properties.map(\.name).contains("ignored"))
        #expect(schema["optString"]?.isOptional == true)
        #expect(schema["string"]?.isOptional == false)
        #expect(schema["int8"]?.type == .int)
        #expect(schema["any"]?.type == .any)
        #expect(schema["size"]?.type == .string)
        #expect(schema["level"]?.type == .int)
    }

    @Test func primaryKeyAndIndexedAreRecorded() {
        let schema = IntKeyed().objectSchema
        #expect(schema.primaryKeyProperty?.name == "id")
        #expect(schema["id"]?.isIndexed == true)
        #expect(schema["label"]?.isIndexed == true)
        #expect(schema["label"]?.isPrimary == false)
    }

    @Test func linkPropertyRecordsItsTargetClass() {
        let dog = Person().objectSchema["dog"]
        #expect(dog?.type == .object)
        #expect(dog?.objectClassName == "Dog")
        #expect(dog?.isOptional == true)
    }

    private func openError(_ types: [ObjectBase.Type]) -> Realm.Error? {
        let folder = TemporaryFolder()
        do {
            _ = try Realm(configuration: folder.configuration(types))
            return nil
        } catch {
            return error as? Realm.Error
        }
    }

    @Test func requiredToOneLinkIsASchemaErrorAtOpen() {
        let error = openError([RequiredLink.self, Dog.self])
        #expect(error?.code == .invalidSchema)
        #expect(error?.message.contains("- Object property 'dog' must be marked as optional.") == true)
    }

    @Test func twoPrimaryKeysAreASchemaError() {
        let error = openError([TwoPrimaryKeys.self])
        #expect(error?.message.contains("Properties 'pk2' and 'pk1' are both marked as the primary key of 'TwoPrimaryKeys'") == true)
    }

    @Test func embeddedObjectWithPrimaryKeyIsASchemaError() {
        let error = openError([KeyedEmbedded.self])
        #expect(error?.message.contains("Embedded object type 'KeyedEmbedded' cannot have a primary key.") == true)
    }

    @Test func boolPrimaryKeyIsASchemaError() {
        let error = openError([BoolKey.self])
        #expect(error?.message.contains("Property 'BoolKey.flag' of type 'bool' cannot be made the primary key.") == true)
    }

    @Test func optionalAnyRealmValueIsASchemaError() {
        let error = openError([OptionalMixed.self])
        #expect(error?.message.contains("AnyRealmValue property 'value' must not be marked as optional") == true)
    }

    @Test func everySchemaProblemIsReportedTogether() {
        let error = openError([RequiredLink.self, Dog.self, TwoPrimaryKeys.self, KeyedEmbedded.self])
        let message = error?.message ?? ""
        #expect(message.hasPrefix("Schema validation failed due to the following errors:\n"))
        #expect(message.contains("must be marked as optional"))
        #expect(message.contains("both marked as the primary key"))
        #expect(message.contains("cannot have a primary key"))
    }

    @Test func objectTypesMustIncludeLinkTargets() {
        let error = openError([Person.self])
        #expect(error?.code == .invalidSchema)
        #expect(error?.message.contains("Invalid class subset list:\n- 'Person.dog' links to class 'Dog', which is missing from the list of classes managed by the Realm") == true)
    }

    /// Realm keys its schema by class name: a class listed twice is one class (Realm's own
    /// tests list `SwiftStringObject.self` twice and open fine).
    @Test func aClassListedTwiceInObjectTypesIsKeptOnce() throws {
        let folder = TemporaryFolder()
        var config = folder.configuration([Dog.self, Person.self, Dog.self])
        #expect(config.objectTypes.map { $0.map { $0.className() } } == ["Dog", "Person"])
        config.objectTypes = [Person.self, Person.self, Dog.self, Person.self]
        #expect(config.objectTypes.map { $0.map { $0.className() } } == ["Person", "Dog"])
        let frozenConfig = config
        let names = try onOtherThread { () -> [String] in
            let realm = try Realm(configuration: frozenConfig)
            try realm.write { realm.add(Person(value: ["name": "Ana", "dog": ["name": "Rex"]])) }
            #expect(realm.objects(Dog.self).count == 1)
            return realm.schema.objectSchema.map(\.className).sorted()
        }
        #expect(names == ["Dog", "Person"])
        let exported = try AppServicesSchema(objectTypes: [Dog.self, Dog.self])
        #expect(exported.schema.objectSchema.map(\.className) == ["Dog"])
    }

    @Test func schemaIsPersistedAndReadBackOnReopen() throws {
        let folder = TemporaryFolder()
        let written = try onOtherThread {
            try Realm(configuration: folder.configuration([Person.self, Dog.self])).schema["Person"]?.properties.map(\.name)
        }
        #expect(written == ["name", "birthdate", "dog"])
        // A new instance with no object types learns the classes from the file.
        let read = try onOtherThread { () -> ([String], Bool?) in
            let realm = try Realm(configuration: folder.configuration(nil))
            return (realm.schema.objectSchema.map(\.className), realm.schema["Dog"]?["breed"]?.isOptional)
        }
        // The stored classes, and (the default schema) every other model class of the program.
        #expect(Set(read.0).isSuperset(of: ["Dog", "Person"]))
        #expect(read.1 == true)
    }

    @Test func reopeningWithAChangedModelListsEveryDifference() throws {
        let folder = TemporaryFolder()
        try onOtherThread { _ = try Realm(configuration: folder.configuration([Dog.self])) }
        let error = try onOtherThread { () -> Realm.Error? in
            do {
                _ = try Realm(configuration: folder.configuration([Reshaped.Dog.self]))
                return nil
            } catch { return error as? Realm.Error }
        }
        #expect(error?.code == .schemaMismatch)
        let message = error?.message ?? ""
        #expect(message.contains("Property 'Dog.breed' has been removed."))
        #expect(message.contains("Property 'Dog.color' has been added."))
        #expect(message.contains("Property 'Dog.age' has been changed from 'int' to 'string'."))
        #expect(message.contains("Increase Realm.Configuration.schemaVersion"))
    }

    @Test func deleteRealmIfMigrationNeededStartsEmpty() throws {
        let folder = TemporaryFolder()
        try onOtherThread {
            let realm = try Realm(configuration: folder.configuration([Dog.self]))
            try realm.write { realm.add(Dog()) }
        }
        let count = try onOtherThread { () -> Int in
            var config = folder.configuration([Reshaped.Dog.self])
            config.deleteRealmIfMigrationNeeded = true
            let realm = try Realm(configuration: config)
            return realm.objects(Reshaped.Dog.self).count
        }
        #expect(count == 0)
    }

    @Test func lowerSchemaVersionThanTheFileIsAnError() throws {
        let folder = TemporaryFolder()
        try onOtherThread {
            var config = folder.configuration([Dog.self])
            config.schemaVersion = 3
            _ = try Realm(configuration: config)
        }
        let error = try onOtherThread { () -> Realm.Error? in
            do { _ = try Realm(configuration: folder.configuration([Dog.self])); return nil } catch { return error as? Realm.Error }
        }
        #expect(error?.message.contains("Provided schema version 0 is less than last set version 3") == true)
    }
}
