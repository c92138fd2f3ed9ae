import Foundation
import Testing
@testable import Trellis

/// Realm's callback-style asynchronous API: writeAsync, beginAsyncWrite/commitAsyncWrite,
/// cancelAsyncWrite, asyncOpen, and Realms confined to a queue.
@Suite struct AsyncCallbackTests {
    let folder = TemporaryFolder()

    @Test func writeAsyncOnAThreadRunsAndReportsCompletion() throws {
        let realm = try Realm(configuration: folder.configuration([Dog.self]))
        var completed: Swift.Error?? = .none
        realm.writeAsync({ realm.add(Dog(value: ["name": "async"])) }, onComplete: { completed = .some($0) })
        #expect(completed != nil)
        #expect(completed! == nil)
        #expect(realm.objects(Dog.self).count == 1)
        #expect(!realm.isPerformingAsynchronousWriteOperations)
    }

    @Test func onAQueueTheWriteRunsLaterAndCanBeCancelledBeforeIt() throws {
        let configuration = folder.configuration([Dog.self])
        let queue = DispatchQueue(label: "writer")
        let done = DispatchSemaphore(value: 0)
        let outcome = LockedBox<[String]>([])
        queue.async {
            guard let realm = try? Realm(configuration: configuration, queue: queue) else { return }
            let cancelled = realm.beginAsyncWrite {
                realm.add(Dog(value: ["name": "cancelled"]))
                realm.commitAsyncWrite()
            }
            realm.writeAsync({ realm.add(Dog(value: ["name": "kept"])) }, onComplete: { error in
                outcome.mutate { $0.append("completed \(error == nil)") }
                done.signal()
            })
            // Neither has run yet: they wait for the queue's next turn.
            outcome.mutate { $0.append("busy \(realm.isPerformingAsynchronousWriteOperations)") }
            do {
                try realm.cancelAsyncWrite(cancelled)
                outcome.mutate { $0.append("cancelled") }
            } catch {
                outcome.mutate { $0.append("not cancelled") }
            }
        }
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(outcome.get() == ["busy true", "cancelled", "completed true"])
        let names = try onOtherThread { try Realm(configuration: configuration).objects(Dog.self).map(\.name) }
        #expect(names == ["kept"])
    }

    /// As in Realm: the commit is made (and visible) when `commitAsyncWrite` returns, its
    /// completion comes on a later turn of the queue, and cancelling the commit's id drops only
    /// the completion.
    @Test func onAQueueACommitsCompletionComesLaterAndCancellingItKeepsTheCommit() throws {
        let configuration = folder.configuration([Dog.self])
        let queue = DispatchQueue(label: "committer")
        let log = LockedBox<[String]>([])
        try queue.sync {
            let realm = try Realm(configuration: configuration, queue: queue)
            realm.beginWrite()
            realm.add(Dog(value: ["name": "first"]))
            realm.commitAsyncWrite { error in log.mutate { $0.append("first completed \(error == nil)") } }
            log.mutate { $0.append("after first: \(realm.objects(Dog.self).count) busy \(realm.isPerformingAsynchronousWriteOperations)") }
            realm.beginWrite()
            realm.add(Dog(value: ["name": "second"]))
            let second = realm.commitAsyncWrite { _ in log.mutate { $0.append("second completed") } }
            try realm.cancelAsyncWrite(second)
        }
        queue.sync {}
        #expect(log.get() == ["after first: 1 busy true", "first completed true"])
        let names = try onOtherThread { try Realm(configuration: configuration).objects(Dog.self).map(\.name).sorted() }
        #expect(names == ["first", "second"])
        let idle = try queue.sync { try Realm(configuration: configuration, queue: queue).isPerformingAsynchronousWriteOperations }
        #expect(!idle)
    }

    /// What a queue-confined Realm holds between turns of its queue.
    final class QueueState: @unchecked Sendable {
        var realm: Realm?
        var token: NotificationToken?
        var updates = 0
    }

