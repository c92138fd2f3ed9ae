// The TrellisStorage build of Trellis's storage layer (TRELLIS_STORAGE_ENGINE=trellis, see Package.swift).
#if !TRELLIS_LMDB
import Foundation
import Synchronization

/// The handle of a named database (a TrellisStorage tree) inside the environment: a small
/// number standing for the tree's name, so that the layers above keep one integer per table and
/// a transaction finds its view of the tree by index instead of by name.
typealias DatabaseHandle = UInt32

/// The names behind the handles of one environment, and the gate of its write transactions.
///
/// Unlike LMDB's handles, these have no rules attached: a handle is valid in every transaction
/// (a tree its snapshot does not have reads as empty), there is no limit on their number, and
/// opening one needs no transaction. Handles are never reused while the environment is open.
final class DatabaseHandles: Sendable {
    private struct State {
        var byName: [String: DatabaseHandle] = [:]
        var names: [String] = []
        /// By handle: whether some transaction of this process saw or created the tree (LMDB's
        /// published handles). An array, as handles are small and dense: noted on every lookup.
        var known: [Bool] = []
    }
    private let state = Mutex(State())

    /// The process's write transactions take turns here before the engine's writer lock, so that
    /// an async write can wait for its turn by suspending (``HandleGate/acquireSuspending()``).
    let gate = HandleGate()

    /// The handle standing for `name`, made on first use.
    func handle(named name: String) -> DatabaseHandle? { register(name) }

    /// The handle standing for `name`, made on first use.
    func register(_ name: String) -> DatabaseHandle {
        state.withLock { state in
            if let handle = state.byName[name] { return handle }
            let handle = DatabaseHandle(state.names.count)
            state.names.append(name)
            state.byName[name] = handle
            return handle
        }
    }

    /// The name `handle` stands for.
    func name(of handle: DatabaseHandle) -> String? {
        state.withLock { Int(handle) < $0.names.count ? $0.names[Int(handle)] : nil }
    }

    /// Records that a transaction saw (or committed) the tree of `handle`.
    func noteExists(_ handle: DatabaseHandle) {
        state.withLock { state in
            let index = Int(handle)
            if index < state.known.count {
                state.known[index] = true
            } else {
                state.known += repeatElement(false, count: index - state.known.count)
                state.known.append(true)
            }
        }
    }

    /// Whether some transaction of this process saw the tree of `handle`.
    func isKnownToExist(_ handle: DatabaseHandle) -> Bool {
        state.withLock { Int(handle) < $0.known.count && $0.known[Int(handle)] }
    }

    /// Every handle made so far.
    var all: [DatabaseHandle] { state.withLock { (0..<DatabaseHandle($0.names.count)).map { $0 } } }
}
#endif
