import Foundation
import Testing
@testable import Trellis

// Issue 18's accessor reuse: an accessor (or a LinkingObjects source) that nothing but Trellis
// references may be pointed at another row instead of a new one being made. Whatever the
// caller keeps must never change under it, and the reuse must not keep chains of objects alive.

final class ReuseOwner: Object {
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted var pet: ReusePet?
    @Persisted var pets: List<ReusePet>
}

final class ReusePet: Object {
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted(originProperty: "pet") var owners: LinkingObjects<ReuseOwner>
    @Persisted(originProperty: "pets") var listOwners: LinkingObjects<ReuseOwner>
}

final class ReuseNode: Object {
    @Persisted var value = 0
    @Persisted var next: ReuseNode?
}

@Suite struct LinkTargetReuseTests {
    let folder = TemporaryFolder()

    /// 200 owners, each with its own pet (pet i has age i) and a list of the pets i and i+1.
    private func ownersAndPets() throws -> Realm {
        let realm = try Realm(configuration: folder.configuration([ReuseOwner.self, ReusePet.self, ReuseNode.self]))
        try realm.write {
            let pets = (0..<201).map { i in realm.create(ReusePet.self, value: ["name": "pet \(i)", "age": i]) }
            for i in 0..<200 {
                let owner = realm.create(ReuseOwner.self, value: ["name": "owner \(i)", "age": i])
                owner.pet = pets[i]
                owner.pets.append(objectsIn: [pets[i], pets[i + 1]])
            }
        }
        return realm
    }

    @Test func linkTargetsTheCallerKeepsNeverChangeUnderIt() throws {
        let realm = try ownersAndPets()
        var kept = [ReusePet]()
        var sum = 0
        for owner in realm.objects(ReuseOwner.self).sorted(byKeyPath: "age") {
            sum += owner.pet?.age ?? 0  // dropped at once: may be reused
            if owner.age % 3 == 0, let pet = owner.pet { kept.append(pet) }
            #expect(owner.pet?.name == "pet \(owner.age)")
        }
        #expect(sum == (0..<200).reduce(0, +))
        #expect(kept.count == 67)
        for (index, pet) in kept.enumerated() {
            #expect(pet.age == index * 3)
            #expect(pet.name == "pet \(index * 3)")
        }
    }

