import Foundation
import Testing
import TrellisTestSupport
@testable import Trellis

/// `asyncWrite` and task cancellation, as in Realm: a task cancelled before its write begins,
/// or while it waits for another write of the file, throws `CancellationError` and writes
/// nothing. Every wait of these tests is bounded: a regression fails them, it never hangs them.
@Suite struct AsyncWriteCancellationTests {
    let folder = TemporaryFolder()

    /// How long a wait may run before the test gives up on it, in ``RunningTime`` (time in
    /// which the waiting task itself got turns, so a process starved by other suites does not
    /// count). Each wait takes well under a second alone; a regression still fails the test.
    static let patience: Double = 120

    /// How long a holder keeps the file at most, on the wall clock: only so that a failed test
    /// cannot leave a thread or queue blocked for good. Far longer than any stall of the
    /// process seen (~850 s): a holder that let go early would let the cancelled writes through.
    static let holderWallClockBound: Double = 3_600

    /// Runs an actor's jobs on a dispatch queue of its own rather than on the cooperative pool,
    /// so that a `Writer` blocked inside its write block takes no thread from the tasks under
    /// test (with two cores, two blocked pool threads stopped every task of the process).
    final class QueueExecutor: SerialExecutor {
        let queue = DispatchQueue(label: "AsyncWriteCancellationTests.Writer")
        func enqueue(_ job: consuming ExecutorJob) {
            let job = UnownedJob(job)
            queue.async { job.runSynchronously(on: self.asUnownedSerialExecutor()) }
        }
    }

    actor Writer {
        let configuration: Realm.Configuration
        private let executor = QueueExecutor()
        nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
        init(_ configuration: Realm.Configuration) { self.configuration = configuration }

        private var realm: Realm?

        /// Opens the actor's Realm ahead of ``add(_:)``.
        func open() async throws { realm = try await Realm.open(configuration: configuration) }

        func add(_ name: String) async throws {
            let opened: Realm
            if let realm { opened = realm } else { opened = try await Realm.open(configuration: configuration) }
            let realm = opened
            try await realm.asyncWrite { realm.add(Dog(value: ["name": name])) }
        }

        /// Adds a dog in an `asyncWrite` that stays open until `release` is signalled.
        func hold(_ name: String, holding: DispatchSemaphore, release: DispatchSemaphore) async throws {
            let realm = try await Realm.open(configuration: configuration)
            try await realm.asyncWrite {
                realm.add(Dog(value: ["name": name]))
                holding.signal()
                // Bounded, so that a failing test cannot leave this actor blocked.
                _ = release.wait(timeout: .now() + AsyncWriteCancellationTests.holderWallClockBound)
            }
        }
    }

    /// Suspends (never blocks a thread) until `semaphore` is signalled; false after `seconds`
    /// of ``RunningTime``.
    func signalled(_ semaphore: DispatchSemaphore, within seconds: Double = AsyncWriteCancellationTests.patience) async -> Bool {
        var patience = RunningTime(seconds: seconds)
        while semaphore.wait(timeout: .now()) == .timedOut {
            guard !patience.isUsedUp() else { return false }
            try? await Task.sleep(nanoseconds: 2_000_000)
        }
        return true
    }

    /// The task's result, or nil if it has not finished within `seconds` of ``RunningTime``.
    func result(of task: Task<Void, any Error>, within seconds: Double = AsyncWriteCancellationTests.patience) async -> Result<Void, any Error>? {
        let outcome = LockedBox<Result<Void, any Error>?>(nil)
        Task { outcome.set(await task.result) }
        var patience = RunningTime(seconds: seconds)
        while outcome.get() == nil, !patience.isUsedUp() { try? await Task.sleep(nanoseconds: 2_000_000) }
        return outcome.get()
    }

    /// Cancels `task` after `seconds` from a thread of its own, so the cancellation comes on
    /// time even when every thread of the cooperative pool is busy (cancelled from a task, it
    /// came only after the holder gave up, and the write it should have stopped went through).
    func cancel(_ task: Task<Void, any Error>, after seconds: Double) {
        Thread.detachNewThread {
            Thread.sleep(forTimeInterval: seconds)
            task.cancel()
        }
    }

