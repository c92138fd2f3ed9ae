import Foundation
import Testing
import Trellis

final class MemberwiseAddress: EmbeddedObject {
    @Persisted var city = ""
    @Persisted var country = ""
}

/// An address value stored as an embedded `MemberwiseAddress`.
struct MemberwiseAddressValue: CustomPersistable {
    typealias PersistedType = MemberwiseAddress
    var city = ""
    var country = ""
    init(_ city: String, _ country: String) {
        self.city = city
        self.country = country
    }
    init(persistedValue: MemberwiseAddress) {
        city = persistedValue.city
        country = persistedValue.country
    }
    var persistableValue: MemberwiseAddress { MemberwiseAddress(value: [city, country]) }
}

final class MemberwisePlace: Object {
    @Persisted var name = ""
    @Persisted var object: MemberwiseAddressValue
    @Persisted var optObject: MemberwiseAddressValue?
    @Persisted var list: List<MemberwiseAddressValue>
    @Persisted var map: Map<String, MemberwiseAddressValue>
}

final class MemberwiseVisit: Object {
    @Persisted var name = ""
    @Persisted var place: MemberwisePlace?
    @Persisted var places: List<MemberwisePlace>
}

final class MemberwiseLinked: EmbeddedObject {
    @Persisted var address: MemberwiseAddress?
}

struct MemberwiseLinkedValue: CustomPersistable {
    typealias PersistedType = MemberwiseLinked
    init() {}
    init(persistedValue: MemberwiseLinked) {}
    var persistableValue: MemberwiseLinked { MemberwiseLinked() }
}

final class MemberwiseTagged: EmbeddedObject {
    @Persisted var tags: List<Int>
}

struct MemberwiseTaggedValue: CustomPersistable {
    typealias PersistedType = MemberwiseTagged
    init() {}
    init(persistedValue: MemberwiseTagged) {}
    var persistableValue: MemberwiseTagged { MemberwiseTagged() }
}

final class MemberwiseOddities: Object {
    @Persisted var linked: MemberwiseLinkedValue?
    @Persisted var tagged: MemberwiseTaggedValue?
}

/// A custom persistable value whose persisted type is an embedded object compares with stored
/// objects member by member, as Realm's QueryTests (testMemberwiseEquality,
/// testEqualMappedToEmbeddedObject, testInvalidMemberwiseEquality) expect: `object == value` is
/// every property equal, `!=` its negation; on a collection, ANY element equal on every property
/// (a SUBQUERY), and `!=` a non-empty collection with no such element. Before, the value's
/// unmanaged persisted object was compared by identity and matched nothing.
@Suite struct RealmQueryMemberwiseEqualityTests {
    let folder = TemporaryFolder()
    let a1 = MemberwiseAddressValue("a", "b")
    let a2 = MemberwiseAddressValue("a", "c")
    let a3 = MemberwiseAddressValue("b", "b")

    private func openRealm() throws -> Realm {
        try Realm(configuration: folder.configuration([
            MemberwisePlace.self, MemberwiseAddress.self, MemberwiseVisit.self, MemberwiseOddities.self,
            MemberwiseLinked.self, MemberwiseTagged.self,
        ]))
    }

    /// Places p1, p2, p3 at a1, a2, a3.
    private func filledRealm() throws -> Realm {
        let realm = try openRealm()
        try realm.write {
            for (index, address) in [a1, a2, a3].enumerated() {
                realm.create(MemberwisePlace.self, value: ["name": "p\(index + 1)", "object": address,
                                                           "optObject": address])
            }
        }
        return realm
    }

    private func names(_ results: Results<MemberwisePlace>) -> [String] { results.map(\.name).sorted() }

    @Test func aToOneValueMatchesWhenEveryMemberIsEqual() throws {
        let realm = try filledRealm()
        let places = realm.objects(MemberwisePlace.self)
        let a1 = self.a1
        #expect(names(places.where { $0.object == a1 }) == ["p1"])
        #expect(names(places.where { $0.object != a1 }) == ["p2", "p3"])
        #expect(names(places.where { $0.optObject == a1 }) == ["p1"])
        #expect(names(places.where { $0.optObject != a1 }) == ["p2", "p3"])
        #expect(places.where { $0.object.persistableValue.city != "c" || $0.object == a1 }.count == 3)
        #expect(places.where { $0.object == a1 || $0.object.persistableValue.city != "c" }.count == 3)
        #expect(names(places.filter("object == %@", a1)) == ["p1"])
        #expect(names(places.filter("object != %@", MemberwiseAddressValue("b", "b"))) == ["p1", "p2"])
        #expect(names(places.where { $0.object == MemberwiseAddressValue("a", "x") }) == [])
    }

    @Test func aCollectionMatchesWhenOneElementEqualsOnEveryMember() throws {
        let realm = try filledRealm()
        let places = realm.objects(MemberwisePlace.self)
        let a1 = self.a1
        let p1 = try #require(places.filter("name == 'p1'").first)
        let p2 = try #require(places.filter("name == 'p2'").first)
        try realm.write {
            p1.list.append(a1)
            p1.map["foo"] = a1
        }
        #expect(names(places.where { $0.list == a1 }) == ["p1"])
        #expect(names(places.where { $0.list != a1 }) == [])
        #expect(names(places.where { $0.map.values == a1 }) == ["p1"])
        #expect(names(places.where { $0.map.values != a1 }) == [])
        // a2 and a3 each share one member with a1; no element shares both.
        try realm.write { p2.list.append(objectsIn: [a2, a3]) }
        #expect(names(places.where { $0.list == a1 }) == ["p1"])
        #expect(names(places.where { $0.list != a1 }) == ["p2"])
        #expect(names(places.filter("ANY list == %@", a1)) == ["p1"])
    }

    @Test func aValueReachedThroughLinksComparesTheSameWay() throws {
        let realm = try filledRealm()
        let places = realm.objects(MemberwisePlace.self)
        let a1 = self.a1
        let p1 = try #require(places.filter("name == 'p1'").first)
        let p3 = try #require(places.filter("name == 'p3'").first)
        try realm.write {
            realm.create(MemberwiseVisit.self, value: ["name": "v1", "place": p1, "places": [p3]])
            realm.create(MemberwiseVisit.self, value: ["name": "v2", "places": Array(places)])
        }
        let visits = realm.objects(MemberwiseVisit.self)
        #expect(visits.where { $0.place.object == a1 }.map(\.name) == ["v1"])
        #expect(visits.where { $0.place.object != a1 }.map(\.name) == ["v2"])
        #expect(visits.where { $0.places.object == a1 }.map(\.name) == ["v2"])
        #expect(visits.where { $0.places.object != a1 }.map(\.name) == ["v1"])
    }

    @Test func aPersistedTypeWithALinkOrACollectionIsRefusedWithRealmsMessage() throws {
        let realm = try openRealm()
        func message(_ text: String, _ value: Any) -> String {
            do {
                _ = try realm.objects(MemberwiseOddities.self).filter(validating: text, value)
                return ""
            } catch {
                return "\(error)"
            }
        }
        #expect(message("linked == %@", MemberwiseLinkedValue()).contains("Unsupported property "
            + "'MemberwiseLinked.address' for memberwise equality query: object links are not implemented."))
        #expect(message("tagged == %@", MemberwiseTaggedValue()).contains("Unsupported property "
            + "'MemberwiseTagged.tags' for memberwise equality query: equality on collections is not implemented."))
    }
}
