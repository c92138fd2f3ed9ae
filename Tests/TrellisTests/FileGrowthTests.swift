// LMDB's page format and handle rules: tests of the LMDB build only (TRELLIS_STORAGE_ENGINE=lmdb).
#if TRELLIS_LMDB
import Foundation
import Testing
import CLMDB
@testable import Trellis

/// An object rewritten in place by the file-growth tests: every commit is the same size.
final class RewrittenItem: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var payload = ""
}

/// The file does not grow with the number of concurrent writers. LMDB reuses only pages freed
/// before the oldest version a reader holds, so any snapshot kept while other threads commit
/// makes every page they free unusable: a Realm must hold no old version while it waits for
/// the write lock and writes, and Realms confined to a queue or an actor follow the commits
/// of the others (Realm's autorefresh) instead of pinning the version they last read.
@Suite struct FileGrowthTests {
    let folder = TemporaryFolder()

    func fileSize(_ url: URL) -> Int {
        (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? 0
    }

    /// The snapshot versions held in the file's reader table.
    func heldVersions(_ realm: Realm) -> [Int] {
        ReaderTable(realm.core.file.environment.handle).snapshots
    }

    /// The last committed version of the file.
    func lastVersion(_ realm: Realm) -> Int {
        var info = MDB_envinfo()
        mdb_env_info(realm.core.file.environment.handle, &info)
        return info.me_last_txnid
    }

    /// Waits up to 10 s for `condition`.
    func eventually(_ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(10)
        while !condition() {
            if Date() > deadline { return false }
            usleep(2_000)
        }
        return true
    }

    /// `threads` threads, each rewriting its own object `commits` times (3 KiB each time), all
    /// at once; returns the file's size.
    func rewrite(_ name: String, threads: Int, commits: Int) throws -> Int {
        let url = folder.file(name)
        let configuration = Realm.Configuration(fileURL: url, objectTypes: [RewrittenItem.self])
        let realm = try Realm(configuration: configuration)
        try realm.write {
            for id in 0..<threads { realm.add(RewrittenItem(value: ["id": id])) }
        }
        realm.invalidate()
        let payload = String(repeating: "x", count: 3000)
        let start = DispatchSemaphore(value: 0)
        let group = DispatchGroup()
        let failures = LockedBox([String]())
        for thread in 0..<threads {
            group.enter()
            Thread {
                start.wait()
                do {
                    let realm = try Realm(configuration: configuration)
                    for commit in 0..<commits {
                        try realm.write {
                            realm.create(RewrittenItem.self, value: ["id": thread, "payload": "\(commit) \(payload)"],
                                         update: .modified)
                        }
                    }
                } catch {
                    failures.mutate { $0.append("\(error)") }
                }
                group.leave()
            }.start()
        }
        for _ in 0..<threads { start.signal() }
        group.wait()
        #expect(failures.get().isEmpty, "\(failures.get())")
        return fileSize(url)
    }

    @Test func concurrentWritersGrowTheFileNoMoreThanOneWriterMakingTheSameCommits() throws {
        // Before: 4 threads made the file 4.4x (8 threads: 5.8x) what one thread made with
        // the same commits, and more writers made it larger still.
        let one = try rewrite("one.realm", threads: 1, commits: 480)
        let four = try rewrite("four.realm", threads: 4, commits: 120)
        let eight = try rewrite("eight.realm", threads: 8, commits: 60)
        #expect(four <= one * 2, "4 writers: \(four) bytes, 1 writer: \(one) bytes")
        #expect(eight <= one * 2, "8 writers: \(eight) bytes, 1 writer: \(one) bytes")
    }

    @Test func aRealmWaitingForTheWriteLockHoldsNoVersion() throws {
        let configuration = folder.configuration([RewrittenItem.self])
        let realm = try Realm(configuration: configuration)
        try realm.write { realm.add(RewrittenItem(value: ["id": 1])) }
        let waiterRead = DispatchSemaphore(value: 0)
        let waiterWrote = DispatchSemaphore(value: 0)
        realm.beginWrite()
        Thread {
            do {
                let realm = try Realm(configuration: configuration)
                _ = realm.objects(RewrittenItem.self).count // holds a snapshot
                waiterRead.signal()
                try realm.write { realm.create(RewrittenItem.self, value: ["id": 2]) }
            } catch {
                Issue.record("\(error)")
            }
            waiterWrote.signal()
        }.start()
        waiterRead.wait()
        // The other thread now waits for this write: its snapshot must pin nothing (and this
        // Realm's own snapshot neither, as it writes).
        #expect(eventually { heldVersions(realm).isEmpty }, "held: \(heldVersions(realm))")
        realm.create(RewrittenItem.self, value: ["id": 3])
        try realm.commitWrite()
        waiterWrote.wait()
        realm.refresh()
        #expect(realm.objects(RewrittenItem.self).count == 3)
    }

    @Test func aWriteLeavesTheRealmAtTheVersionItCommitted() throws {
        let configuration = folder.configuration([RewrittenItem.self])
        let realm = try Realm(configuration: configuration)
        let items = realm.objects(RewrittenItem.self)
        #expect(items.count == 0)
        try onOtherThread {
            let other = try Realm(configuration: configuration)
            try other.write { other.add(RewrittenItem(value: ["id": 1])) }
        }
        // Not refreshed: the snapshot is still the one read first.
        #expect(items.count == 0)
        try realm.write {
            // A write reads the newest version.
            #expect(items.count == 1)
            realm.add(RewrittenItem(value: ["id": 2]))
        }
        #expect(items.count == 2)
        #expect(heldVersions(realm) == [lastVersion(realm)])
        realm.beginWrite()
        #expect(items.count == 2)
        realm.cancelWrite()
        #expect(items.count == 2)
        #expect(heldVersions(realm) == [lastVersion(realm)])
    }

    /// Waits up to 10 s for `condition` without holding a thread of the shared pool (the
    /// actor's refresh needs one).
    func eventuallyWithoutBlocking(_ condition: () -> Bool) async throws -> Bool {
        let deadline = Date().addingTimeInterval(10)
        while !condition() {
            if Date() > deadline { return false }
            try await Task.sleep(nanoseconds: 2_000_000)
        }
        return true
    }

    /// Keeps a Realm on its actor and reads through it.
    actor Keeper {
        var realm: Realm?
        func open(_ configuration: Realm.Configuration) async throws {
            realm = try await Realm(configuration: configuration, actor: self)
        }
        func count() -> Int { realm?.objects(RewrittenItem.self).count ?? -1 }
        func close() { realm = nil }
    }

    @Test func anIdleActorRealmFollowsTheCommitsOfOtherThreads() async throws {
        let configuration = folder.configuration([RewrittenItem.self])
        let keeper = Keeper()
        try await keeper.open(configuration)
        #expect(await keeper.count() == 0)
        let realm = try Realm(configuration: configuration)
        for id in 0..<20 { try realm.write { realm.add(RewrittenItem(value: ["id": id])) } }
        // Before: the actor's Realm kept the version it read until its next write or refresh,
        // and the file could reuse none of the pages freed since.
        let last = lastVersion(realm)
        #expect(try await eventuallyWithoutBlocking { heldVersions(realm).allSatisfy { $0 == last } },
                "held \(heldVersions(realm)), last \(last)")
        #expect(await keeper.count() == 20)
        await keeper.close()
    }

