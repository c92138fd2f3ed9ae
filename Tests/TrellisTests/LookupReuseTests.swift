import Foundation
import Testing
@testable import Trellis

// Issue 18: `Realm.object(ofType:forPrimaryKey:)` points the accessor it handed out last at the
// next object found when the program let go of it (``RealmSpares``). Whatever the program keeps
// must never change under it, and the spare must not keep the Realm (and its file) open.

final class LookupPet: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted var toys: List<LookupToy>
}

final class LookupToy: Object {
    @Persisted(primaryKey: true) var label = ""
    @Persisted var weight = 0
}

/// A class with a field of its own: its accessors are never pointed at another row.
final class LookupStatefulPet: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var age = 0
    var notes: [String] = []
}

@Suite struct LookupReuseTests {
    let folder = TemporaryFolder()

    private var configuration: Realm.Configuration {
        folder.configuration([LookupPet.self, LookupToy.self, LookupStatefulPet.self])
    }

    /// 100 pets (pet i has age i and the toys "toy i" and "toy i+1"), 101 toys, 10 stateful pets.
    private func petsAndToys() throws -> Realm {
        let realm = try Realm(configuration: configuration)
        try realm.write {
            let toys = (0...100).map { i in realm.create(LookupToy.self, value: ["label": "toy \(i)", "weight": i]) }
            for i in 0..<100 {
                let pet = realm.create(LookupPet.self, value: ["id": i, "name": "pet \(i)", "age": i])
                pet.toys.append(objectsIn: [toys[i], toys[i + 1]])
            }
            for i in 0..<10 { realm.create(LookupStatefulPet.self, value: ["id": i, "age": i]) }
        }
        return realm
    }

