import Foundation
import Testing
@testable import Trellis

// One stored class declared in two orders. OrderB's order is the one `trellis schema codegen`
// writes (`_id` first, then by name); OrderA is how the app first declared it.
enum OrderA {
    final class Owner: Object {
        override class func className() -> String { "POOwner" }
        @Persisted var name = ""
        @Persisted(primaryKey: true) var _id = 0
        @Persisted(indexed: true) var city = ""
        @Persisted var pets: List<Pet>
        @Persisted var best: Pet?
        @Persisted var tags: MutableSet<String>
        @Persisted var scores: Map<String, Int>
        @Persisted var age = 0
    }

    final class Pet: Object {
        override class func className() -> String { "POPet" }
        @Persisted var name = ""
        @Persisted(primaryKey: true) var _id = 0
        @Persisted(originProperty: "pets") var owners: LinkingObjects<Owner>
    }

    static let types: [ObjectBase.Type] = [Owner.self, Pet.self]
}

enum OrderB {
    final class Owner: Object {
        override class func className() -> String { "POOwner" }
        @Persisted(primaryKey: true) var _id = 0
        @Persisted var age = 0
        @Persisted var best: Pet?
        @Persisted(indexed: true) var city = ""
        @Persisted var name = ""
        @Persisted var pets: List<Pet>
        @Persisted var scores: Map<String, Int>
        @Persisted var tags: MutableSet<String>
    }

    final class Pet: Object {
        override class func className() -> String { "POPet" }
        @Persisted(primaryKey: true) var _id = 0
        @Persisted var name = ""
        @Persisted(originProperty: "pets") var owners: LinkingObjects<Owner>
    }

    static let types: [ObjectBase.Type] = [Owner.self, Pet.self]
}

/// OrderB with a new property, for a migration that also reorders.
enum OrderC {
    final class Owner: Object {
        override class func className() -> String { "POOwner" }
        @Persisted var label = ""
        @Persisted(primaryKey: true) var _id = 0
        @Persisted var age = 0
        @Persisted var best: Pet?
        @Persisted(indexed: true) var city = ""
        @Persisted var name = ""
        @Persisted var pets: List<Pet>
        @Persisted var scores: Map<String, Int>
        @Persisted var tags: MutableSet<String>
    }

    final class Pet: Object {
        override class func className() -> String { "POPet" }
        @Persisted(primaryKey: true) var _id = 0
        @Persisted var name = ""
        @Persisted(originProperty: "pets") var owners: LinkingObjects<Owner>
    }

    static let types: [ObjectBase.Type] = [Owner.self, Pet.self]
}

/// Properties are matched by name, as in Realm: declaring them in another order needs no
/// migration (Trellis stores the class's rows in the new order when the file opens).
@Suite struct PropertyOrderTests {
    let folder = TemporaryFolder()

    func configuration(_ types: [ObjectBase.Type], version: UInt64 = 0, readOnly: Bool = false,
                       block: MigrationBlock? = nil) -> Realm.Configuration
    {
        Realm.Configuration(fileURL: folder.file(), readOnly: readOnly, schemaVersion: version, migrationBlock: block,
                            objectTypes: types)
    }

    func writeInOrderA(version: UInt64 = 0) throws {
        try onOtherThread {
            let realm = try Realm(configuration: configuration(OrderA.types, version: version))
            try realm.write {
                let rex = OrderA.Pet(value: ["name": "Rex", "_id": 10])
                let fido = OrderA.Pet(value: ["name": "Fido", "_id": 11])
                let ada = OrderA.Owner(value: ["name": "Ada", "_id": 1, "city": "London", "age": 36])
                ada.pets.append(objectsIn: [rex, fido])
                ada.best = fido
                ada.tags.insert(objectsIn: ["math", "poetry"])
                ada.scores["chess"] = 7
                let alan = OrderA.Owner(value: ["name": "Alan", "_id": 2, "city": "Wilmslow", "age": 41])
                alan.pets.append(rex)
                realm.add([ada, alan])
            }
        }
    }

    func expectOrderBData(_ realm: Realm) throws {
        let ada = try #require(realm.object(ofType: OrderB.Owner.self, forPrimaryKey: 1))
        #expect(ada.name == "Ada")
        #expect(ada.age == 36)
        #expect(ada.city == "London")
        #expect(ada.pets.map(\.name) == ["Rex", "Fido"])
        #expect(ada.best?.name == "Fido")
        #expect(Set(ada.tags) == ["math", "poetry"])
        #expect(ada.scores["chess"] == 7)
        let rex = try #require(realm.object(ofType: OrderB.Pet.self, forPrimaryKey: 10))
        #expect(Set(rex.owners.map(\.name)) == ["Ada", "Alan"])
        // Queries, sorting and the secondary index use the new layout.
        #expect(realm.objects(OrderB.Owner.self).filter("city == 'Wilmslow'").map(\.name) == ["Alan"])
        #expect(realm.objects(OrderB.Owner.self).where { $0.age > 40 }.map(\.name) == ["Alan"])
        #expect(realm.objects(OrderB.Owner.self).sorted(byKeyPath: "age", ascending: false).map(\._id) == [2, 1])
        #expect(realm._consistencyProblems().isEmpty)
    }