    func names(_ configuration: Realm.Configuration) throws -> [String] {
        try onOtherThread { try Realm(configuration: configuration).objects(Dog.self).map(\.name).sorted() }
    }

    func expectCancelled(_ outcome: Result<Void, any Error>?, sourceLocation: SourceLocation = #_sourceLocation) {
        switch outcome {
        case nil:
            Issue.record("the cancelled asyncWrite kept waiting for the write lock", sourceLocation: sourceLocation)
        case .success:
            Issue.record("the cancelled asyncWrite wrote", sourceLocation: sourceLocation)
        case .failure(let error):
            #expect(error is CancellationError, "\(error)", sourceLocation: sourceLocation)
        }
    }

    @Test func aTaskCancelledBeforeItsWriteThrowsAndWritesNothing() async throws {
        let configuration = folder.configuration([Dog.self])
        let writer = Writer(configuration)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await writer.add("never")
        }
        expectCancelled(await result(of: task))
        #expect(try names(configuration).isEmpty)
    }

    @Test func aTaskCancelledWhileAnotherThreadWritesStopsWaiting() async throws {
        let configuration = folder.configuration([Dog.self])
        _ = try names(configuration)
        let holding = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        let failure = LockedBox<(any Error)?>(nil)
        // Another thread holds a write transaction until told to commit.
        Thread {
            do {
                let realm = try Realm(configuration: configuration)
                realm.beginWrite()
                realm.add(Dog(value: ["name": "held"]))
                holding.signal()
                _ = release.wait(timeout: .now() + Self.holderWallClockBound)
                try realm.commitWrite()
            } catch {
                failure.set(error)
                holding.signal()
            }
            finished.signal()
        }.start()
        #expect(await signalled(holding))
        try #require(failure.get() == nil, "\(String(describing: failure.get()))")

        let task = Task { try await Writer(configuration).add("cancelled") }
        cancel(task, after: 0.05)
        let outcome = await result(of: task)
        // Released whatever happened, so that an asyncWrite still waiting can end.
        release.signal()
        #expect(await signalled(finished))
        expectCancelled(outcome)
        _ = await task.result
        #expect(try names(configuration) == ["held"])
        #expect(failure.get() == nil, "\(String(describing: failure.get()))")
    }

    /// Another actor's asyncWrite that adds the dog "held" and keeps the file until `release`
    /// is signalled; returned once it holds the file.
    func holdFile(_ configuration: Realm.Configuration) async throws
        -> (holder: Task<Void, any Error>, release: DispatchSemaphore)
    {
        _ = try names(configuration)
        let holding = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let holder = Task { try await Writer(configuration).hold("held", holding: holding, release: release) }
        #expect(await signalled(holding))
        return (holder, release)
    }

    @Test func aTaskCancelledWhileAnotherActorWritesStopsWaiting() async throws {
        let configuration = folder.configuration([Dog.self])
        let (holder, release) = try await holdFile(configuration)

        let task = Task { try await Writer(configuration).add("cancelled") }
        cancel(task, after: 0.05)
        let outcome = await result(of: task)
        release.signal()
        #expect(await result(of: holder) != nil)
        expectCancelled(outcome)
        _ = await task.result
        #expect(try names(configuration) == ["held"])
    }

    /// The cancellation arriving at every moment of the wait's start (200 tries, the cancel
    /// sent from a thread after 0 to 400 µs): a cancellation that came after the wait began
    /// but before the writer queued once left it queued, waiting for a turn it then took.
    @Test func aCancellationAtAnyMomentOfTheWaitsStartStopsIt() async throws {
        let configuration = folder.configuration([Dog.self])
        let (holder, release) = try await holdFile(configuration)
        let writer = Writer(configuration)
        try await writer.open()
        var stuck = 0
        for attempt in 0..<200 {
            let task = Task { try await writer.add("cancelled \(attempt)") }
            let delay = UInt32(attempt * 2)
            Thread.detachNewThread {
                usleep(delay)
                task.cancel()
            }
            guard let outcome = await result(of: task, within: 20) else {
                stuck += 1
                break
            }
            expectCancelled(outcome)
        }
        release.signal()
        #expect(await result(of: holder) != nil)
        #expect(stuck == 0, "a cancelled asyncWrite kept waiting for the write lock")
        #expect(try names(configuration) == ["held"])
    }
}
