import Foundation
import Trellis
import TrellisTestSupport

/// One thread of the soak test (see ``SoakWorkload``): a random mix of operations on its own
/// pool of objects, checking what it reads against what it knows it committed.
struct SoakWorker {
    let configuration: Realm.Configuration
    let pool: Int
    let instance: Int
    var random: SplitMix64

    private var realm: Realm?
    /// Ids this worker may delete: its own live objects, and for a process pool the ones
    /// earlier processes of the pool left.
    private var live: [String] = []
    private var deleted: [String] = []
    private var sequence = 0
    private var token: NotificationToken?
    private var mirror: MirrorBox?
    private var frozen: [(realm: Realm, count: Int)] = []
    private var asyncWriter: SoakAsyncWriter
    private var counts: [String: Int] = [:]

    init(configuration: Realm.Configuration, pool: Int, instance: Int, seed: UInt64) {
        self.configuration = configuration
        self.pool = pool
        self.instance = instance
        random = SplitMix64(seed: seed)
        asyncWriter = SoakAsyncWriter(configuration: configuration)
    }

    mutating func run(until deadline: Date) {
        do {
            try open()
            while Date() < deadline {
                try step()
            }
        } catch {
            SoakWorkload.say("p pool \(pool): \(error)")
        }
        token?.invalidate()
        for (name, count) in counts.sorted(by: { $0.key < $1.key }) { SoakWorkload.say("s \(name) \(count)") }
    }

    private mutating func count(_ name: String) { counts[name, default: 0] += 1 }

    private mutating func open() throws {
        let realm = try Realm(configuration: configuration)
        self.realm = realm
        count("open")
        if live.isEmpty, deleted.isEmpty {
            // A new worker: objects earlier processes of this pool left are its to delete.
            let pool = self.pool
            live = Array(realm.objects(SoakItem.self).where { $0.pool == pool }.map(\.id))
        }
    }

    private mutating func step() throws {
        let choice = random.next(upTo: 100)
        switch choice {
        case 0..<30: try add()
        case 30..<45: try delete()
        case 45..<65: try read()
        case 65..<73: try freezeAndCompare()
        case 73..<83: try asyncAdd(cancelling: random.next(upTo: 4) == 0)
        case 83..<88: try reopen()
        default: observe()
        }
    }

    private mutating func newIds(_ count: Int) -> [String] {
        (0..<count).map { _ in
            sequence += 1
            return "\(pool).\(instance).\(sequence)"
        }
    }

    private mutating func add() throws {
        guard let realm else { return }
        let ids = newIds(1 + random.next(upTo: 4))
        let linkTo = live.isEmpty ? nil : live[random.next(upTo: live.count)]
        try realm.write {
            let target = linkTo.flatMap { realm.object(ofType: SoakItem.self, forPrimaryKey: $0) }
            for id in ids {
                let item = SoakWorkload.makeItem(id, pool: pool, realm: realm)
                item.next = target
                realm.add(item)
            }
        }
        for id in ids { SoakWorkload.say("a \(id)") }
        live += ids
        count("write")
        // Keep the pool small: the run may be long.
        while live.count > 40 { try delete() }
    }

    private mutating func delete() throws {
        guard let realm, !live.isEmpty else { return }
        let index = random.next(upTo: live.count)
        let id = live[index]
        var missing = false
        try realm.write {
            if let item = realm.object(ofType: SoakItem.self, forPrimaryKey: id) {
                realm.delete(item)
            } else {
                missing = true
            }
        }
        if missing { SoakWorkload.say("p \(id) was acknowledged but is missing when deleting it") }
        SoakWorkload.say("d \(id)")
        live.remove(at: index)
        deleted.append(id)
        if deleted.count > 20 { deleted.removeFirst() }
        count("delete")
    }