    @Test func anIdleQueueRealmFollowsTheCommitsOfOtherThreads() throws {
        let configuration = folder.configuration([RewrittenItem.self])
        let queue = DispatchQueue(label: "idle-queue-realm")
        let held = LockedBox<Realm?>(nil)
        try queue.sync { held.set(try Realm(configuration: configuration, queue: queue)) }
        #expect(queue.sync { held.get()?.objects(RewrittenItem.self).count } == 0)
        let realm = try Realm(configuration: configuration)
        for id in 0..<20 { try realm.write { realm.add(RewrittenItem(value: ["id": id])) } }
        let last = lastVersion(realm)
        #expect(eventually { heldVersions(realm).allSatisfy { $0 == last } }, "held \(heldVersions(realm)), last \(last)")
        #expect(queue.sync { held.get()?.objects(RewrittenItem.self).count } == 20)
        queue.sync { held.set(nil) }
    }

    @Test func aReleasedActorRealmIsNotKeptAliveByAutorefresh() async throws {
        let configuration = folder.configuration([RewrittenItem.self])
        let keeper = Keeper()
        try await keeper.open(configuration)
        #expect(await keeper.count() == 0)
        await keeper.close()
        let realm = try Realm(configuration: configuration)
        try realm.write { realm.add(RewrittenItem(value: ["id": 1])) }
        // Only this Realm's snapshot is left: the actor's was released with its Realm.
        #expect(try await eventuallyWithoutBlocking { heldVersions(realm) == [lastVersion(realm)] }, "held \(heldVersions(realm))")
        #expect(realm.core.file.observation.autorefreshCount == 0)
    }
}

