import Foundation
import Testing
@testable import Trellis

// Issue 37: a read snapshot that looks many objects up by primary key reads the roots of the
// primary-key index and of the class's rows into memory (a root index) and starts its searches
// below them. The index belongs to the snapshot: every lookup after a refresh must see what
// other threads committed (deletes, changes, a root that split, a file that grew), and a write
// transaction's lookups its own changes.

final class SearchedPet: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var age = 0
}

final class SearchedTag: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var weight = 0
}

@Suite struct PrimaryKeySearchTests {
    let folder = TemporaryFolder()

    private var configuration: Realm.Configuration { folder.configuration([SearchedPet.self, SearchedTag.self]) }

    /// Pets -1,500..<1,500 (age = id), written in one transaction.
    private func pets() throws -> Realm {
        let realm = try Realm(configuration: configuration)
        try realm.write {
            for id in -1_500..<1_500 { realm.create(SearchedPet.self, value: ["id": id, "age": id]) }
            for id in 0..<300 { realm.create(SearchedTag.self, value: ["name": "tag \(id)", "weight": id]) }
        }
        return realm
    }

    /// Runs `body` on another thread with its own Realm, and waits for it.
    private func onAnotherThread(_ body: @escaping @Sendable (Realm) throws -> Void) throws {
        let configuration = configuration
        let failure = LockedFailure()
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            do { try body(try Realm(configuration: configuration)) } catch { failure.set("\(error)") }
            done.signal()
        }
        done.wait()
        if let message = failure.message { Issue.record(Comment(rawValue: message)) }
    }

    @Test func lookupsAfterARefreshSeeEveryCommitOfAnotherThread() throws {
        let realm = try pets()
        for id in stride(from: -1_500, to: 1_500, by: 3) {
            #expect(realm.object(ofType: SearchedPet.self, forPrimaryKey: id)?.age == id)
        }
        // Another thread: even ids deleted, odd ones aged by one, 40,000 new pets (the roots split,
        // the file grows).
        try onAnotherThread { other in
            try other.write {
                for id in -1_500..<1_500 {
                    guard let pet = other.object(ofType: SearchedPet.self, forPrimaryKey: id) else { continue }
                    if id % 2 == 0 { other.delete(pet) } else { pet.age = id + 1 }
                }
                for id in 1_500..<41_500 { other.create(SearchedPet.self, value: ["id": id, "age": id]) }
            }
        }
        // This snapshot still reads its own version.
        for id in stride(from: -1_500, to: 1_500, by: 7) {
            #expect(realm.object(ofType: SearchedPet.self, forPrimaryKey: id)?.age == id, "before refresh, id \(id)")
        }
        #expect(realm.object(ofType: SearchedPet.self, forPrimaryKey: 2_000) == nil)
        realm.refresh()
        for id in stride(from: -1_500, to: 42_000, by: 5) {
            let expected: Int? = id >= 41_500 ? nil : id >= 1_500 ? id : id % 2 == 0 ? nil : id + 1
            #expect(realm.object(ofType: SearchedPet.self, forPrimaryKey: id)?.age == expected, "after refresh, id \(id)")
        }
        // String keys (no numbers to index) are found as before.
        for id in 0..<300 { #expect(realm.object(ofType: SearchedTag.self, forPrimaryKey: "tag \(id)")?.weight == id) }
        #expect(realm.object(ofType: SearchedTag.self, forPrimaryKey: "tag 300") == nil)
    }

    @Test func lookupsInAWriteTransactionSeeItsOwnChanges() throws {
        let realm = try pets()
        for id in stride(from: -1_500, to: 1_500, by: 11) { _ = realm.object(ofType: SearchedPet.self, forPrimaryKey: id) }
        try realm.write {
            for id in 1_500..<20_000 { realm.create(SearchedPet.self, value: ["id": id, "age": -id]) }
            for id in stride(from: 0, to: 20_000, by: 13) {
                #expect(realm.object(ofType: SearchedPet.self, forPrimaryKey: id)?.age == (id < 1_500 ? id : -id))
            }
            if let pet = realm.object(ofType: SearchedPet.self, forPrimaryKey: 7) { realm.delete(pet) }
            #expect(realm.object(ofType: SearchedPet.self, forPrimaryKey: 7) == nil)
        }
        for id in stride(from: 0, to: 20_000, by: 17) where id != 7 {
            #expect(realm.object(ofType: SearchedPet.self, forPrimaryKey: id)?.age == (id < 1_500 ? id : -id))
        }
    }

    @Test func aFrozenRealmIsSearchedFromSeveralThreadsAtOnce() throws {
        nonisolated(unsafe) let frozen = try pets().freeze()
        let failure = LockedFailure()
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            for id in stride(from: -1_500 + thread, to: 1_500, by: 4) where frozen.object(ofType: SearchedPet.self, forPrimaryKey: id)?.age != id {
                failure.set("thread \(thread): pet \(id) not found as written")
            }
        }
        #expect(failure.message == nil)
    }
}

/// The first failure message of several threads.
private final class LockedFailure: @unchecked Sendable {
    private let lock = NSLock()
    private var first: String?

    func set(_ message: String) {
        lock.lock()
        defer { lock.unlock() }
        if first == nil { first = message }
    }

    var message: String? {
        lock.lock()
        defer { lock.unlock() }
        return first
    }
}
