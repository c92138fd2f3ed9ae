import Foundation
import Testing
@testable import Trellis
import TrellisTestSupport

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
        var generator = SplitMix64(seed: 18)
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

    /// Counting in key order steps the reused cursor from one target's entries to the next
    /// instead of searching; in any other order it searches. Every order gives the counts of
    /// the links seen from the origins (targets with none at the start, middle and end, two
    /// origin properties, several links from one origin), in a read and after another write.
    @Test func backlinkCountsInAnyOrderMatchTheLinksFromTheOrigins() throws {
        let realm = try Realm(configuration: folder.configuration([CountedOwner.self, CountedPet.self]))
        var generator = SplitMix64(seed: 1818)
        try realm.write {
            for i in 0..<60 { realm.add(CountedPet(value: ["name": "pet \(i)"])) }
            let pets = Array(realm.objects(CountedPet.self))
            for i in 0..<40 {
                let owner = realm.create(CountedOwner.self, value: ["name": "owner \(i)"])
                // Pets 0-4 and 55-59 stay without links; the others get 0-3 from each owner.
                for _ in 0..<Int(generator.next() % 4) {
                    owner.pets.append(pets[5 + Int(generator.next() % 50)])
                }
                if generator.next() % 3 == 0 { owner.pet = pets[5 + Int(generator.next() % 50)] }
            }
        }
        func expected() -> [(list: Int, toOne: Int)] {
            let pets = Array(realm.objects(CountedPet.self)), owners = Array(realm.objects(CountedOwner.self))
            return pets.map { pet in
                (owners.reduce(0) { $0 + $1.pets.filter { $0.isSameObject(as: pet) }.count },
                 owners.filter { $0.pet?.isSameObject(as: pet) == true }.count)
            }
        }
        func check(_ order: [Int], _ truth: [(list: Int, toOne: Int)], interleaved: Bool) {
            let pets = Array(realm.objects(CountedPet.self))
            if interleaved {
                for i in order {
                    #expect(pets[i].listOwners.count == truth[i].list, "pet \(i)")
                    #expect(pets[i].owners.count == truth[i].toOne, "pet \(i)")
                }
            } else {
                for i in order { #expect(pets[i].listOwners.count == truth[i].list, "pet \(i)") }
                for i in order { #expect(pets[i].owners.count == truth[i].toOne, "pet \(i)") }
            }
        }
        var truth = expected()
        #expect(truth.contains { $0.list > 1 } && truth.contains { $0.toOne == 1 })
        let inOrder = Array(0..<60)
        var shuffled = inOrder
        shuffled.shuffle(using: &generator)
        for interleaved in [false, true] {
            check(inOrder, truth, interleaved: interleaved)
            check(inOrder.reversed(), truth, interleaved: interleaved)
            check(shuffled, truth, interleaved: interleaved)
            check(inOrder, truth, interleaved: interleaved)
        }
        try realm.write {
            let pets = Array(realm.objects(CountedPet.self))
            for owner in realm.objects(CountedOwner.self) where generator.next() % 2 == 0 {
                owner.pets.append(pets[Int(generator.next() % 60)])
                owner.pet = generator.next() % 2 == 0 ? nil : pets[Int(generator.next() % 60)]
            }
        }
        truth = expected()
        check(inOrder, truth, interleaved: true)
        check(shuffled, truth, interleaved: false)
    }

    /// A LinkingObjects value makes its results only when something other than a count needs
    /// them; copies share them, a count before and after agrees, and separate reads differ.
    @Test func linkingObjectsMadeForACountBehaveAsResults() throws {
        let realm = try Realm(configuration: folder.configuration([CountedOwner.self, CountedPet.self]))
        try realm.write {
            let pet = realm.create(CountedPet.self, value: ["name": "p"])
            for i in 0..<3 { realm.create(CountedOwner.self, value: ["name": "o\(i)", "pets": [pet]]) }
        }
        let pet = try #require(realm.objects(CountedPet.self).first)
        let owners = pet.listOwners
        let copy = owners
        #expect(owners.count == 3)
        #expect(owners == copy)
        #expect(pet.listOwners != pet.listOwners)
        #expect(owners.map(\.name).sorted() == ["o0", "o1", "o2"])
        #expect(copy.count == 3 && owners.filter("name != 'o1'").count == 2)
        #expect(owners.realm != nil && !owners.isEmpty)
        try realm.write { realm.delete(realm.objects(CountedOwner.self).filter("name == 'o0'")) }
        #expect(owners.count == 2 && copy.count == 2 && pet.listOwners.count == 2)
        #expect(owners.freeze().count == 2)
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

    /// A List's elements are iterated through one reused accessor while nothing else holds it:
    /// elements kept, held weakly, or appearing twice keep their own rows.
    @Test func objectsKeptFromAListIterationStayDistinctAndKeepTheirRows() throws {
        let realm = try realmWithPets(12)
        let owner = try realm.write {
            let pets = Array(realm.objects(CountedPet.self))
            return realm.create(CountedOwner.self, value: ["name": "o", "pets": pets + [pets[0], pets[5]]])
        }
        let expected = (0..<12).map { "pet \($0)" } + ["pet 0", "pet 5"]
        var kept = [CountedPet]()
        weak var weakFirst: CountedPet?
        for (index, pet) in owner.pets.enumerated() {
            if index == 0 { weakFirst = pet }
            if let weakFirst { #expect(weakFirst.name == "pet 0") }
            #expect(pet.name == expected[index])
            if index % 4 == 1 { kept.append(pet) }
        }
        #expect(kept.map(\.name) == stride(from: 1, to: expected.count, by: 4).map { expected[$0] })
        #expect(Set(kept.map { ObjectIdentifier($0) }).count == kept.count)
        #expect(owner.pets.map(\.name) == expected)
        #expect(Array(owner.pets).map(\.name) == expected)
        // Changed while iterating (inside a write): the iteration sees the list as it began.
        try realm.write {
            var seen = [String]()
            for pet in owner.pets {
                seen.append(pet.name)
                if seen.count == 1 { owner.pets.removeAll() }
            }
            #expect(seen == expected)
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
