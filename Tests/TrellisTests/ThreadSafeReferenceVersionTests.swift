import Foundation
import Testing
import Trellis

final class VersionedDog: Object {
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted(originProperty: "dogs") var owners: LinkingObjects<VersionedOwner>
}

final class VersionedOwner: Object {
    @Persisted var name = ""
    @Persisted var dogs: List<VersionedDog>
}

/// Realm's `ThreadSafeReference` keeps the version it was made at (realm-core's
/// `refresh_target_realm`; Realm's ThreadSafeReferenceTests): a Realm in no read transaction yet
/// begins one at that version, so the value is seen as it was when the reference was made; an
/// older Realm moves forward; a reference made in a write resolves at the newest version.
@Suite struct ThreadSafeReferenceVersionTests {
    let folder = TemporaryFolder()
    var configuration: Realm.Configuration { folder.configuration([VersionedDog.self, VersionedOwner.self]) }

    #if !TRELLIS_LMDB
    // (The LMDB build begins reads at the newest version only: it resolves there.)

    /// Realm's testPassThreadSafeReferenceToDeletedObject.
    @Test func aReferenceToAnObjectDeletedSinceResolvesInANewRealmAsOfItsVersion() throws {
        let configuration = self.configuration
        let realm = try Realm(configuration: configuration)
        let dog = VersionedDog()
        try realm.write { realm.add(dog) }
        let first = ThreadSafeReference(to: dog)
        let second = ThreadSafeReference(to: dog)
        #expect(dog.age == 0)
        try realm.write { realm.delete(dog) }
        let seen = try onOtherThread { () -> [Int?] in
            let other = try Realm(configuration: configuration)
            let before = other.resolve(first)?.age
            other.refresh()
            return [before, other.resolve(second)?.age]
        }
        #expect(seen == [0, nil])
    }

    /// Realm's testPassThreadSafeReferenceToResults: results referenced before a write count
    /// what they counted then, until the resolving Realm refreshes.
    @Test func resultsReferencedBeforeAWriteResolveInANewRealmAsTheyWere() throws {
        let configuration = self.configuration
        let realm = try Realm(configuration: configuration)
        let results = realm.objects(VersionedDog.self).filter("name != 'C'").sorted(byKeyPath: "name", ascending: false)
        let reference = ThreadSafeReference(to: results)
        try realm.write {
            for name in ["A", "B", "C", "D"] { realm.create(VersionedDog.self, value: ["name": name]) }
        }
        #expect(Array(results.map(\.name)) == ["D", "B", "A"])
        let seen = try onOtherThread { () -> [[String]] in
            let other = try Realm(configuration: configuration)
            guard let resolved = other.resolve(reference) else { return [] }
            let all = other.objects(VersionedDog.self)
            let before = [Array(resolved.map(\.name)), ["\(all.count)"]]
            other.refresh()
            return before + [Array(resolved.map(\.name)), ["\(all.count)"]]
        }
        #expect(seen == [[], ["0"], ["D", "B", "A"], ["4"]])
    }

    /// After `invalidate()` a Realm is in no read transaction: it too begins one at the
    /// reference's version.
    @Test func anInvalidatedRealmResolvesAReferenceAsOfItsVersion() throws {
        let configuration = self.configuration
        let realm = try Realm(configuration: configuration)
        let dog = try realm.write { realm.create(VersionedDog.self, value: ["name": "Rex", "age": 3]) }
        let reference = ThreadSafeReference(to: dog)
        try onOtherThread {
            let other = try Realm(configuration: configuration)
            try other.write { other.objects(VersionedDog.self).first?.age = 4 }
        }
        let ages = try onOtherThread { () -> [Int?] in
            let other = try Realm(configuration: configuration)
            _ = other.objects(VersionedDog.self).count  // in a read transaction at the newest version
            other.invalidate()
            let resolved = other.resolve(reference)
            return [resolved?.age, other.objects(VersionedDog.self).first?.age]
        }
        #expect(ages == [3, 3])
    }
    #endif

    /// A Realm reading an older version than the reference's moves to the newest (Realm's
    /// `refresh()` of the resolving Realm), so an object created since is found.
    @Test func aRealmOlderThanTheReferenceMovesForward() throws {
        let configuration = self.configuration
        let realm = try Realm(configuration: configuration)
        let waiting = DispatchSemaphore(value: 0), referenced = DispatchSemaphore(value: 0)
        let box = ReferenceBox()
        let thread = Thread {
            let other = try? Realm(configuration: configuration)
            box.counts.append(other?.objects(VersionedDog.self).count ?? -1)  // pins the empty version
            waiting.signal()
            referenced.wait()
            if let other, let reference = box.reference { box.names.append(other.resolve(reference)?.name ?? "nil") }
            box.counts.append(other?.objects(VersionedDog.self).count ?? -1)
            waiting.signal()
        }
        thread.start()
        waiting.wait()
        let dog = try realm.write { realm.create(VersionedDog.self, value: ["name": "Rex"]) }
        box.reference = ThreadSafeReference(to: dog)
        referenced.signal()
        waiting.wait()
        #expect(box.counts == [0, 1])
        #expect(box.names == ["Rex"])
    }

    /// A reference made inside a write transaction names an object of the version its commit
    /// makes: it resolves at the newest version (realm-core's `m_created_in_write_transaction`).
    @Test func aReferenceMadeInAWriteResolvesAtTheNewestVersion() throws {
        let configuration = self.configuration
        let realm = try Realm(configuration: configuration)
        realm.beginWrite()
        let dog = realm.create(VersionedDog.self, value: ["name": "Rex"])
        let reference = ThreadSafeReference(to: dog)
        try realm.commitWrite()
        let name = try onOtherThread { try Realm(configuration: configuration).resolve(reference)?.name }
        #expect(name == "Rex")
    }
}

/// What the thread of ``ThreadSafeReferenceVersionTests/aRealmOlderThanTheReferenceMovesForward()``
/// shares with the test (each side waits for the other's semaphore before reading).
private final class ReferenceBox: @unchecked Sendable {
    var reference: ThreadSafeReference<VersionedDog>?
    var counts: [Int] = []
    var names: [String] = []
}