/// The write gate is handed to its waiters in the order they came, threads and `asyncWrite`
/// tasks alike: with a plain lock, a thread that released it took it again before the woken
/// waiters ran, so some writers (and every polling `asyncWrite`) waited thousands of commits,
/// and what their Realms pinned meanwhile made the soak's file grow to a gigabyte.
@Suite struct WriteGateOrderTests {
    let folder = TemporaryFolder()

    /// Waits up to 10 s until `gate` has `count` waiters, without holding a thread of the
    /// shared pool (the waiting tasks need one to queue).
    func waitForWaiters(_ gate: HandleGate, _ count: Int) async throws -> Bool {
        let deadline = Date().addingTimeInterval(10)
        while gate.waiterCount < count {
            if Date() > deadline { return false }
            try await Task.sleep(nanoseconds: 1_000_000)
        }
        return true
    }

    @Test func theGateIsHandedToThreadsAndTasksInTheOrderTheyCame() async throws {
        let gate = HandleGate()
        gate.acquire()
        let order = LockedBox([String]())
        func waitingThread(_ name: String) {
            Thread {
                gate.acquire()
                order.mutate { $0.append(name) }
                gate.release()
            }.start()
        }
        waitingThread("first thread")
        #expect(try await waitForWaiters(gate, 1))
        let task = Task {
            try await gate.acquireSuspending()
            order.mutate { $0.append("task") }
            gate.release()
        }
        #expect(try await waitForWaiters(gate, 2))
        waitingThread("second thread")
        #expect(try await waitForWaiters(gate, 3))
        // A newcomer does not jump the queue.
        #expect(!gate.tryAcquire())
        gate.release()
        try await task.value
        for _ in 0..<10_000 where order.get().count < 3 { try await Task.sleep(nanoseconds: 1_000_000) }
        #expect(order.get() == ["first thread", "task", "second thread"])
        #expect(!gate.isHeld)
    }

    @Test func aCancelledTaskLeavesTheQueueAndTheNextWaiterGetsTheGate() async throws {
        let gate = HandleGate()
        gate.acquire()
        let cancelled = Task { try await gate.acquireSuspending() }
        #expect(try await waitForWaiters(gate, 1))
        let next = Task {
            try await gate.acquireSuspending()
            gate.release()
        }
        #expect(try await waitForWaiters(gate, 2))
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        #expect(gate.waiterCount == 1)
        gate.release()
        try await next.value
        #expect(!gate.isHeld)
    }

    @Test func aWriterAmongBusyWritersWaitsOnlyForThoseThatCameFirst() throws {
        let configuration = folder.configuration([RewrittenItem.self])
        let realm = try Realm(configuration: configuration)
        try realm.write { for id in 0..<5 { realm.add(RewrittenItem(value: ["id": id])) } }
        let stop = LockedBox(false)
        let busy = DispatchGroup()
        for id in 1...4 {
            busy.enter()
            Thread {
                do {
                    let realm = try Realm(configuration: configuration)
                    while !stop.get() {
                        try realm.write { realm.create(RewrittenItem.self, value: ["id": id, "payload": "x"], update: .modified) }
                    }
                } catch {
                    Issue.record("\(error)")
                }
                busy.leave()
            }.start()
        }
        // Each turn: how many commits others made between asking for the write and getting it.
        var worst = 0
        for _ in 0..<50 {
            let asked = realm.core.file.environment.lastCommittedVersion
            try realm.write {
                worst = max(worst, realm.core.file.environment.lastCommittedVersion - asked)
                realm.create(RewrittenItem.self, value: ["id": 0, "payload": "y"], update: .modified)
            }
        }
        stop.set(true)
        busy.wait()
        // At most the four others, each once (and one that was committing as it asked).
        #expect(worst <= 5, "a write waited for \(worst) commits of others")
    }
}
#endif