    private mutating func read() throws {
        guard let realm else { return }
        realm.refresh()
        for _ in 0..<min(5, live.count) {
            let id = live[random.next(upTo: live.count)]
            guard let item = realm.object(ofType: SoakItem.self, forPrimaryKey: id) else {
                SoakWorkload.say("p \(id) was acknowledged but cannot be read")
                continue
            }
            if item.payload != SoakWorkload.payload(for: id) || item.note?.text != id {
                SoakWorkload.say("p \(id) reads wrong data")
            }
            if let next = item.next, next.isInvalidated { SoakWorkload.say("p \(id) links a deleted object") }
        }
        if let gone = deleted.last, realm.object(ofType: SoakItem.self, forPrimaryKey: gone) != nil {
            SoakWorkload.say("p \(gone) was deleted but is still there")
        }
        // Read through everything once in a while (all pools, while the others write).
        if random.next(upTo: 10) == 0 {
            var bytes = 0
            for item in realm.objects(SoakItem.self) { bytes += item.payload.utf8.count + item.numbers.count }
            _ = bytes
        }
        let pool = self.pool
        let mine = realm.objects(SoakItem.self).where { $0.pool == pool }.count
        if mine != live.count { SoakWorkload.say("p pool \(pool) holds \(mine) objects, the worker knows \(live.count)") }
        count("read")
    }

    /// A frozen Realm keeps its version while this worker writes.
    private mutating func freezeAndCompare() throws {
        guard let realm else { return }
        let pool = self.pool
        let snapshot = realm.freeze()
        let before = snapshot.objects(SoakItem.self).where { $0.pool == pool }.count
        try add()
        frozen.append((snapshot, before))
        if frozen.count > 3 { frozen.removeFirst() }
        for (old, count) in frozen where old.objects(SoakItem.self).where({ $0.pool == pool }).count != count {
            SoakWorkload.say("p a frozen Realm of pool \(pool) changed")
        }
        count("freeze")
    }

    /// An `asyncWrite` from an actor-confined Realm; when cancelling, the task is cancelled at
    /// once: it either wrote everything (its turn came first) or throws and wrote nothing.
    private mutating func asyncAdd(cancelling: Bool) throws {
        let ids = newIds(1 + random.next(upTo: 3))
        let writer = asyncWriter
        let pool = self.pool
        let outcome = SoakOutcome()
        let task = Task {
            do { try await writer.add(ids, pool: pool) } catch { outcome.error = error }
            outcome.done.signal()
        }
        if cancelling { task.cancel() }
        outcome.done.wait()
        switch outcome.error {
        case nil:
            for id in ids { SoakWorkload.say("a \(id)") }
            live += ids
            count(cancelling ? "asyncWriteCancelledTooLate" : "asyncWrite")
        case is CancellationError:
            for id in ids { SoakWorkload.say("c \(id)") }
            count("asyncWriteCancelled")
        case let error?:
            throw error
        }
        if random.next(upTo: 20) == 0 {
            let writer = asyncWriter
            let closed = DispatchSemaphore(value: 0)
            Task {
                await writer.close()
                closed.signal()
            }
            closed.wait()
        }
    }

    /// Lets go of the Realm, its observer and frozen versions, and opens it again.
    private mutating func reopen() throws {
        token?.invalidate()
        token = nil
        mirror = nil
        frozen.removeAll()
        realm = nil
        try open()
        count("reopen")
    }

    /// Observes this pool's objects, keeping a copy of their ids up to date from the change
    /// sets only; after each delivery it must equal the results.
    private mutating func observe() {
        guard let realm else { return }
        if token == nil {
            let pool = self.pool
            let box = MirrorBox()
            token = realm.objects(SoakItem.self).where { $0.pool == pool }.sorted(byKeyPath: "id").observe { change in
                switch change {
                case .initial(let results):
                    box.ids = Array(results.map(\.id))
                case .update(let results, let deletions, let insertions, _):
                    for index in deletions.sorted(by: >) { box.ids.remove(at: index) }
                    for index in insertions.sorted() { box.ids.insert(results[index].id, at: index) }
                    let actual = Array(results.map(\.id))
                    if box.ids != actual {
                        SoakWorkload.say("p pool \(pool): the change set gives \(box.ids.count) objects, "
                            + "the results hold \(actual.count)")
                        box.ids = actual
                    }
                    box.updates += 1
                case .error(let error):
                    SoakWorkload.say("p pool \(pool): notification error \(error)")
                }
            }
            mirror = box
        }
        realm.refresh()
        count("observe")
    }
}

/// The ids an observer rebuilt from change sets.
final class MirrorBox {
    var ids: [String] = []
    var updates = 0
}
