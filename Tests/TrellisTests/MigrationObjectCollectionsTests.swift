import Foundation
import Testing
@testable import Trellis

final class MCOwner: Object {
    @Persisted var name = ""
    @Persisted var any: AnyRealmValue
    @Persisted var pets: List<MCPet>
    @Persisted var petSet: MutableSet<MCPet>
    @Persisted var petMap: Map<String, MCPet?>
    @Persisted var scores: List<Int>
}

final class MCPet: Object {
    @Persisted var name = ""
}

/// What a migration's objects hand out, as in Realm (its ObjectTests.testSetValueForKey,
/// testSubscript, testDynamicMemberSubscript run on a migration object): an AnyRealmValue
/// holding a link reads as the migration's object, and list, set and map properties read as
/// live `List<MigrationObject>`, `List<Int>`, `MutableSet<…>`, `Map<String, …>`.
@Suite struct MigrationObjectCollectionsTests {
    let folder = TemporaryFolder()

    func configuration(version: UInt64, block: MigrationBlock? = nil) -> Realm.Configuration {
        Realm.Configuration(fileURL: folder.file(), schemaVersion: version, migrationBlock: block,
                            objectTypes: [MCOwner.self, MCPet.self])
    }

    func writeVersion0() throws {
        try onOtherThread {
            let realm = try Realm(configuration: configuration(version: 0))
            try realm.write {
                let rex = MCPet(value: ["name": "rex"])
                let tom = MCPet(value: ["name": "tom"])
                let owner = MCOwner(value: ["name": "ann"])
                owner.any = .object(rex)
                owner.pets.append(objectsIn: [rex, tom])
                owner.petSet.insert(tom)
                owner.petMap["r"] = rex
                owner.scores.append(objectsIn: [1, 2])
                realm.add(owner)
            }
        }
    }

    @Test func anAnyRealmValueLinkReadsAndWritesAsTheMigrationsObject() throws {
        try writeVersion0()
        let seen = LockedBox<[String]>([])
        try onOtherThread {
            let realm = try Realm(configuration: configuration(version: 1) { migration, _ in
                migration.enumerateObjects(ofType: "MCOwner") { oldObject, newObject in
                    guard let oldObject, let newObject else { return }
                    let old = oldObject["any"] as? DynamicObject
                    seen.mutate { $0.append("old \(old?["name"] as? String ?? "nil")") }
                    let made = migration.create("MCPet", value: ["name": "made"])
                    newObject["any"] = made
                    let read = newObject["any"] as? DynamicObject
                    seen.mutate { $0.append("same \(read?.isSameObject(as: made) == true)") }
                    newObject.any = AnyRealmValue.object(made)
                    seen.mutate { $0.append("member \((newObject.any as? DynamicObject)?["name"] as? String ?? "nil")") }
                    newObject.setValue(12345, forKey: "any")
                    seen.mutate { $0.append("int \(newObject.value(forKey: "any") as? Int ?? -1)") }
                    newObject["any"] = made
                }
            })
            let owner = try #require(realm.objects(MCOwner.self).first)
            seen.mutate { $0.append("stored \((owner.any.object(MCPet.self))?.name ?? "nil")") }
        }
        #expect(seen.get() == ["old rex", "same true", "member made", "int 12345", "stored made"])
    }

    @Test func collectionsReadAsLiveRealmCollectionsOfTheirElementType() throws {
        try writeVersion0()
        let seen = LockedBox<[String]>([])
        try onOtherThread {
            let realm = try Realm(configuration: configuration(version: 1) { migration, _ in
                migration.enumerateObjects(ofType: "MCOwner") { oldObject, newObject in
                    guard let oldObject, let newObject else { return }
                    guard let pets = newObject["pets"] as? List<MigrationObject>,
                          let scores = newObject["scores"] as? List<Int>,
                          let petSet = newObject["petSet"] as? MutableSet<MigrationObject>,
                          let petMap = newObject["petMap"] as? Map<String, MigrationObject?>,
                          let oldPets = oldObject["pets"] as? List<MigrationObject>
                    else {
                        seen.mutate { $0.append("not Realm's collection types: \(String(describing: newObject["pets"]))") }
                        return
                    }
                    seen.mutate { $0.append("pets \(Array(pets).map { $0["name"] as? String ?? "?" })") }
                    seen.mutate { $0.append("old pets \(oldPets.count), set \(petSet.count), map \(petMap.count)") }
                    let made = migration.create("MCPet", value: ["name": "new"])
                    pets.append(made)
                    pets.remove(at: 0)
                    petSet.insert(made)
                    petMap["n"] = made
                    scores.append(3)
                    // The same collection on every read; it sees what is set afterwards.
                    seen.mutate { $0.append("same \(newObject["pets"] as AnyObject === pets), scores \(Array(scores))") }
                    newObject["scores"] = [7, 8]
                    seen.mutate { $0.append("after set \(Array(scores))") }
                }
            })
            let owner = try #require(realm.objects(MCOwner.self).first)
            seen.mutate { $0.append("stored \(Array(owner.pets).map(\.name)) \(Array(owner.scores)) "
                + "\(owner.petSet.map(\.name).sorted()) \(owner.petMap.keys.sorted())") }
            #expect(realm._consistencyProblems().isEmpty)
        }
        #expect(seen.get() == [
            "pets [\"rex\", \"tom\"]",
            "old pets 2, set 1, map 1",
            "same true, scores [1, 2, 3]",
            "after set [7, 8]",
            "stored [\"tom\", \"new\"] [7, 8] [\"new\", \"tom\"] [\"n\", \"r\"]",
        ])
    }
}
