import Foundation
import Testing
import Trellis

final class EqualityKeyed: Object {
    @Persisted(primaryKey: true) var id = ""
    @Persisted var values: List<Int>
}

final class EqualityPlain: Object {
    @Persisted var value = 0
}

/// Realm's `NSObject` members that its apps and tests call: `isEqual(_:)` on objects and on
/// `List`, `MutableSet` and `Map` (unmanaged: by contents; managed: the same stored collection),
/// `hash`, and `ObjectSchema.objectClass`.
@Suite struct RealmIsEqualTests {
    let folder = TemporaryFolder()

    @Test func unmanagedCollectionsAreEqualByContents() {
        let a = List<Int>(), b = List<Int>(), c = List<Int>()
        #expect(a.isEqual(b))
        a.append(objectsIn: [1, 2]); b.append(objectsIn: [1, 2]); c.append(1)
        #expect(a.isEqual(b) && !a.isEqual(c))
        #expect(!a.isEqual([1, 2]) && !a.isEqual(nil))

        let s1 = MutableSet<String>(), s2 = MutableSet<String>()
        s1.insert(objectsIn: ["x", "y"]); s2.insert(objectsIn: ["y", "x"])
        #expect(s1.isEqual(s2))
        s2.insert("z")
        #expect(!s1.isEqual(s2))

        let m1 = Map<String, Int>(), m2 = Map<String, Int>()
        m1["k"] = 1; m2["k"] = 1
        #expect(m1.isEqual(m2))
        m2["k"] = 2
        #expect(!m1.isEqual(m2))
    }

    @Test func managedCollectionsAreEqualWhenTheyAreTheSameStoredCollection() throws {
        let realm = try Realm(configuration: folder.configuration([EqualityKeyed.self, EqualityPlain.self]))
        let (first, second) = try realm.write {
            (realm.create(EqualityKeyed.self, value: ["id": "a", "values": [1]]),
             realm.create(EqualityKeyed.self, value: ["id": "b", "values": [1]]))
        }
        let again = try #require(realm.object(ofType: EqualityKeyed.self, forPrimaryKey: "a"))
        #expect(first.values.isEqual(again.values))
        #expect(!first.values.isEqual(second.values))
        let unmanaged = List<Int>()
        unmanaged.append(1)
        #expect(!first.values.isEqual(unmanaged))
    }

    @Test func objectsAreEqualAsByEqualsAndHashAlike() throws {
        let realm = try Realm(configuration: folder.configuration([EqualityKeyed.self, EqualityPlain.self]))
        let keyed = EqualityKeyed()
        keyed.id = "k"
        let twin = EqualityKeyed()
        twin.id = "k"
        #expect(!keyed.isEqual(twin))
        let plain = try realm.write { realm.create(EqualityPlain.self, value: [1]) }
        try realm.write { realm.add(keyed) }
        let read = try #require(realm.object(ofType: EqualityKeyed.self, forPrimaryKey: "k"))
        #expect(keyed !== read && keyed.isEqual(read) && keyed.hash == read.hash)
        let plainAgain = try #require(realm.objects(EqualityPlain.self).first)
        #expect(plain.isEqual(plain) && !plain.isEqual(plainAgain) && !plain.isEqual(keyed) && !plain.isEqual(nil))
        #expect(plain.hash == plain.hash)
    }

    @Test func objectSchemaNamesItsClass() throws {
        let realm = try Realm(configuration: folder.configuration([EqualityKeyed.self, EqualityPlain.self]))
        let schema = try #require(realm.schema["EqualityKeyed"])
        #expect(ObjectIdentifier(schema.objectClass) == ObjectIdentifier(EqualityKeyed.self))
        #expect(ObjectIdentifier(EqualityPlain().objectSchema.objectClass) == ObjectIdentifier(EqualityPlain.self))
    }
}
