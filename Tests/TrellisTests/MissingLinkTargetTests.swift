import Foundation
import Testing
@testable import Trellis

final class MissingTargetDog: Object {
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted var nickname: String?
    @Persisted var toys: List<String>
    @Persisted(originProperty: "dogs") var owners: LinkingObjects<MissingTargetOwner>
}

final class MissingTargetOwner: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var dogs: List<MissingTargetDog>
    @Persisted var pack: MutableSet<MissingTargetDog>
    @Persisted var byName: Map<String, MissingTargetDog?>
    @Persisted var best: MissingTargetDog?
}

/// A link to a row that is not in the file (only a damaged file has one) reads the same way
/// typed and dynamic, never traps, and never reads as one of the file's objects: list and set
/// elements are unmanaged objects of the target class with default values (`realm` nil), map
/// values and to-one links are nil, and counts, iteration and indexes agree.
@Suite struct MissingLinkTargetTests {
    let folder = TemporaryFolder()

    /// A file whose owner links, from a list, a set, a map and a to-one link, to "rex" and to
    /// "fido"; fido's row is then removed from the file and nothing else (the damage a lost
    /// page or a flipped key leaves).
    func damagedFile() throws -> URL {
        let url = folder.file()
        try onOtherThread {
            let realm = try Realm(configuration: .init(fileURL: url, objectTypes: [MissingTargetOwner.self,
                                                                                   MissingTargetDog.self]))
            let rex = MissingTargetDog(value: ["name": "rex", "age": 3, "nickname": "r", "toys": ["ball"]])
            let fido = MissingTargetDog(value: ["name": "fido", "age": 5, "nickname": "f", "toys": ["bone"]])
            try realm.write {
                let owner = realm.create(MissingTargetOwner.self, value: ["id": 1])
                owner.dogs.append(objectsIn: [rex, fido, rex])
                owner.pack.insert(objectsIn: [rex, fido])
                owner.byName["rex"] = rex
                owner.byName["fido"] = fido
                owner.best = fido
            }
            let table = try #require(realm.core.table(for: MissingTargetDog.self, create: false))
            let key = try #require(fido._managed?.key)
            try realm.write {
                let txn = try #require(realm.core.writeTransaction)
                #expect(try txn.delete(table.rows, integerKey: key))
            }
            #expect(realm._consistencyProblems().contains { $0.contains("links to missing") })
        }
        return url
    }

    @Test func typedCollectionsReadAMissingTargetAsAnUnmanagedDefaultObject() throws {
        let url = try damagedFile()
        let realm = try Realm(configuration: .init(fileURL: url, objectTypes: [MissingTargetOwner.self,
                                                                               MissingTargetDog.self]))
        let owner = try #require(realm.object(ofType: MissingTargetOwner.self, forPrimaryKey: 1))
        #expect(owner.dogs.count == 3)
        #expect(Array(owner.dogs).map(\.name) == ["rex", "", "rex"])
        let missing = owner.dogs[1]
        #expect(missing.realm == nil)
        #expect(missing.name == "" && missing.age == 0 && missing.nickname == nil && missing.toys.isEmpty)
        #expect(owner.dogs[0].realm != nil)
        #expect(owner.pack.count == 2)
        #expect(Array(owner.pack).map(\.name).sorted() == ["", "rex"])
        #expect(owner.byName.count == 2)
        #expect(owner.byName["rex"]??.name == "rex")
        #expect(owner.best == nil)
    }

    /// Before the fix, a `List<DynamicObject>` element linking to a missing row trapped with
    /// "Object has been deleted or invalidated." and a dynamic to-one link handed out an
    /// accessor whose every read trapped the same way.
    @Test func dynamicCollectionsReadAMissingTargetAsAnUnmanagedObjectWithTheClassSchema() throws {
        let url = try damagedFile()
        let realm = try Realm(configuration: .init(fileURL: url))
        let owner = try #require(realm.dynamicObjects("MissingTargetOwner").first)
        let dogs = owner.dynamicList("dogs")
        #expect(dogs.count == 3)
        #expect(Array(dogs).map { $0["name"] as? String } == ["rex", "", "rex"])
        let missing = dogs[1]
        #expect(missing.realm == nil)
        #expect(missing.objectSchema.className == "MissingTargetDog")
        #expect(missing.objectSchema.properties.map(\.name).contains("toys"))
        #expect(missing["name"] as? String == "")
        #expect(missing["age"] as? Int == 0)
        #expect(missing["nickname"] == nil)
        #expect((missing["toys"] as? List<String>)?.isEmpty == true)
        #expect((missing["owners"] as? LinkingObjects<DynamicObject>)?.isEmpty == true)
        // Setting a value on the placeholder keeps it there; it is not written to the file.
        missing["age"] = 7
        #expect(missing["age"] as? Int == 7)
        #expect(dogs[1]["age"] as? Int == 0)
        #expect(dogs[0].realm != nil && dogs[0]["name"] as? String == "rex")
        #expect(missing.description.contains("MissingTargetDog"))

        let pack = owner.dynamicMutableSet("pack")
        #expect(pack.count == 2)
        #expect(Array(pack).compactMap { $0["name"] as? String }.sorted() == ["", "rex"])
        #expect(Array(pack).filter { $0.realm == nil }.count == 1)

        let byName: Map<String, DynamicObject?> = owner.dynamicMap("byName")
        #expect(byName.count == 2)
        #expect(byName["rex"]??["name"] as? String == "rex")
        #expect(byName["fido"] == .some(nil))
        #expect(owner["best"] == nil)
    }
}
