import Foundation
import Testing
@testable import Trellis

/// Realm's AnyRealmTypeObject: a legacy `RealmProperty<AnyRealmValue>`.
class PropertyMixedHolder: Object {
    let anyValue = RealmProperty<AnyRealmValue>()
    @Persisted var anyCol: AnyRealmValue
}

/// Changes inside nested collections of an `AnyRealmValue` (Realm 10.51's `.list` and
/// `.dictionary`) notify the object and the nested collections' own observers, as Realm's
/// MixedCollectionTest expects (testMixedCollectionObjectNotifications,
/// testMixedCollectionDictionaryNotifications, testMixedCollectionArrayNotifications).
@Suite struct NestedMixedNotificationTests {
    let folder = TemporaryFolder()

    func holder(_ value: AnyRealmValue) throws -> (Realm, PropertyMixedHolder) {
        let realm = try Realm(configuration: folder.configuration([PropertyMixedHolder.self]))
        let holder = PropertyMixedHolder()
        holder.anyValue.value = value
        try realm.write { realm.add(holder) }
        return (realm, holder)
    }

    @Test func everyChangeInsideANestedCollectionIsAChangeOfTheProperty() throws {
        let (realm, o) = try holder(.none)
        let nested = AnyRealmValue.fromDictionary(["key0": .fromDictionary(["key1": .fromArray([.fromArray([.int(3)])])])])
        let edits: [() -> Void] = [
            { o.anyValue.value = nested },
            { o.anyValue.value.dictionaryValue?["key0"]?.dictionaryValue?["key1"]?.listValue?[0].listValue?[0] = .bool(true) },
            { o.anyValue.value.dictionaryValue?["key0"]?.dictionaryValue?["key1"]?.listValue?.append(.float(33.33)) },
            { o.anyValue.value.dictionaryValue?["key0"]?.dictionaryValue?["key1"]?.listValue?.removeLast() },
            { o.anyValue.value.dictionaryValue?["key0"]?.dictionaryValue?["key1"]?.listValue?.removeAll() },
            { o.anyValue.value.dictionaryValue?["key0"]?.dictionaryValue?["key2"] = .string("nowhere") },
            { o.anyValue.value.dictionaryValue?["key0"]?.dictionaryValue?["key2"] = nil },
            { o.anyValue.value.dictionaryValue?.removeAll() },
        ]
        for (step, edit) in edits.enumerated() {
            let heard = LockedBox<[String]>([])
            let token = o.observe { (change: ObjectChange<ObjectBase>) in
                if case .change(_, let properties) = change {
                    heard.mutate { $0.append(properties.map(\.name).joined(separator: ",")) }
                }
            }
            try realm.write { edit() }
            realm.refresh()
            token.invalidate()
            #expect(heard.get() == ["anyValue"], "edit \(step)")
        }
    }

    @Test func aNestedDictionaryReportsItsKeysChanges() throws {
        let inner = AnyRealmValue.fromDictionary(["key1": .fromDictionary(["key5": .float(43)])])
        let (realm, o) = try holder(.fromDictionary(["key0": inner, "key3": .decimal128(Decimal128(1))]))
        func expect(_ map: Map<String, AnyRealmValue>?, _ expected: String, _ edit: () -> Void) throws {
            let heard = LockedBox<[String]>([])
            let token = try #require(map).observe { change in
                if case .update(_, let d, let i, let m) = change { heard.mutate { $0.append("d\(d) i\(i) m\(m)") } }
            }
            try realm.write { edit() }
            realm.refresh()
            token.invalidate()
            #expect(heard.get() == [expected])
        }
        try expect(o.anyValue.value.dictionaryValue, "d[] i[\"key2\"] m[]") {
            o.anyValue.value.dictionaryValue?["key2"] = .fromDictionary(["a": .int(1)])
        }
        try expect(o.anyValue.value.dictionaryValue?["key2"]?.dictionaryValue, "d[] i[] m[\"a\"]") {
            o.anyValue.value.dictionaryValue?["key2"]?.dictionaryValue?["a"] = .string("new")
        }
        try expect(o.anyValue.value.dictionaryValue, "d[\"key3\"] i[] m[]") {
            o.anyValue.value.dictionaryValue?["key3"] = nil
        }
        try expect(o.anyValue.value.dictionaryValue?["key0"]?.dictionaryValue?["key1"]?.dictionaryValue,
                   "d[] i[\"key6\"] m[]") {
            o.anyValue.value.dictionaryValue?["key0"]?.dictionaryValue?["key1"]?.dictionaryValue?["key6"] = .date(Date())
        }
        try expect(o.anyValue.value.dictionaryValue?["key0"]?.dictionaryValue?["key1"]?.dictionaryValue,
                   "d[\"key5\", \"key6\"] i[] m[]") {
            o.anyValue.value.dictionaryValue?["key0"]?.dictionaryValue?["key1"]?.dictionaryValue?.removeAll()
        }
    }

    @Test func aNestedListReportsItsPositionsChanges() throws {
        let inner = AnyRealmValue.fromArray([.fromArray([.float(43), .string("lunch"), .double(12.34)]), .bool(false)])
        let (realm, o) = try holder(.fromArray([inner, .decimal128(Decimal128(1))]))
        func expect(_ list: List<AnyRealmValue>?, _ expected: String, _ edit: () -> Void) throws {
            let heard = LockedBox<[String]>([])
            let token = try #require(list).observe { change in
                if case .update(_, let d, let i, let m) = change { heard.mutate { $0.append("d\(d) i\(i) m\(m)") } }
            }
            try realm.write { edit() }
            realm.refresh()
            token.invalidate()
            #expect(heard.get() == [expected])
        }
        try expect(o.anyValue.value.listValue, "d[] i[2] m[]") {
            o.anyValue.value.listValue?.append(.fromArray([.int(1)]))
        }
        try expect(o.anyValue.value.listValue?[0].listValue, "d[] i[] m[1]") {
            o.anyValue.value.listValue?[0].listValue?[1] = .objectId(ObjectId.generate())
        }
        try expect(o.anyValue.value.listValue?[0].listValue?[0].listValue, "d[2] i[] m[]") {
            o.anyValue.value.listValue?[0].listValue?[0].listValue?.removeLast()
        }
        try expect(o.anyValue.value.listValue?[0].listValue?[0].listValue, "d[0, 1] i[] m[]") {
            o.anyValue.value.listValue?[0].listValue?[0].listValue?.removeAll()
        }
    }

    @Test func aCollectionOfObjectsSeesTheirNestedChangesAsModifications() throws {
        let (realm, o) = try holder(.fromArray([.int(1)]))
        let heard = LockedBox<[String]>([])
        let token = realm.objects(PropertyMixedHolder.self).observe { change in
            if case .update(_, let d, let i, let m) = change { heard.mutate { $0.append("d\(d) i\(i) m\(m)") } }
        }
        realm.refresh()
        try realm.write { o.anyValue.value.listValue?.append(.string("two")) }
        realm.refresh()
        token.invalidate()
        #expect(heard.get() == ["d[] i[] m[0]"])
    }
}