    @Test func autorefreshDecidesWhetherAQueueConfinedRealmMovesToAnotherRealmsCommit() throws {
        let configuration = folder.configuration([Dog.self])
        let queue = DispatchQueue(label: "confined")
        let state = QueueState()
        let wasOn = try queue.sync {
            let realm = try Realm(configuration: configuration, queue: queue)
            let wasOn = realm.autorefresh
            realm.autorefresh = false
            state.token = realm.objects(Dog.self).observe { change in
                if case .update = change { state.updates += 1 }
            }
            state.realm = realm
            return wasOn
        }
        #expect(wasOn)
        func addDogOnAnotherThread() throws {
            try onOtherThread {
                let other = try Realm(configuration: configuration)
                try other.write { other.add(Dog()) }
            }
        }
        try addDogOnAnotherThread()
        // The commit pokes the queue before it returns: this turn runs after that one.
        let whileOff = queue.sync { (state.realm?.objects(Dog.self).count, state.updates, state.realm?.autorefresh) }
        #expect(whileOff.0 == 0)
        #expect(whileOff.1 == 0)
        #expect(whileOff.2 == false)
        let afterRefresh = queue.sync { () -> (Int?, Int) in
            state.realm?.refresh()
            return (state.realm?.objects(Dog.self).count, state.updates)
        }
        #expect(afterRefresh.0 == 1)
        #expect(afterRefresh.1 == 1)
        queue.sync { state.realm?.autorefresh = true }
        try addDogOnAnotherThread()
        let whileOn = queue.sync { (state.realm?.objects(Dog.self).count, state.updates) }
        #expect(whileOn.0 == 2)
        #expect(whileOn.1 == 2)
        queue.sync {
            state.token?.invalidate()
            state.realm = nil
        }
    }

    /// Realm's RealmTests.testRefresh: with autorefresh off, another thread's commit leaves the
    /// Realm where it is and sends its observers `.refreshRequired` (RLMRealmRefreshRequiredNotification,
    /// from `changes_available`); `refresh()` then moves it and sends `.didChange`. Before, no
    /// notification came until the refresh.
    @Test func withAutorefreshOffAnotherThreadsCommitSendsRefreshRequired() throws {
        let configuration = folder.configuration([Dog.self])
        let queue = DispatchQueue(label: "confined")
        final class Seen: @unchecked Sendable {
            var realm: Realm?
            var token: NotificationToken?
            var notifications: [Realm.Notification] = []
        }
        let seen = Seen()
        try queue.sync {
            let realm = try Realm(configuration: configuration, queue: queue)
            realm.autorefresh = false
            seen.token = realm.observe { notification, _ in seen.notifications.append(notification) }
            seen.realm = realm
        }
        try onOtherThread {
            let other = try Realm(configuration: configuration)
            try other.write { other.add(Dog()) }
        }
        // The commit pokes the queue before it returns: this turn runs after that one.
        let beforeRefresh = queue.sync { (seen.notifications, seen.realm?.objects(Dog.self).count) }
        #expect(beforeRefresh.0 == [.refreshRequired])
        #expect(beforeRefresh.1 == 0)
        let afterRefresh = queue.sync { () -> ([Realm.Notification], Int?) in
            seen.realm?.refresh()
            return (seen.notifications, seen.realm?.objects(Dog.self).count)
        }
        #expect(afterRefresh.0 == [.refreshRequired, .didChange])
        #expect(afterRefresh.1 == 1)
        queue.sync {
            seen.token?.invalidate()
            seen.realm = nil
        }
    }

