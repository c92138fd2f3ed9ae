import Dispatch
import Foundation
import Testing
@testable import Trellis

/// Realm's `asyncRefresh()` rules (its RealmTests: testAsyncRefresh,
/// testAsyncRefreshOnQueueConfinedRealm, testAsyncRefreshTaskCancellation), two `asyncWrite` rules
/// (testAsyncRefreshOnQueueConfinedRealm, testAsyncWriteBasics) and
/// `Realm.open(configuration:_isolation:downloadBeforeOpen:)` in Realm's parameter order.
@Suite struct AsyncRefreshRealmBehaviourTests {
    let folder = TemporaryFolder()

    @MainActor
    @Test func asyncRefreshOnTheMainActorSaysWhetherThereWasANewerVersion() async throws {
        let configuration = folder.configuration([Dog.self])
        let realm = try await Realm.open(configuration: configuration)
        realm.autorefresh = false
        let dogs = realm.objects(Dog.self)
        #expect(dogs.count == 0)
        #expect(await realm.asyncRefresh() == false)
        try onOtherThread {
            let other = try Realm(configuration: configuration)
            try other.write { other.add(Dog()) }
        }
        #expect(dogs.count == 0)
        #expect(await realm.asyncRefresh() == true)
        #expect(dogs.count == 1)
    }

    @MainActor
    @Test func asyncRefreshInACancelledTaskDoesNotMoveAndReturnsFalse() async throws {
        let configuration = folder.configuration([Dog.self])
        let realm = try await Realm.open(configuration: configuration)
        realm.autorefresh = false
        let dogs = realm.objects(Dog.self)
        _ = dogs.count
        try onOtherThread {
            let other = try Realm(configuration: configuration)
            try other.write { other.add(Dog()) }
        }
        let task = Task { @MainActor in await realm.asyncRefresh() }
        task.cancel()
        #expect(await task.value == false)
        #expect(dogs.count == 0)
    }

    static func queueRealmInChildProcess() -> Realm? {
        let url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("refresh-\(UUID()).realm")
        let configuration = Realm.Configuration(fileURL: url, objectTypes: [Dog.self])
        let queue = DispatchQueue(label: "refresh")
        return queue.sync { try? Realm(configuration: configuration, queue: queue) }
    }

    @Test func asyncRefreshOfAQueueConfinedRealmStopsWithRealmsMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            guard let realm = AsyncRefreshRealmBehaviourTests.queueRealmInChildProcess() else { return }
            let box = UncheckedBox(realm)
            await Task { @MainActor in _ = await box.value.asyncRefresh() }.value
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("asyncRefresh() can only be called on main thread or actor-isolated Realms"))
    }

    /// Realm's testAsyncRefreshOnQueueConfinedRealm, its second half: `asyncWrite` too is only
    /// for a Realm of the main thread or of an actor.
    @Test func asyncWriteOfAQueueConfinedRealmStopsWithRealmsMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            guard let realm = AsyncRefreshRealmBehaviourTests.queueRealmInChildProcess() else { return }
            let box = UncheckedBox(realm)
            await Task { @MainActor in _ = try? await box.value.asyncWrite {} }.value
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("asyncWrite() can only be called on main thread or actor-isolated Realms"))
    }

    /// Realm's testAsyncWriteBasics: inside the block the Realm is in a write transaction and
    /// performing asynchronous write operations; after it, neither.
    @MainActor
    @Test func anAsyncWriteIsAnAsynchronousWriteOperationUntilItReturns() async throws {
        let realm = try await Realm.open(configuration: folder.configuration([Dog.self]))
        var inside: [Bool] = []
        let dog = try await realm.asyncWrite {
            inside = [realm.isInWriteTransaction, realm.isPerformingAsynchronousWriteOperations]
            return realm.create(Dog.self, value: ["name": "foo"])
        }
        #expect(inside == [true, true])
        #expect(!realm.isInWriteTransaction)
        #expect(!realm.isPerformingAsynchronousWriteOperations)
        #expect(realm.objects(Dog.self).count == 1)
        #expect(dog.name == "foo")
    }

    actor Opener {
        func open(_ configuration: Realm.Configuration) async throws -> Int {
            // Realm's order: configuration, the isolation, then downloadBeforeOpen.
            let realm = try await Realm.open(configuration: configuration, downloadBeforeOpen: .always)
            try await realm.asyncWrite { realm.add(Dog()) }
            return realm.objects(Dog.self).count
        }
    }

    @Test func openWithDownloadBeforeOpenIsConfinedToTheCallingActor() async throws {
        #expect(try await Opener().open(folder.configuration([Dog.self])) == 1)
    }
}

/// Hands a value to another isolation in a test that checks the misuse it causes.
// @unchecked Sendable: used only to give a queue's Realm to the main actor on purpose, in a
// child process that must stop.
private struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