    @Test func aWeaklyHeldLinkTargetIsNeverPointedAtAnotherRow() throws {
        let realm = try ownersAndPets()
        weak var weakPet: ReusePet?
        var reads = 0
        for owner in realm.objects(ReuseOwner.self).sorted(byKeyPath: "age") {
            if owner.age == 0 {
                weakPet = owner.pet  // held weakly only (and as the owner accessor's spare)
                #expect(weakPet?.age == 0)
            } else {
                reads += owner.pet?.age ?? 0
            }
            // Released or still pet 0: never repointed at another owner's pet.
            if let pet = weakPet { #expect(pet.age == 0 && pet.name == "pet 0") }
        }
        #expect(reads == (1..<200).reduce(0, +))
    }

    @Test func repointedAccessorsDropTheCollectionsTheyKept() throws {
        let realm = try ownersAndPets()
        var lists = [List<ReusePet>]()
        for owner in realm.objects(ReuseOwner.self).sorted(byKeyPath: "age") {
            // Each owner's list, read through an accessor the iteration may reuse.
            #expect(owner.pets.map(\.age) == [owner.age, owner.age + 1])
            lists.append(owner.pets)
        }
        for (index, list) in lists.enumerated() {
            #expect(list.map(\.age) == [index, index + 1])
        }
        // And on a second pass, with the accessors of the first pass long gone.
        for owner in realm.objects(ReuseOwner.self) {
            #expect(owner.pets.first?.age == owner.age)
        }
    }

    @Test func listsTheCallerKeepsOrHoldsWeaklyNeverChangeUnderIt() throws {
        // A list read through an iteration accessor and dropped is pointed at the next owner's
        // list; one the caller keeps, or holds weakly or unowned, never is.
        let realm = try ownersAndPets()
        var kept = [(age: Int, pets: List<ReusePet>)]()
        weak var weakList: List<ReusePet>?
        var unownedLists = [UnownedList]()
        for owner in realm.objects(ReuseOwner.self).sorted(byKeyPath: "age") {
            let ages: [Int] = owner.pets.map(\.age)  // read and dropped: reusable
            #expect(ages == [owner.age, owner.age + 1])
            switch owner.age {
            case 10: weakList = owner.pets
            case 20: unownedLists.append(UnownedList(owner.pets))
            default: if owner.age % 9 == 0 { kept.append((owner.age, owner.pets)) }
            }
            if let list = weakList { #expect(list.map(\.age) == [10, 11]) }
            #expect(owner.pets.first?.name == "pet \(owner.age)")
        }
        for (age, pets) in kept { #expect(pets.map(\.age) == [age, age + 1]) }
        #expect(kept.count == 23)
    }

    @Test func listElementsTheCallerKeepsNeverChangeUnderIt() throws {
        // A list keeps the element accessor its iteration handed out last, for its next
        // iteration (or the next owner's, when the list accessor moves on): one the caller kept
        // must never be pointed at another row.
        let realm = try ownersAndPets()
        var kept = [ReusePet]()
        for owner in realm.objects(ReuseOwner.self).sorted(byKeyPath: "age") {
            for pet in owner.pets {
                #expect(pet.name == "pet \(pet.age)")
                if pet.age % 5 == 0 { kept.append(pet) }
            }
        }
        #expect(kept.count == 80)  // 5, …, 195 twice (in two owners' lists), 0 and 200 once
        for pet in kept { #expect(pet.age % 5 == 0 && pet.name == "pet \(pet.age)") }

        // The same list iterated inside its own iteration.
        let owner = try #require(realm.objects(ReuseOwner.self).sorted(byKeyPath: "age").first { $0.age == 3 })
        var pairs = [[Int]]()
        for outer in owner.pets {
            let age = outer.age
            for inner in owner.pets { pairs.append([outer.age, inner.age]) }
            #expect(outer.age == age)
        }
        #expect(pairs == [[3, 3], [3, 4], [4, 3], [4, 4]])
    }

    @Test func aReusedListAccessorFollowsWritesToItsNewOwner() throws {
        let realm = try ownersAndPets()
        var seen = 0
        for owner in realm.objects(ReuseOwner.self).sorted(byKeyPath: "age") where owner.age < 20 {
            _ = owner.pets.count
            try realm.write { owner.pets.removeFirst() }
            #expect(owner.pets.map(\.age) == [owner.age + 1])
            seen += 1
        }
        #expect(seen == 20)
    }

    @Test func linkingObjectsValuesTheCallerKeepsNeverChangeUnderIt() throws {
        let realm = try ownersAndPets()
        var kept = [(age: Int, owners: LinkingObjects<ReuseOwner>)]()
        for pet in realm.objects(ReusePet.self).sorted(byKeyPath: "age") {
            // Counted and dropped (reusable), then read again and kept.
            let expected = pet.age == 0 || pet.age == 200 ? 1 : 2
            #expect(pet.listOwners.count == expected)
            #expect(pet.owners.count == (pet.age < 200 ? 1 : 0))
            if pet.age % 10 == 0 { kept.append((pet.age, pet.owners)) }
        }
        for (age, owners) in kept {
            #expect(owners.count == (age < 200 ? 1 : 0))
            #expect(owners.first?.age == (age < 200 ? age : nil))
        }
    }

    /// An iteration reading the same LinkingObjects property of each object moves the source it
    /// kept to the next object: every read must still answer for its own object, whether the
    /// previous value was only counted, read through its Results, or read for another property.
    @Test func linkingObjectsReadInAnIterationAnswerForTheirOwnObject() throws {
        let realm = try ownersAndPets()
        var seen = 0
        for pet in realm.objects(ReusePet.self).sorted(byKeyPath: "age") {
            let age = pet.age
            #expect(pet.owners.count == (age < 200 ? 1 : 0))
            if age % 3 == 0 { #expect(pet.owners.first?.name == (age < 200 ? "owner \(age)" : nil)) }
            #expect(pet.owners.count == (age < 200 ? 1 : 0))
            if age % 4 == 0 {
                let names = Set(pet.listOwners.map(\.name))
                let expected = Set([age - 1, age].filter { (0..<200).contains($0) }.map { "owner \($0)" })
                #expect(names == expected)
            }
            #expect(pet.owners.map(\.age) == (age < 200 ? [age] : []))
            seen += 1
        }
        #expect(seen == 201)
    }

    @Test func linkingObjectsStayLiveAfterTheirSourceWasReused() throws {
        let realm = try ownersAndPets()
        let pets = realm.objects(ReusePet.self).sorted(byKeyPath: "age")
        let pet = pets[5]
        let owners = pet.owners
        #expect(owners.first?.name == "owner 5")  // makes its Results
        _ = pet.owners.count  // another read of the same object: its own source
        try realm.write { realm.create(ReuseOwner.self, value: ["name": "late", "age": 1000]).pet = pet }
        #expect(owners.count == 2)
        #expect(Set(owners.map(\.name)) == ["owner 5", "late"])
    }

    @Test func walkingALongChainOfLinksKeepsNoChainOfAccessors() throws {
        let realm = try Realm(configuration: folder.configuration([ReuseOwner.self, ReusePet.self, ReuseNode.self]))
        let length = 20_000
        try realm.write {
            var next: ReuseNode?
            for value in (0..<length).reversed() {
                let node = realm.create(ReuseNode.self, value: ["value": value])
                node.next = next
                next = node
            }
        }
        let head = try #require(realm.objects(ReuseNode.self).sorted(byKeyPath: "value").first)
        var node: ReuseNode? = head
        var count = 0
        while let current = node {
            #expect(current.value == count)
            #expect(current._spareLinkTarget == nil)  // not an iteration accessor: no spare
            count += 1
            node = current.next
        }
        #expect(count == length)
        // Through an iteration: each node read keeps at most its iteration accessor's spare, and a
        // spare keeps none (releasing them releases two accessors, never a chain of 20,000).
        var sum = 0
        for current in realm.objects(ReuseNode.self) {
            sum += current.next?.value ?? 0
            #expect(current._spareLinkTarget?._spareLinkTarget == nil)
        }
        #expect(sum == (1..<length).reduce(0, +))
    }

    @Test func objectsTheProgramKeepsKeepNoSpares() throws {
        let realm = try ownersAndPets()
        let owners = Array(realm.objects(ReuseOwner.self))  // kept: no longer iteration accessors
        var ages = 0
        for owner in owners {
            ages += owner.pet?.age ?? 0
            _ = owner.pet?.owners.count
        }
        #expect(ages == (0..<200).reduce(0, +))
        // At most the last object the iteration handed out is still its accessor (nothing came
        // after it to find it kept).
        #expect(owners.filter { $0._spareLinkTarget != nil }.count <= 1)
        #expect(owners.filter { $0._spareLinkingObjectsSource != nil }.count <= 1)
    }

    @Test func frozenObjectsKeepNoSpares() throws {
        let realm = try ownersAndPets()
        let frozen = realm.freeze()
        let owner = try #require(frozen.objects(ReuseOwner.self).sorted(byKeyPath: "age").first)
        #expect(owner.pet?.age == 0)
        #expect(owner._spareLinkTarget == nil)
        #expect(owner.pet?.owners.count == 1)
    }
}

/// Holds a list unowned, as a program may.
final class UnownedList {
    unowned let list: List<ReusePet>
    init(_ list: List<ReusePet>) { self.list = list }
}
