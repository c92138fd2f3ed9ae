import Foundation
import Testing
@testable import Trellis

// Issue 37 (session 39): `Realm.object(ofType:forPrimaryKey:)` remembers the class it looked up
// last (`PrimaryKeyLookup`: its table, its trees, its key type) and the next lookup of that class
// with a key of the key property's type goes straight to its two searches. What it remembers
// holds only while the Realm's change stamp does and outside writes: every answer must stay the
// one a fresh lookup gives (deleted and absent keys nil, commits seen after a refresh, a write's
// own changes, another class or key type never answered from it).

final class RememberedDog: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var age = 0
}

final class RememberedCat: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var lives = 0
}

final class RememberedLong: Object {
    @Persisted(primaryKey: true) var id: Int64 = 0
    @Persisted var value = 0
}

@Suite struct RememberedLookupTests {
    let folder = TemporaryFolder()

    private var configuration: Realm.Configuration {
        folder.configuration([RememberedDog.self, RememberedCat.self, RememberedLong.self])
    }

    /// Dogs 0..<300 (age = id), cats 0..<300 (lives = id + 1000), longs 0..<300 (value = id * 2).
    private func animals() throws -> Realm {
        let realm = try Realm(configuration: configuration)
        try realm.write {
            for id in 0..<300 {
                realm.create(RememberedDog.self, value: ["id": id, "age": id])
                realm.create(RememberedCat.self, value: ["id": id, "lives": id + 1000])
                realm.create(RememberedLong.self, value: ["id": Int64(id), "value": id * 2])
            }
        }
        return realm
    }

    @Test func aLookupRemembersItsClassAndTheNextOnesAnswerAsAFreshLookup() throws {
        let realm = try animals()
        #expect(realm.object(ofType: RememberedDog.self, forPrimaryKey: 7)?.age == 7)
        let remembered = try #require(realm.spares?.primaryKeyLookup)
        #expect(remembered.type == ObjectIdentifier(RememberedDog.self))
        for id in [0, 299, 150, 1, 298] { #expect(realm.object(ofType: RememberedDog.self, forPrimaryKey: id)?.age == id) }
        // Absent keys: nil, from the remembered class as from a fresh lookup.
        for id in [-1, 300, Int.max, Int.min] { #expect(realm.object(ofType: RememberedDog.self, forPrimaryKey: id) == nil) }
        // Another class is never answered from the dogs' tables, nor another key type.
        #expect(realm.object(ofType: RememberedCat.self, forPrimaryKey: 7)?.lives == 1007)
        #expect(realm.object(ofType: RememberedDog.self, forPrimaryKey: 8)?.age == 8)
        #expect(realm.object(ofType: RememberedLong.self, forPrimaryKey: Int64(9))?.value == 18)
        #expect(realm.spares?.primaryKeyLookup?.type == ObjectIdentifier(RememberedLong.self))
        #expect(realm.object(ofType: RememberedLong.self, forPrimaryKey: Int64(299))?.value == 598)
    }

    @Test func aRememberedLookupSeesDeletesAddsAndChangesOnceCommitted() throws {
        let realm = try animals()
        #expect(realm.object(ofType: RememberedDog.self, forPrimaryKey: 5)?.age == 5)
        try realm.write {
            realm.delete(try #require(realm.object(ofType: RememberedDog.self, forPrimaryKey: 5)))
            // Inside the write: its own changes.
            #expect(realm.object(ofType: RememberedDog.self, forPrimaryKey: 5) == nil)
            realm.create(RememberedDog.self, value: ["id": 1_000, "age": 42])
            #expect(realm.object(ofType: RememberedDog.self, forPrimaryKey: 1_000)?.age == 42)
            try #require(realm.object(ofType: RememberedDog.self, forPrimaryKey: 6)).age = 60
        }
        #expect(realm.object(ofType: RememberedDog.self, forPrimaryKey: 5) == nil)
        #expect(realm.object(ofType: RememberedDog.self, forPrimaryKey: 1_000)?.age == 42)
        #expect(realm.object(ofType: RememberedDog.self, forPrimaryKey: 6)?.age == 60)
        #expect(realm.object(ofType: RememberedDog.self, forPrimaryKey: 4)?.age == 4)
    }

    @Test func aRememberedLookupSeesAnotherThreadsCommitAfterARefreshOnly() throws {
        let realm = try animals()
        #expect(realm.object(ofType: RememberedDog.self, forPrimaryKey: 20)?.age == 20)
        let configuration = configuration
        try onOtherThread {
            let other = try Realm(configuration: configuration)
            try other.write {
                if let dog = other.object(ofType: RememberedDog.self, forPrimaryKey: 20) { other.delete(dog) }
                other.create(RememberedDog.self, value: ["id": 2_000, "age": 7])
            }
        }
        // The snapshot this Realm reads is unchanged until it refreshes.
        #expect(realm.object(ofType: RememberedDog.self, forPrimaryKey: 20)?.age == 20)
        #expect(realm.object(ofType: RememberedDog.self, forPrimaryKey: 2_000) == nil)
        realm.refresh()
        #expect(realm.object(ofType: RememberedDog.self, forPrimaryKey: 20) == nil)
        #expect(realm.object(ofType: RememberedDog.self, forPrimaryKey: 2_000)?.age == 7)
    }

    @Test func anInvalidatedRealmsNextLookupReadsANewSnapshot() throws {
        let realm = try animals()
        let kept = try #require(realm.object(ofType: RememberedDog.self, forPrimaryKey: 30))
        realm.invalidate()
        #expect(kept.isInvalidated)
        #expect(realm.object(ofType: RememberedDog.self, forPrimaryKey: 31)?.age == 31)
        #expect(realm.object(ofType: RememberedDog.self, forPrimaryKey: 30)?.age == 30)
    }

    @Test func aWrongKeyTypeAfterARememberedLookupTrapsWithRealmsMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let folder = TemporaryFolder()
            let realm = try Realm(configuration: folder.configuration([RememberedDog.self]))
            try realm.write { realm.create(RememberedDog.self, value: ["id": 1, "age": 1]) }
            _ = realm.object(ofType: RememberedDog.self, forPrimaryKey: 1)
            _ = realm.object(ofType: RememberedDog.self, forPrimaryKey: "1")
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("for primary key of 'RememberedDog'"))
    }
}