    @Test func reorderedDeclarationsOpenWithoutAMigration() throws {
        try writeInOrderA()
        try onOtherThread {
            let realm = try Realm(configuration: configuration(OrderB.types))
            try expectOrderBData(realm)
            #expect(realm.schema["POOwner"]?.properties.map(\.name)
                == ["_id", "age", "best", "city", "name", "pets", "scores", "tags"])
            // Still writable in the new order.
            try realm.write { realm.create(OrderB.Owner.self, value: ["_id": 3, "name": "Grace", "age": 85]) }
            #expect(realm.objects(OrderB.Owner.self).filter("age > 80").first?.name == "Grace")
        }
        #expect(try schemaVersionAtURL(folder.file()) == 0)
        // And back again: the first order opens too, with everything in place.
        try onOtherThread {
            let realm = try Realm(configuration: configuration(OrderA.types))
            let grace = try #require(realm.object(ofType: OrderA.Owner.self, forPrimaryKey: 3))
            #expect(grace.name == "Grace")
            #expect(grace.age == 85)
            #expect(realm.object(ofType: OrderA.Owner.self, forPrimaryKey: 1)?.pets.map(\.name) == ["Rex", "Fido"])
            #expect(realm._consistencyProblems().isEmpty)
        }
    }

    @Test func reorderedDeclarationsWithAHigherVersionAndNoBlockKeepTheData() throws {
        try writeInOrderA()
        try onOtherThread {
            let realm = try Realm(configuration: configuration(OrderB.types, version: 2))
            try expectOrderBData(realm)
        }
        #expect(try schemaVersionAtURL(folder.file()) == 2)
    }

    @Test func reorderedDeclarationsWithAMigrationBlockSeeOldAndNewValuesByName() throws {
        try writeInOrderA()
        let seen = LockedBox<[String]>([])
        try onOtherThread {
            let realm = try Realm(configuration: configuration(OrderC.types, version: 1) { migration, oldVersion in
                #expect(oldVersion == 0)
                migration.enumerateObjects(ofType: "POOwner") { old, new in
                    guard let old, let new else { return }
                    let label = "\(old["name"] as? String ?? "?")@\(old["city"] as? String ?? "?")"
                    new["label"] = label
                    seen.mutate { $0.append(label) }
                }
            })
            #expect(realm.objects(OrderC.Owner.self).sorted(byKeyPath: "_id").map(\.label) == ["Ada@London", "Alan@Wilmslow"])
            let ada = try #require(realm.object(ofType: OrderC.Owner.self, forPrimaryKey: 1))
            #expect(ada.age == 36)
            #expect(ada.pets.map(\.name) == ["Rex", "Fido"])
            #expect(realm._consistencyProblems().isEmpty)
        }
        #expect(Set(seen.get()) == ["Ada@London", "Alan@Wilmslow"])
    }

    @Test func reorderedDeclarationsWithDeleteRealmIfMigrationNeededKeepTheFile() throws {
        try writeInOrderA()
        try onOtherThread {
            var config = configuration(OrderB.types)
            config.deleteRealmIfMigrationNeeded = true
            let realm = try Realm(configuration: config)
            try expectOrderBData(realm)
        }
    }

    @Test func aReadOnlyRealmWithReorderedDeclarationsSaysHowToFixIt() throws {
        try writeInOrderA()
        let error = try onOtherThread { () -> Realm.Error? in
            do { _ = try Realm(configuration: configuration(OrderB.types, readOnly: true)); return nil } catch {
                return error as? Realm.Error
            }
        }
        #expect(error?.code == .schemaMismatch)
        #expect(error?.message.contains("declared in another order") == true)
        #expect(error?.message.contains("Open the file writable once") == true)
    }

    @Test func modelsFromSchemaCodegenReopenTheFileTheyCameFrom() throws {
        try writeInOrderA()
        // What `trellis schema export --app-services` and `trellis schema codegen --swift` do.
        let exported = AppServicesSchema(schema: try FileInspection(fileURL: folder.file()).schema)
        let documents = try exported.collectionClassNames.map { try exported.jsonSchema(for: $0) }
        let relationships = try Dictionary(uniqueKeysWithValues: exported.collectionClassNames.map {
            ($0, try exported.relationships(for: $0, database: "app"))
        })
        let source = try AppServicesSchema.swiftModels(schemas: documents, relationships: relationships)
        let generatedOwner = source.components(separatedBy: "class POOwner: Object {")[1]
            .components(separatedBy: "}")[0]
        let generatedNames = generatedOwner.split(separator: "\n").compactMap { line -> String? in
            guard let range = line.range(of: "var ") else { return nil }
            return String(line[range.upperBound...].prefix { $0 != ":" })
        }
        // OrderB declares exactly what codegen writes, in its order.
        let declared = ClassInfo.unbound(for: OrderB.Owner.self).objectSchema.properties.map(\.name)
        #expect(generatedNames == declared)
        try onOtherThread {
            let realm = try Realm(configuration: configuration(OrderB.types))
            try expectOrderBData(realm)
        }
    }
}
