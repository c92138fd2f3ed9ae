import Foundation
import Testing
@testable import Trellis

// Adding an object reads its to-one properties to `Object` classes through one non-generic
// function (`ObjectLinkField`), which treats every `Persisted<T?>` as a `Persisted<Object?>`.
// Which fields qualify is decided once per class; the links written must be the ones the
// generic witness writes, whatever state the wrapper is in.

final class LinkFieldOwner: Object {
    @Persisted var name = ""
    @Persisted var pet: LinkFieldPet?
    @Persisted var untouchedPet: LinkFieldPet?
    @Persisted var rival: LinkFieldOwner?
    @Persisted var address: LinkFieldAddress?
    @Persisted var pets: List<LinkFieldPet>
    @Persisted var anything: AnyRealmValue
}

final class LinkFieldPet: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted(originProperty: "pet") var owners: LinkingObjects<LinkFieldOwner>
}

final class LinkFieldAddress: EmbeddedObject {
    @Persisted var street = ""
}

@Suite struct ObjectLinkFieldTests {
    let folder = TemporaryFolder()

    private func realm() throws -> Realm {
        try Realm(configuration: folder.configuration([LinkFieldOwner.self, LinkFieldPet.self, LinkFieldAddress.self]))
    }

    @Test func onlyToOnePropertiesToObjectClassesAreReadWithoutGenericCode() throws {
        let info = ClassInfo.unbound(for: LinkFieldOwner.self)
        let qualifying = info.fields.filter(\.holdsOptionalObject).map(\.name)
        #expect(qualifying == ["pet", "untouchedPet", "rival"])
        #expect(ObjectLinkField.qualifies(LinkFieldPet?.self))
        #expect(!ObjectLinkField.qualifies(LinkFieldAddress?.self))
        #expect(!ObjectLinkField.qualifies(Int?.self))
        #expect(!ObjectLinkField.qualifies(String.self))
    }

    @Test func addingAnObjectWritesEveryKindOfToOneValue() throws {
        let realm = try realm()
        let managedPet = LinkFieldPet(value: ["id": 1, "name": "kept"])
        try realm.write { realm.add(managedPet) }

        let first = LinkFieldOwner(value: ["name": "first"])
        first.pet = LinkFieldPet(value: ["id": 2, "name": "new"])  // unmanaged: added with its owner
        first.address = LinkFieldAddress(value: ["street": "Main"])
        let second = LinkFieldOwner(value: ["name": "second"])
        second.pet = managedPet  // managed already: linked
        second.rival = first  // unmanaged, also added on its own in the same write
        let third = LinkFieldOwner(value: ["name": "third"])
        third.pet = LinkFieldPet(value: ["id": 3])
        third.pet = nil  // set, then cleared
        try realm.write {
            realm.add(second)
            realm.add(first)
            realm.add(third)
        }

        let owners = realm.objects(LinkFieldOwner.self)
        let byName = Dictionary(uniqueKeysWithValues: owners.map { ($0.name, $0) })
        #expect(byName["first"]?.pet?.name == "new")
        #expect(byName["first"]?.address?.street == "Main")
        #expect(byName["first"]?.untouchedPet == nil && byName["first"]?.rival == nil)
        #expect(byName["second"]?.pet?.id == 1)
        #expect(byName["second"]?.rival?.name == "first")
        #expect(byName["third"]?.pet == nil)
        #expect(realm.objects(LinkFieldPet.self).count == 2)  // pet 3 was never linked when added
        #expect(realm.object(ofType: LinkFieldPet.self, forPrimaryKey: 1)?.owners.map(\.name) == ["second"])
        // The accessors added read as managed from now on.
        #expect(first.isInvalidated == false && first.realm != nil && first.pet?.realm != nil)
        #expect(second.rival === first || second.rival?.name == "first")
    }

    @Test func aLongChainOfNewObjectsIsAddedThroughItsLinks() throws {
        let realm = try realm()
        let head = LinkFieldOwner(value: ["name": "0"])
        var last = head
        for index in 1..<2_000 {
            let next = LinkFieldOwner(value: ["name": "\(index)"])
            last.rival = next
            last = next
        }
        try realm.write { realm.add(head) }
        var count = 0
        var node: LinkFieldOwner? = head
        while let current = node {
            #expect(current.name == "\(count)")
            count += 1
            node = current.rival
        }
        #expect(count == 2_000)
    }
}
