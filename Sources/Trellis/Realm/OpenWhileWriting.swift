import Foundation

/// Keeps a Realm open while it is in a write transaction, so that
/// `try Realm().beginWrite()`, `try Realm().create(…)`, `try Realm().commitWrite()` is one
/// transaction, as in Realm.
///
/// Realm caches one instance per thread and file and hands it out autoreleased: on Apple
/// platforms the instance of a temporary `try Realm()` lives until the thread's autorelease
/// pool drains (the end of the run-loop turn, or of an XCTest method), so the next
/// `try Realm()` on the thread finds the same instance, write transaction and all. Linux has no
/// autorelease pool to lean on, and an instance nothing refers to goes at once; what makes
/// Realm's pattern work is that the instance outlives its write, so Trellis keeps exactly that:
/// a core in a write transaction holds itself until the write is committed or cancelled.
///
/// A write nobody ends would then hold the write lock forever; for a Realm confined to a
/// thread, the thread's exit cancels it (as the drained pool of a finished thread does in
/// Realm). A Realm confined to a queue or an actor keeps its write until it is ended.
enum OpenWhileWriting {
    /// The cores of the calling thread that are in a write transaction (strong references),
    /// cancelled and let go of when the thread exits.
    private final class ThreadWriters {
        // Unchecked: only its thread uses it (and its exit, on that thread).
        @exclusivity(unchecked) var cores: [RealmCore] = []
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key) { value in
            // Linux hands the destructor an optional pointer, Darwin a non-optional one: this
            // line compiles for both.
            let pointer: UnsafeMutableRawPointer? = value
            guard let pointer else { return }
            let writers = Unmanaged<ThreadWriters>.fromOpaque(pointer).takeRetainedValue()
            // Runs on the exiting thread, the owner of these cores.
            for core in writers.cores where core.isInWriteTransaction {
                Logger.log(.warn, Category.Storage.transaction, "A thread ended in a write transaction of "
                    + "'\(core.environmentPath)' that was never committed: it is cancelled.")
                core.cancelWrite()
            }
        }
        return key
    }()

    /// The thread's list, made on first use.
    private static var currentWriters: ThreadWriters {
        if let pointer = pthread_getspecific(key) {
            return Unmanaged<ThreadWriters>.fromOpaque(pointer).takeUnretainedValue()
        }
        let writers = ThreadWriters()
        pthread_setspecific(key, Unmanaged.passRetained(writers).toOpaque())
        return writers
    }

    /// Called when `core` begins a write transaction.
    static func writeBegan(_ core: RealmCore) {
        switch core.confinement {
        case .thread: currentWriters.cores.append(core)
        case .queue, .actor, .frozen: core.keptOpenByItsWrite = core
        }
    }

    /// Called when `core`'s write transaction ends (committed, cancelled or invalidated).
    static func writeEnded(_ core: RealmCore) {
        switch core.confinement {
        case .thread:
            // The caller holds the core for the rest of its call, even when this was the last
            // other reference.
            guard let pointer = pthread_getspecific(key) else { return }
            let writers = Unmanaged<ThreadWriters>.fromOpaque(pointer).takeUnretainedValue()
            // Writes of one thread's Realms end last-begun first, almost always: the last one.
            if writers.cores.last === core {
                writers.cores.removeLast()
            } else if let index = writers.cores.lastIndex(where: { $0 === core }) {
                writers.cores.remove(at: index)
            }
        case .queue, .actor, .frozen:
            core.keptOpenByItsWrite = nil
        }
    }
}
