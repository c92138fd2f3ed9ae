import Foundation
import Trellis

// The load and soak test's workers (Tests/TrellisTests/SoakTests.swift): threads that open,
// read, write, delete, observe, freeze and `asyncWrite` one file, each on its own objects, and
// report every acknowledged change on standard output, one line each, after it committed:
//   a <id>     added (its `write` or `asyncWrite` returned)
//   d <id>     deleted
//   c <id>     an `asyncWrite` cancelled before its turn: the object must never appear
//   p <text>   a problem seen while running (wrong data, a wrong notification, an error)
//   s <op> <n> how many operations of each kind a thread ran (for the figures)

/// An object of the soak test. Its payload and numbers follow from its id, so that reading it
/// back checks its contents too.
final class SoakItem: Object {
    @Persisted(primaryKey: true) var id = ""
    /// The worker's pool: a thread's own number, or 100 + a process slot.
    @Persisted(indexed: true) var pool = 0
    @Persisted var payload = ""
    @Persisted var numbers: List<Int>
    @Persisted var next: SoakItem?
    @Persisted var note: SoakNote?
}

final class SoakNote: EmbeddedObject {
    @Persisted var text = ""
}

enum SoakWorkload {
    static let types: [ObjectBase.Type] = [SoakItem.self, SoakNote.self]

    /// The payload an id must carry.
    static func payload(for id: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in id.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        let letter = Character(Unicode.Scalar(UInt8(ascii: "a") + UInt8(hash % 26)))
        return String(repeating: letter, count: Int((hash >> 8) % 1200))
    }

    static func makeItem(_ id: String, pool: Int, realm: Realm) -> SoakItem {
        let item = SoakItem()
        item.id = id
        item.pool = pool
        item.payload = payload(for: id)
        item.numbers.append(objectsIn: 0..<(id.utf8.count % 6))
        item.note = SoakNote(value: ["text": id])
        return item
    }

    /// Runs one thread per pool for `seconds`, all starting at once (the first opens race to
    /// create the file). A pool of 100 or more also deletes objects earlier processes of the
    /// same pool left. Returns when every thread has finished.
    static func run(path: String, pools: [Int], instance: Int, seconds: Double, seed: UInt64) {
        let configuration = Realm.Configuration(fileURL: URL(fileURLWithPath: path), objectTypes: types)
        let start = SoakBarrier(count: pools.count)
        let group = DispatchGroup()
        for (index, pool) in pools.enumerated() {
            group.enter()
            let thread = Thread {
                start.arrive()
                var worker = SoakWorker(configuration: configuration, pool: pool, instance: instance,
                                        seed: seed &+ UInt64(index) &* 7919)
                worker.run(until: Date().addingTimeInterval(seconds))
                group.leave()
            }
            thread.stackSize = 4 << 20
            thread.start()
        }
        group.wait()
    }

    /// Prints `{"problems": […], "ids": […]}` for the file: the consistency checker's findings and
    /// every object's id; a payload that does not match its id is a problem too.
    static func check(path: String) throws {
        let realm = try Realm(configuration: .init(fileURL: URL(fileURLWithPath: path), objectTypes: types))
        var problems = realm._consistencyProblems()
        var ids = [String]()
        for item in realm.objects(SoakItem.self) {
            ids.append(item.id)
            if item.payload != payload(for: item.id) { problems.append("\(item.id): wrong payload") }
            if item.note?.text != item.id { problems.append("\(item.id): wrong note") }
            if item.numbers.count != item.id.utf8.count % 6 { problems.append("\(item.id): wrong numbers") }
        }
        let report: [String: Any] = ["problems": problems, "ids": ids]
        FileHandle.standardOutput.write(try JSONSerialization.data(withJSONObject: report) + Data("\n".utf8))
    }

    /// One line on standard output (a single write: lines of threads never mix).
    static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}

/// Lets threads start together.
final class SoakBarrier: @unchecked Sendable {
    // @unchecked Sendable: `waiting` is guarded by `condition`.
    private let condition = NSCondition()
    private var waiting: Int
    init(count: Int) { waiting = count }

    func arrive() {
        condition.lock()
        waiting -= 1
        if waiting == 0 { condition.broadcast() }
        while waiting > 0 { condition.wait() }
        condition.unlock()
    }
}

/// Writes through `asyncWrite` from a Realm confined to this actor.
actor SoakAsyncWriter {
    private var realm: Realm?
    private let configuration: Realm.Configuration
    init(configuration: Realm.Configuration) { self.configuration = configuration }

    func add(_ ids: [String], pool: Int) async throws {
        if realm == nil { realm = try await Realm(configuration: configuration, actor: self) }
        guard let realm else { return }
        try await realm.asyncWrite {
            for id in ids { realm.add(SoakWorkload.makeItem(id, pool: pool, realm: realm)) }
        }
    }

    func close() { realm = nil }
}

/// The outcome of one `asyncWrite`, handed from its task to the waiting thread.
final class SoakOutcome: @unchecked Sendable {
    // @unchecked Sendable: written once by the task before `done` is signalled, read after.
    var error: (any Error)?
    let done = DispatchSemaphore(value: 0)
}
