import Foundation
import Trellis

// The class-creation race (issue 34, defects 1 and 2): a file that holds only `RaceCounter` and
// `RaceVal`; a writer adds classes `RaceA`, `RaceB` and `RaceC` to it while readers open it.
// The test process has classes of the same names and properties (Tests/TrellisTests/ClassRaceTests.swift).

final class RaceCounter: Object {
    @Persisted var value = 0
}

final class RaceVal: Object {
    @Persisted var text = ""
}

final class RaceA: Object {
    /// The counter's value in the write that added the object (1, 2, …).
    @Persisted var round = 0
}

final class RaceB: Object {
    @Persisted var round = 0
}

final class RaceC: Object {
    @Persisted var round = 0
}

enum ClassRace {
    /// Makes the file: one `RaceCounter` at 0 and one `RaceVal`, nothing of A, B or C.
    static func prepare(path: String) throws {
        let realm = try Realm(configuration: .init(fileURL: URL(fileURLWithPath: path),
                                                   objectTypes: [RaceCounter.self, RaceVal.self]))
        try realm.write {
            realm.add(RaceCounter())
            realm.add(RaceVal(value: ["text": "val"]))
        }
        print("prepared")
    }

    /// Says "ready" and waits for a line on standard input: the test starts the writer and
    /// every reader at once.
    private static func waitForStart() {
        FileHandle.standardOutput.write(Data("ready\n".utf8))  // unbuffered: the test waits for it
        _ = readLine()
    }

    /// Opens the file as `Realm(fileURL:)` does (no objectTypes) and makes `writes` writes, each
    /// adding one A, one B and one C and bumping the counter. The first write creates the classes.
    /// `pause`: microseconds before each write, so that the writes fall among the readers' opens.
    static func write(path: String, writes: Int, pause: UInt32, waits: Bool) throws {
        var configuration = Realm.Configuration(fileURL: URL(fileURLWithPath: path))
        configuration.syncOnCommit = false
        let realm = try Realm(configuration: configuration)
        if waits { waitForStart() }
        for _ in 0..<writes {
            if pause > 0 { usleep(pause) }
            try realm.write {
                guard let counter = realm.objects(RaceCounter.self).first else { return }
                counter.value += 1
                realm.add(RaceA(value: ["round": counter.value]))
                realm.add(RaceB(value: ["round": counter.value]))
                realm.add(RaceC(value: ["round": counter.value]))
            }
        }
        print("wrote \(writes)")
    }

    /// What one snapshot shows: the counter, and each class counted three ways.
    struct Snapshot: CustomStringConvertible {
        var counter = 0
        /// `count` of A, B and C.
        var counts: [Int] = []
        /// `filter("round > 0").count` of A, B and C (a query, not the table's entry count).
        var filtered: [Int] = []
        /// Iterated and counted one by one.
        var iterated: [Int] = []

        /// Every class as committed: each written once per counter step.
        var isConsistent: Bool {
            (counts + filtered + iterated).allSatisfy { $0 == counter }
        }

        var description: String {
            "counter=\(counter) A=\(counts[0]) B=\(counts[1]) C=\(counts[2]) filtered=\(filtered) iterated=\(iterated)"
        }

        init(_ realm: Realm) {
            counter = realm.objects(RaceCounter.self).first?.value ?? -1
            add(RaceA.self, realm)
            add(RaceB.self, realm)
            add(RaceC.self, realm)
        }

        private mutating func add<Element: Object>(_ type: Element.Type, _ realm: Realm) {
            let objects = realm.objects(type)
            counts.append(objects.count)
            filtered.append(objects.filter("round > 0").count)
            iterated.append(objects.reduce(0) { total, _ in total + 1 })
        }
    }

    /// `threads` threads open the file at once, half with `Realm(fileURL:)`, half with
    /// `try Realm()` (the default configuration pointed at the file), and check their first
    /// snapshot; one line per thread, `ok …` or `wrong …`, then `done`.
    static func read(path: String, threads: Int, seed: UInt64, waits: Bool) {
        var configuration = Realm.Configuration.defaultConfiguration
        configuration.fileURL = URL(fileURLWithPath: path)
        Realm.Configuration.defaultConfiguration = configuration
        let lines = Lines()
        let group = DispatchGroup()
        let start = DispatchSemaphore(value: 0)
        for thread in 0..<threads {
            group.enter()
            // A fixed, per-thread delay of 0-999 µs spreads the opens around the writer's commits.
            let delay = UInt32((seed &* 6_364_136_223_846_793_005 &+ UInt64(thread) &* 1_442_695_040_888_963_407) >> 54)
            Thread {
                start.wait()
                usleep(delay)
                do {
                    let realm = thread.isMultiple(of: 2) ? try Realm(fileURL: URL(fileURLWithPath: path)) : try Realm()
                    let snapshot = Snapshot(realm)
                    lines.append("\(snapshot.isConsistent ? "ok" : "wrong") thread \(thread) \(snapshot)")
                } catch {
                    lines.append("error thread \(thread) \(error)")
                }
                group.leave()
            }.start()
        }
        if waits { waitForStart() }
        for _ in 0..<threads { start.signal() }
        group.wait()
        for line in lines.all { print(line) }
        print("done")
    }

    /// Opens the file as `Realm(fileURL:)` does and counts A three ways: "count filtered iterated".
    static func count(path: String) throws {
        let realm = try Realm(fileURL: URL(fileURLWithPath: path))
        let objects = realm.objects(RaceA.self)
        print(objects.count, objects.filter("round > 0").count, objects.reduce(0) { total, _ in total + 1 })
    }
}

/// Lines collected from several threads.
private final class Lines: @unchecked Sendable {
    // @unchecked Sendable: every access goes through the lock.
    private var lines: [String] = []
    private let lock = NSLock()
    func append(_ line: String) { lock.lock(); lines.append(line); lock.unlock() }
    var all: [String] { lock.lock(); defer { lock.unlock() }; return lines }
}
