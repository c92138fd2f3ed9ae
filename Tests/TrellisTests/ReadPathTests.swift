import Foundation
import Testing
@testable import Trellis

// The fast read paths of issue 18 give the same answers as the general ones: primary-key
// lookups encoded straight from the key's type, backlink counts summed in place with a reused
// cursor.

final class SmallKeyed: Object {
    @Persisted(primaryKey: true) var id: Int8 = 0
    @Persisted var name = ""
}

final class WideKeyed: Object {
    @Persisted(primaryKey: true) var id: Int64 = 0
    @Persisted var name = ""
}

final class CountedOwner: Object {
    @Persisted var name = ""
    @Persisted var pet: CountedPet?
    @Persisted var pets: List<CountedPet>
}

final class CountedPet: Object {
    @Persisted var name = ""
    @Persisted(originProperty: "pets") var listOwners: LinkingObjects<CountedOwner>
    @Persisted(originProperty: "pet") var owners: LinkingObjects<CountedOwner>
}

@Suite struct ReadPathTests {
    let folder = TemporaryFolder()

    @Test func primaryKeyLookupFindsIntAndStringKeysAndMissesAbsentOnes() throws {
        let realm = try Realm(configuration: folder.configuration([IntKeyed.self, PKDog.self]))
        try realm.write {
            for i in 0..<50 { realm.create(IntKeyed.self, value: ["id": i * 3, "label": "n\(i)"]) }
            realm.create(PKDog.self, value: ["pk": "rex", "value": 7])
        }
        for i in 0..<50 {
            #expect(realm.object(ofType: IntKeyed.self, forPrimaryKey: i * 3)?.label == "n\(i)")
            #expect(realm.object(ofType: IntKeyed.self, forPrimaryKey: i * 3 + 1) == nil)
        }
        #expect(realm.object(ofType: IntKeyed.self, forPrimaryKey: -3) == nil)
        #expect(realm.object(ofType: PKDog.self, forPrimaryKey: "rex")?.value == 7)
        #expect(realm.object(ofType: PKDog.self, forPrimaryKey: "Rex") == nil)
        // Through Any and Optional: the general path, same answer.
        let boxed: Any = 9
        #expect(realm.object(ofType: IntKeyed.self, forPrimaryKey: boxed)?.label == "n3")
        let optional: Int? = 12
        #expect(realm.object(ofType: IntKeyed.self, forPrimaryKey: optional)?.label == "n4")
    }

    @Test func primaryKeyLookupConvertsKeysOfAnotherIntegerWidth() throws {
        let realm = try Realm(configuration: folder.configuration([SmallKeyed.self, WideKeyed.self]))
        try realm.write {
            realm.create(SmallKeyed.self, value: ["id": Int8(5), "name": "five"])
            realm.create(WideKeyed.self, value: ["id": Int64(1) << 40, "name": "big"])
        }
        #expect(realm.object(ofType: SmallKeyed.self, forPrimaryKey: 5)?.name == "five")
        #expect(realm.object(ofType: SmallKeyed.self, forPrimaryKey: Int8(5))?.name == "five")
        #expect(realm.object(ofType: WideKeyed.self, forPrimaryKey: Int64(1) << 40)?.name == "big")
        #expect(realm.object(ofType: WideKeyed.self, forPrimaryKey: 1 << 40)?.name == "big")
    }