    @Test func lookedUpObjectsTheProgramKeepsNeverChangeUnderLaterLookups() throws {
        let realm = try petsAndToys()
        var kept = [LookupPet]()
        var sum = 0
        for i in (0..<100).reversed() {
            sum += realm.object(ofType: LookupPet.self, forPrimaryKey: i)?.age ?? 0  // dropped at once
            if i % 7 == 0, let pet = realm.object(ofType: LookupPet.self, forPrimaryKey: i) { kept.append(pet) }
            #expect(realm.object(ofType: LookupPet.self, forPrimaryKey: i)?.name == "pet \(i)")
        }
        #expect(sum == (0..<100).reduce(0, +))
        #expect(kept.map(\.id) == stride(from: 98, through: 0, by: -7).map { $0 })
        for pet in kept { #expect(pet.name == "pet \(pet.id)" && pet.age == pet.id) }
        #expect(Set(kept.map(ObjectIdentifier.init)).count == kept.count)
        // Two lookups the program holds at once are two objects.
        let first = try #require(realm.object(ofType: LookupPet.self, forPrimaryKey: 1))
        let second = try #require(realm.object(ofType: LookupPet.self, forPrimaryKey: 2))
        #expect(first !== second && first.age == 1 && second.age == 2)
    }

    @Test func aWeaklyHeldLookedUpObjectIsNeverPointedAtAnotherRow() throws {
        let realm = try petsAndToys()
        weak var weakPet = realm.object(ofType: LookupPet.self, forPrimaryKey: 3)  // and the spare
        for i in 10..<40 {
            #expect(realm.object(ofType: LookupPet.self, forPrimaryKey: i)?.age == i)
            // Released or still pet 3: never pointed at another row.
            if let pet = weakPet { #expect(pet.age == 3 && pet.name == "pet 3") }
        }
    }

    @Test func droppingEveryRealmAfterLookupsClosesTheFile() throws {
        try onOtherThread {
            let realm = try petsAndToys()
            #expect(realm.object(ofType: LookupPet.self, forPrimaryKey: 5)?.age == 5)
            _ = realm.object(ofType: LookupPet.self, forPrimaryKey: 6)  // kept as the spare
        }
        #expect(!FileState.isOpen(path: folder.file().path))
        #expect(try Realm.deleteFiles(for: configuration))
    }

    @Test func anObjectOutlivingItsRealmKeepsTheFileOpenUntilDropped() throws {
        var pet = try lookUpPetWithoutKeepingTheRealm(8)
        #expect(FileState.isOpen(path: folder.file().path))
        #expect(pet?.name == "pet 8")
        pet = nil
        #expect(!FileState.isOpen(path: folder.file().path))
    }

    private func lookUpPetWithoutKeepingTheRealm(_ id: Int) throws -> LookupPet? {
        try petsAndToys().object(ofType: LookupPet.self, forPrimaryKey: id)
    }

    @Test func realmValuesOfOneFileShareTheirSpare() throws {
        let realm = try petsAndToys()
        let again = try Realm(configuration: configuration)
        let pet = try #require(realm.object(ofType: LookupPet.self, forPrimaryKey: 1))
        let fromObject = try #require(pet.realm)
        #expect(realm.spares != nil)
        #expect(realm.spares === again.spares && again.spares === fromObject.spares)
        for i in 0..<30 {
            let source = [realm, again, fromObject][i % 3]
            #expect(source.object(ofType: LookupPet.self, forPrimaryKey: i)?.age == i)
        }
        #expect(pet.age == 1)
    }

    @Test func lookupsOfSeveralClassesAnswerForTheirOwnClass() throws {
        let realm = try petsAndToys()
        for i in 0..<40 {
            switch i % 3 {
            case 0: #expect(realm.object(ofType: LookupPet.self, forPrimaryKey: i)?.age == i)
            case 1:
                let toy = try #require(realm.object(ofType: LookupToy.self, forPrimaryKey: "toy \(i)"))
                #expect(Swift.type(of: toy) == LookupToy.self && toy.weight == i && toy.label == "toy \(i)")
            default: #expect(realm.object(ofType: LookupStatefulPet.self, forPrimaryKey: i % 10)?.age == i % 10)
            }
        }
        #expect(realm.object(ofType: LookupPet.self, forPrimaryKey: 1_000) == nil)
        #expect(realm.object(ofType: LookupPet.self, forPrimaryKey: 2)?.name == "pet 2")
    }

    @Test func objectsWithFieldsOfTheirOwnAreNeverReused() throws {
        let realm = try petsAndToys()
        let first = try #require(realm.object(ofType: LookupStatefulPet.self, forPrimaryKey: 1))
        first.notes = ["first"]
        #expect(realm.spares?.lookupAccessor == nil)  // not kept, so never handed out again
        let second = try #require(realm.object(ofType: LookupStatefulPet.self, forPrimaryKey: 2))
        #expect(second.notes.isEmpty && second.age == 2 && first.age == 1)
    }

    @Test func aReusedAccessorReadsAndWritesItsNewRow() throws {
        let realm = try petsAndToys()
        try realm.write {
            for i in 0..<20 {
                let pet = try #require(realm.object(ofType: LookupPet.self, forPrimaryKey: i))
                pet.age += 1000
                pet.toys.removeFirst()
            }
        }
        for i in 0..<20 {
            let pet = try #require(realm.object(ofType: LookupPet.self, forPrimaryKey: i))
            #expect(pet.age == i + 1000)
            #expect(pet.toys.map(\.weight) == [i + 1])
        }
        #expect(realm.object(ofType: LookupPet.self, forPrimaryKey: 20)?.age == 20)
    }

    @Test func listsReadFromAReusedAccessorStayWithTheirOwnObject() throws {
        let realm = try petsAndToys()
        var lists = [(id: Int, toys: List<LookupToy>)]()
        for i in 0..<30 {
            let toys = try #require(realm.object(ofType: LookupPet.self, forPrimaryKey: i)).toys
            #expect(toys.map(\.weight) == [i, i + 1])
            lists.append((i, toys))
        }
        for (id, toys) in lists { #expect(toys.map(\.weight) == [id, id + 1]) }
    }

    @Test func anAccessorDeletedThroughAndDroppedComesBackValidForItsNextRow() throws {
        let realm = try petsAndToys()
        try realm.write {
            let pet = try #require(realm.object(ofType: LookupPet.self, forPrimaryKey: 9))
            realm.delete(pet)
        }
        let next = try #require(realm.object(ofType: LookupPet.self, forPrimaryKey: 10))
        #expect(!next.isInvalidated && next.realm != nil && next.age == 10)
        #expect(realm.object(ofType: LookupPet.self, forPrimaryKey: 9) == nil)
        try realm.write { realm.delete(next) }
        #expect(next.isInvalidated)
    }

    @Test func frozenRealmsKeepNoSpare() throws {
        let realm = try petsAndToys()
        let frozen = realm.freeze()
        #expect(frozen.spares == nil)
        let pet = try #require(frozen.object(ofType: LookupPet.self, forPrimaryKey: 4))
        #expect(pet.isFrozen && pet.age == 4)
        #expect(frozen.object(ofType: LookupPet.self, forPrimaryKey: 5)?.age == 5)
        #expect(pet.age == 4)
        #expect(frozen.thaw().spares === realm.spares)
    }
}