    @Test func openingAQueueConfinedRealmOffItsQueueTrapsWithRealmsMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("queue-\(UUID()).realm")
            _ = try? Realm(configuration: .init(fileURL: url, objectTypes: [Dog.self]), queue: DispatchQueue(label: "elsewhere"))
        }
        let stderr = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(stderr.contains("Realm opened from incorrect dispatch queue"))
    }

    @Test func cancellingAWriteThatIsNotWaitingIsIgnoredAsInRealm() throws {
        let realm = try Realm(configuration: folder.configuration([Dog.self]))
        // On a thread without a run loop the write has run by the time writeAsync returns.
        let ran = realm.writeAsync { realm.add(Dog(value: ["name": "ran"])) }
        #expect(throws: Never.self) { try realm.cancelAsyncWrite(ran) }
        #expect(throws: Never.self) { try realm.cancelAsyncWrite(42) }
        #expect(realm.objects(Dog.self).map(\.name) == ["ran"])
        #expect(!realm.isPerformingAsynchronousWriteOperations)
    }

    /// Realm's beginAsyncWrite: "Returning without one of these calls [commitAsyncWrite,
    /// commitWrite] is equivalent to calling cancelAsyncWrite" (Realm's testAsyncTransactionCommit,
    /// testAsyncTransactionShouldCancelWithoutCommit, testAsyncTransactionSyncAfterAsyncWithoutCommit).
    @Test func anAsyncWriteBlockReturningWithoutCommittingIsRolledBack() throws {
        let configuration = folder.configuration([Dog.self])
        let queue = DispatchQueue(label: "uncommitted")
        let log = LockedBox<[String]>([])
        try queue.sync {
            let realm = try Realm(configuration: configuration, queue: queue)
            realm.beginAsyncWrite {
                realm.add(Dog(value: ["name": "committed"]))
                realm.commitAsyncWrite()
            }
            realm.beginAsyncWrite {
                realm.add(Dog(value: ["name": "not committed"]))
                log.mutate { $0.append("second ran, in write \(realm.isInWriteTransaction)") }
            }
            let cancelled = realm.beginAsyncWrite {
                realm.add(Dog(value: ["name": "cancelled"]))
                realm.commitAsyncWrite()
            }
            try realm.cancelAsyncWrite(cancelled)
            // A synchronous write while the block waits: its own, committed.
            try realm.write { realm.add(Dog(value: ["name": "synchronous"])) }
        }
        let after = try queue.sync {
            let realm = try Realm(configuration: configuration, queue: queue)
            return (realm.objects(Dog.self).map(\.name).sorted(), realm.isInWriteTransaction)
        }
        #expect(log.get() == ["second ran, in write true"])
        #expect(after.0 == ["committed", "synchronous"])
        #expect(after.1 == false)
        // On a plain thread the block runs before beginAsyncWrite returns: rolled back as well.
        let realm = try Realm(configuration: configuration)
        realm.beginAsyncWrite { realm.add(Dog(value: ["name": "thread, not committed"])) }
        #expect(!realm.isInWriteTransaction)
        #expect(realm.objects(Dog.self).count == 2)
    }

    @Test func asyncOpenCallsBackOnItsQueueWithAQueueConfinedRealm() throws {
        let configuration = folder.configuration([Dog.self])
        let queue = DispatchQueue(label: "opener")
        let done = DispatchSemaphore(value: 0)
        let count = LockedBox<Int>(-1)
        Realm.asyncOpen(configuration: configuration, callbackQueue: queue) { result in
            if case .success(let realm) = result { count.set(realm.objects(Dog.self).count) }
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(count.get() == 0)
    }

    actor Refresher {
        func refresh(_ configuration: Realm.Configuration) async throws -> (moved: Bool, count: Int) {
            let realm = try await Realm.open(configuration: configuration)
            _ = realm.objects(Dog.self).count
            try onOtherThread {
                let other = try Realm(configuration: configuration)
                try other.write { other.add(Dog()) }
            }
            let moved = await realm.asyncRefresh()
            return (moved, realm.objects(Dog.self).count)
        }
    }

    @Test func asyncRefreshMovesToTheNewestVersion() async throws {
        let result = try await Refresher().refresh(folder.configuration([Dog.self]))
        #expect(result.moved)
        #expect(result.count == 1)
    }
}

/// Realm's `@MainActor init(configuration:downloadBeforeOpen:)`: a Realm of the main actor.
@Suite struct MainActorOpenTests {
    let folder = TemporaryFolder()

    @MainActor @Test func openingOnTheMainActorGivesARealmOfTheMainActor() async throws {
        let configuration = folder.configuration([Dog.self])
        let realm = try await Realm(configuration: configuration, downloadBeforeOpen: .always)
        // Used after a suspension too: confined to the actor, not to a thread.
        try await Task.sleep(nanoseconds: 1_000_000)
        try await realm.asyncWrite { realm.add(Dog(value: ["name": "main"])) }
        #expect(realm.objects(Dog.self).map(\.name) == ["main"])
        let again = try await Realm(configuration: configuration, downloadBeforeOpen: .once)
        #expect(again.objects(Dog.self).count == 1)
    }
}