    @Test func primaryKeyLookupInsideAWriteSeesTheWrite() throws {
        let realm = try Realm(configuration: folder.configuration([IntKeyed.self]))
        try realm.write {
            realm.create(IntKeyed.self, value: ["id": 1, "label": "one"])
            #expect(realm.object(ofType: IntKeyed.self, forPrimaryKey: 1)?.label == "one")
            realm.delete(try #require(realm.object(ofType: IntKeyed.self, forPrimaryKey: 1)))
            #expect(realm.object(ofType: IntKeyed.self, forPrimaryKey: 1) == nil)
        }
    }

    /// Random links and unlinks (fixed seed): every count equals the number of links counted
    /// from the origins' side, in the write and after it.
    @Test func backlinkCountsMatchTheLinksThroughRandomChanges() throws {
        let realm = try Realm(configuration: folder.configuration([CountedOwner.self, CountedPet.self]))
        var generator = SeededGenerator(state: 18)
        try realm.write {
            for i in 0..<20 { realm.add(CountedPet(value: ["name": "pet \(i)"])) }
            for i in 0..<30 { realm.add(CountedOwner(value: ["name": "owner \(i)"])) }
        }
        let pets = Array(realm.objects(CountedPet.self)), owners = Array(realm.objects(CountedOwner.self))
        func verify() {
            for pet in pets {
                let listLinks = owners.reduce(0) { sum, owner in sum + owner.pets.filter { $0.isSameObject(as: pet) }.count }
                let toOneLinks = owners.filter { $0.pet?.isSameObject(as: pet) == true }.count
                #expect(pet.listOwners.count == listLinks)
                #expect(pet.owners.count == toOneLinks)
                #expect(pet.listOwners.isEmpty == (listLinks == 0))
                #expect(realm.objects(CountedPet.self).filter("name == %@ AND listOwners.@count == %@", pet.name,
                                                              listLinks).count == 1)
            }
        }
        for round in 0..<6 {
            try realm.write {
                for _ in 0..<40 {
                    let owner = owners[Int(generator.next() % UInt64(owners.count))]
                    let pet = pets[Int(generator.next() % UInt64(pets.count))]
                    switch generator.next() % 4 {
                    case 0: owner.pets.append(pet)
                    case 1: if !owner.pets.isEmpty { owner.pets.remove(at: Int(generator.next() % UInt64(owner.pets.count))) }
                    case 2: owner.pet = pet
                    default: owner.pet = nil
                    }
                }
                if round % 2 == 0 { verify() }
            }
            verify()
        }
    }

    @Test func backlinkCountsOfAFrozenObjectAreReadFromOtherThreads() throws {
        let realm = try Realm(configuration: folder.configuration([CountedOwner.self, CountedPet.self]))
        try realm.write {
            let pet = realm.create(CountedPet.self, value: ["name": "shared"])
            for i in 0..<3 { realm.create(CountedOwner.self, value: ["name": "o\(i)", "pets": [pet, pet]]) }
        }
        nonisolated(unsafe) let frozen = try #require(realm.objects(CountedPet.self).first).freeze()
        let counts = try onOtherThread { frozen.listOwners.count }
        #expect(counts == 6)
        #expect(frozen.listOwners.count == 6)
    }
}

final class NotedPet: Object {
    @Persisted var name = ""
    /// Not persisted: state of this accessor only.
    var note = ""
}

@Suite struct AccessorReuseTests {
    let folder = TemporaryFolder()

    private func realmWithPets(_ count: Int) throws -> Realm {
        let realm = try Realm(configuration: folder.configuration([CountedOwner.self, CountedPet.self, NotedPet.self]))
        try realm.write {
            for i in 0..<count {
                realm.add(CountedPet(value: ["name": "pet \(i)"]))
                realm.add(NotedPet(value: ["name": "noted \(i)"]))
            }
        }
        return realm
    }

    @Test func objectsKeptFromAnEnumerationStayDistinctAndKeepTheirRows() throws {
        let realm = try realmWithPets(20)
        var kept = [CountedPet]()
        for (index, pet) in realm.objects(CountedPet.self).enumerated() where index % 3 == 0 { kept.append(pet) }
        #expect(kept.map(\.name) == stride(from: 0, to: 20, by: 3).map { "pet \($0)" })
        #expect(Set(kept.map { ObjectIdentifier($0) }).count == kept.count)
        #expect(Array(realm.objects(CountedPet.self)).map(\.name) == (0..<20).map { "pet \($0)" })
    }

    @Test func aWeaklyHeldObjectIsNeverPointedAtAnotherRow() throws {
        let realm = try realmWithPets(10)
        weak var first: CountedPet?
        for (index, pet) in realm.objects(CountedPet.self).enumerated() {
            if index == 0 { first = pet }
            if let first { #expect(first.name == "pet 0") }
            #expect(pet.name == "pet \(index)")
        }
    }

    @Test func stateThatIsNotPersistedBelongsToOneObject() throws {
        let realm = try realmWithPets(5)
        for pet in realm.objects(NotedPet.self) {
            #expect(pet.note == "")
            pet.note = pet.name
        }
    }

    @Test func deletingThroughAnEnumeratedObjectDoesNotAffectTheNext() throws {
        let realm = try realmWithPets(6)
        try realm.write {
            for (index, pet) in realm.objects(CountedPet.self).enumerated() where index % 2 == 0 {
                realm.delete(pet)
            }
        }
        #expect(realm.objects(CountedPet.self).map(\.name) == ["pet 1", "pet 3", "pet 5"])
        for pet in realm.objects(CountedPet.self) { #expect(!pet.isInvalidated && pet.realm != nil) }
    }
}
