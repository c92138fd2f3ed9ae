import Foundation
import Testing
import Trellis

final class ThawItem: Object {
    @Persisted var name = ""
}

/// `thaw()` gives the calling thread's live Realm as it is, without refreshing it (Realm's
/// RealmCollectionTypeTests/ObjectTests/ProjectionTests.testThawUpdatedOnDifferentThread:
/// "Thaw shouldn't reflect background transactions until refreshed"): a collection frozen on
/// another thread after its commits, thawed here, shows this thread's version; `refresh()`
/// then brings those commits. Before, thawing moved this thread's Realm to the newest version.
@Suite struct ThawKeepsTheThreadsVersionTests {
    /// Runs `body` on a new thread and waits for it.
    private func onAnotherThread(_ body: @escaping @Sendable () -> Void) {
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            body()
            done.signal()
        }
        thread.start()
        done.wait()
    }

    private final class Box<T>: @unchecked Sendable { var value: T?; init() {} }

    @Test func aCollectionThawedHereShowsThisThreadsVersionUntilRefreshed() throws {
        let configuration = Realm.Configuration(inMemoryIdentifier: "thaw-\(UUID().uuidString)",
                                                objectTypes: [ThawItem.self])
        let realm = try Realm(configuration: configuration)
        try realm.write {
            realm.add(ThawItem(value: ["name": "1"]))
            realm.add(ThawItem(value: ["name": "2"]))
        }
        let items = realm.objects(ThawItem.self).sorted(byKeyPath: "name")
        #expect(items.count == 2)
        let frozen = Box<Results<ThawItem>>()
        let frozenObject = Box<ThawItem>()
        onAnotherThread {
            guard let realm = try? Realm(configuration: configuration) else { return }
            let items = realm.objects(ThawItem.self).sorted(byKeyPath: "name")
            try? realm.write {
                realm.delete(realm.objects(ThawItem.self).filter("name == '2'"))
                items.first?.name = "3"
            }
            frozen.value = items.freeze()
            frozenObject.value = items.first?.freeze()
        }
        let frozenItems = try #require(frozen.value)
        #expect(frozenItems.map(\.name) == ["3"])
        let thawed = try #require(frozenItems.thaw())
        #expect(thawed.map(\.name) == ["1", "2"])
        #expect(items.map(\.name) == ["1", "2"])
        #expect(try #require(frozenObject.value).thaw()?.name == "1")
        realm.refresh()
        #expect(thawed.map(\.name) == ["3"])
        #expect(items.map(\.name) == ["3"])
    }
}
