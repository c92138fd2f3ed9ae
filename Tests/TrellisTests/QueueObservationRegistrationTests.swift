import Dispatch
import Foundation
import Testing
import Trellis

final class QueuedCounter: Object {
    @Persisted var count = 0
}

/// `observe(on: queue)` as Realm registers it (RLMAddNotificationBlock,
/// RLMObjectBaseAddNotificationBlock): the token comes back at once and the observer registers
/// later, on the queue, in the queue's Realm moved to the observing Realm's version as a
/// `ThreadSafeReference` would be. Realm's ObjectTests.testObserveOnDifferentQueue,
/// testInvalidateObserverOnDifferentQueueBeforeRegistration, and `observe`'s documentation (a
/// write right after `observe` is folded into the collection's `.initial`).
@Suite struct QueueObservationRegistrationTests {
    let folder = TemporaryFolder()

    private func openCounter() throws -> (Realm, QueuedCounter) {
        let realm = try Realm(configuration: folder.configuration([QueuedCounter.self]))
        let counter = try realm.write { realm.create(QueuedCounter.self, value: ["count": 1]) }
        return (realm, counter)
    }

    /// Realm's testInvalidateObserverOnDifferentQueueBeforeRegistration: `observe(on:)` returns
    /// while the queue is blocked, and a token invalidated before the queue ran never fires.
    @Test func anObserverInvalidatedBeforeItsBusyQueueRanNeverRegisters() throws {
        let (realm, counter) = try openCounter()
        let queue = DispatchQueue(label: "busy")
        let gate = DispatchSemaphore(value: 0), fired = DispatchSemaphore(value: 0)
        let log = LockedBox<[String]>([])
        queue.async { gate.wait() }
        let first = counter.observe(on: queue) { _ in log.mutate { $0.append("first") } }
        let second = counter.observe(on: queue) { change in
            if case .change(_, let properties) = change {
                log.mutate { $0.append("second \(properties.map(\.name))") }
            }
            fired.signal()
        }
        #expect(first.invalidate())
        gate.signal()
        queue.sync {}
        try realm.write { counter.count = 2 }
        #expect(fired.wait(timeout: .now() + 30) == .success)
        queue.sync {}
        #expect(log.get() == ["second [\"count\"]"])
        second.invalidate()
        #expect(!first.invalidate())
    }

    #if !TRELLIS_LMDB
    // (The LMDB build's queue Realm reads the newest version: a commit made before the queue ran
    // is part of the observer's starting state there.)

    /// A commit made after `observe(on:)` returned but before the queue registered the observer
    /// is its first change, with the old value (the queue's new Realm begins its read
    /// transaction at the observing Realm's version).
    @Test func aCommitBeforeTheQueueRegisteredIsAChangeWithTheOldValue() throws {
        let (realm, counter) = try openCounter()
        let queue = DispatchQueue(label: "late")
        let gate = DispatchSemaphore(value: 0), fired = DispatchSemaphore(value: 0)
        let log = LockedBox<[String]>([])
        queue.async { gate.wait() }
        let token = counter.observe(on: queue) { change in
            if case .change(let object, let properties) = change {
                log.mutate { $0 += properties.map { "\($0.name) \($0.oldValue ?? "nil") -> \($0.newValue ?? "nil")" } }
                log.mutate { $0.append("now \(object.count)") }
            }
            fired.signal()
        }
        try realm.write { counter.count = 2 }
        gate.signal()
        #expect(fired.wait(timeout: .now() + 30) == .success)
        queue.sync {}
        #expect(log.get() == ["count 1 -> 2", "now 2"])
        token.invalidate()
    }
    #endif

    /// `observe`'s documentation: a write made right after observing, before the initial
    /// notification could be delivered, is part of that `.initial`; no update follows for it.
    @Test func aWriteRightAfterObservingIsFoldedIntoTheInitialNotification() throws {
        let (realm, _) = try openCounter()
        let queue = DispatchQueue(label: "initial")
        let gate = DispatchSemaphore(value: 0), fired = DispatchSemaphore(value: 0)
        let log = LockedBox<[String]>([])
        queue.async { gate.wait() }
        let token = realm.objects(QueuedCounter.self).observe(on: queue) { change in
            switch change {
            case .initial(let results): log.mutate { $0.append("initial \(results.count)") }
            case .update(let results, _, let insertions, _): log.mutate { $0.append("update \(results.count) \(insertions)") }
            case .error: log.mutate { $0.append("error") }
            }
            fired.signal()
        }
        try realm.write { realm.create(QueuedCounter.self, value: ["count": 5]) }
        gate.signal()
        #expect(fired.wait(timeout: .now() + 30) == .success)
        queue.sync {}
        try realm.write { realm.create(QueuedCounter.self, value: ["count": 6]) }
        #expect(fired.wait(timeout: .now() + 30) == .success)
        queue.sync {}
        #expect(log.get() == ["initial 2", "update 3 [2]"])
        token.invalidate()
    }

    /// Observing on the queue the block runs on registers after the block returns, as Realm's
    /// `dispatch_async` does: `observe` never runs the queue's work inline.
    @Test func observingFromTheQueueItselfRegistersAfterTheCallerReturns() throws {
        let (realm, _) = try openCounter()
        let configuration = realm.configuration
        let queue = DispatchQueue(label: "self")
        let fired = DispatchSemaphore(value: 0)
        let log = LockedBox<[String]>([])
        let token = LockedBox<NotificationToken?>(nil)
        queue.sync {
            guard let queued = try? Realm(configuration: configuration, queue: queue) else { return }
            token.set(queued.objects(QueuedCounter.self).observe(on: queue) { change in
                if case .initial(let results) = change { log.mutate { $0.append("initial \(results.count)") } }
                fired.signal()
            })
            log.mutate { $0.append("returned") }
        }
        #expect(fired.wait(timeout: .now() + 30) == .success)
        #expect(log.get() == ["returned", "initial 1"])
        token.get()?.invalidate()
    }
}
