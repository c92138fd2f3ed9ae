import Foundation
import Testing
@testable import Trellis

/// Reader slots of killed processes are freed: they neither pin old snapshots (which would
/// make the file grow without bound) nor fill the reader table.
@Suite struct DeadReaderTests {
    let folder = TemporaryFolder()

    /// Starts `TrellisProcessHelper hold-readers PATH count`, waits until it holds its slots,
    /// and kills it with SIGKILL.
    func killReaderHolding(_ count: Int, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let process = try startHoldingReaders(folder.file().path, count: count, sourceLocation: sourceLocation)
        process.killAndWait()
        #expect(process.terminationReason == .uncaughtSignal, sourceLocation: sourceLocation)
    }

    func fileSize() throws -> Int {
        try FileManager.default.attributesOfItem(atPath: folder.file().path)[.size] as? Int ?? 0
    }

    /// Deletes every dog and writes `count` new ones with 1 KiB names.
    func rewrite(_ realm: Realm, count: Int = 1000) throws {
        let name = String(repeating: "r", count: 1024)
        try realm.write {
            realm.delete(realm.objects(ProcessDog.self))
            for index in 0..<count { realm.add(ProcessDog(value: ["name": "\(index) \(name)", "age": index])) }
        }
    }

    /// A thread releases the last Realm of a file while another opens it. The second open must
    /// not make a new LMDB environment beside the one still closing: closing that one's lock-file
    /// descriptor releases every POSIX lock the process holds on the file, the new environment's
    /// included, and another process's dead-reader check then frees the new environment's reader
    /// slots (its writer may then reuse pages a live snapshot reads: the class-race test once
    /// saw a snapshot count 16 objects of a class when 9 were committed in it).
    @Test func aRealmOpenedWhileTheFilesPreviousEnvironmentClosesIsNotTakenForDead() throws {
        let path = folder.file().path
        #expect(try runHelper(["write", path, "3"]) == "wrote 3")
        let configuration = Realm.Configuration(fileURL: folder.file(), objectTypes: [ProcessDog.self])
        let closing = DispatchSemaphore(value: 0), resume = DispatchSemaphore(value: 0)
        Environment.willCloseHook.withLock {
            $0 = { closed in
                guard closed == path else { return }
                closing.signal()
                resume.wait()
            }
        }
        defer { Environment.willCloseHook.withLock { $0 = nil } }
        // A thread opens the file and lets go of it: its environment stops as it begins to close.
        Thread { _ = try? Realm(configuration: configuration).objects(ProcessDog.self).count }.start()
        closing.wait()
        Environment.willCloseHook.withLock { $0 = nil }
        // Another thread opens the file meanwhile and keeps a snapshot.
        let opened = DispatchSemaphore(value: 0), checked = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let results = LockedBox<[String]>([])
        Thread {
            do {
                let realm = try Realm(configuration: configuration)
                results.mutate { $0.append("count \(realm.objects(ProcessDog.self).count)") }
                opened.signal()
                release.wait()
                #if TRELLIS_LMDB
                let slots = ReaderTable(realm.core.file.environment.handle).slots
                let mine = slots.filter { $0.process == Int(getpid()) && $0.version != nil }.count
                results.mutate { $0.append("live slots \(mine)") }
                #endif
                results.mutate { $0.append("count \(realm.objects(ProcessDog.self).count)") }
            } catch {
                results.mutate { $0.append("error \(error)") }
                opened.signal()
            }
            checked.signal()
        }.start()
        // Before the fix the second open finished here, beside the closing environment.
        usleep(200_000)
        resume.signal()
        opened.wait()
        // Another process opens the file and writes: its dead-reader checks must find this
        // process alive.
        #expect(try runHelper(["write-many", path, "5"]) == "wrote 5")
        release.signal()
        checked.wait()
        #if TRELLIS_LMDB
        #expect(results.get() == ["count 3", "live slots 1", "count 3"])
        #else
        // TrellisStorage's reader table is the engine's own; the counts are what this checks.
        #expect(results.get() == ["count 3", "count 3"])
        #endif
    }

    @Test func aKilledReaderDoesNotMakeTheFileGrowWithEveryRewrite() throws {
        let configuration = Realm.Configuration(fileURL: folder.file(), objectTypes: [ProcessDog.self])
        let realm = try Realm(configuration: configuration)
        try rewrite(realm)
        try rewrite(realm)
        let oneRound = try fileSize()
        // A reader pins the current version, then dies without ending its snapshot.
        try killReaderHolding(1)
        for _ in 0..<20 { try rewrite(realm) }
        let after = try fileSize()
        // Pinned, every rewrite would need new pages: about 20 x 1 MiB more.
        #expect(after < oneRound * 3, "file grew from \(oneRound) to \(after) bytes")
        #expect(realm.objects(ProcessDog.self).count == 1000)
    }

    /// The same at scale: a reader is killed before every rewrite, each holding a few
    /// versions. `TRELLIS_CRASH_READER_KILLS` kills (default 10, as CI runs it;
    /// `Scripts/crash-test.sh` runs more).
    @Test func manyKilledReadersDoNotMakeTheFileGrow() throws {
        let kills = Int(ProcessInfo.processInfo.environment["TRELLIS_CRASH_READER_KILLS"] ?? "") ?? 10
        let configuration = Realm.Configuration(fileURL: folder.file(), objectTypes: [ProcessDog.self])
        let realm = try Realm(configuration: configuration)
        try rewrite(realm, count: 300)
        try rewrite(realm, count: 300)
        let oneRound = try fileSize()
        var largest = oneRound
        for kill in 0..<kills {
            try killReaderHolding(1 + kill % 3)
            try rewrite(realm, count: 300)
            largest = max(largest, try fileSize())
        }
        #expect(largest < oneRound * 3, "file grew from \(oneRound) to \(largest) bytes")
        #expect(realm.objects(ProcessDog.self).count == 300)
        print("crash test: \(kills) readers killed holding snapshots, one rewrite after each; file \(oneRound) bytes "
            + "after one round, at most \(largest)")
    }

    @Test func killedReadersNeverFillTheReaderTable() throws {
        let slots = Int(Environment.defaultMaximumReaders)
        // This process keeps the file open, so no helper is its only user (LMDB clears the
        // reader table when a process opens a file nobody else has open).
        let realm = try Realm(configuration: .init(fileURL: folder.file(), objectTypes: [ProcessDog.self]))
        // Four processes take over a quarter of the table each and are killed: more slots
        // than the table has, so the later ones only find room if the dead ones were freed.
        for _ in 0..<4 { try killReaderHolding(slots / 4 + 100) }
        realm.refresh()
        #expect(realm.objects(ProcessDog.self).count == 4 * (slots / 4 + 100))
        #expect(try runHelper(["count", folder.file().path]) == "\(4 * (slots / 4 + 100))")
    }

    @Test func aFullReaderTableIsATypedErrorThatSaysWhatToDo() throws {
        var unsynced = Realm.Configuration(fileURL: folder.file(), objectTypes: [ProcessDog.self])
        unsynced.syncOnCommit = false
        let configuration = unsynced
        let realm = try Realm(configuration: configuration)
        var frozen = [Realm]()
        // Each frozen version holds a slot; the live Realm holds one more.
        for index in 0..<(Int(Environment.defaultMaximumReaders) - 1) {
            try realm.write { realm.add(ProcessDog(value: ["name": "v\(index)"])) }
            frozen.append(realm.freeze())
        }
        let error = try onOtherThread { () -> Realm.Error? in
            do {
                _ = try Realm(configuration: configuration)
                return nil
            } catch let error as Realm.Error {
                return error
            }
        }
        #expect(error?.code == .tooManyReaders)
        #expect(error?.message.contains("no free reader slot") == true)
        #expect(error?.message.contains("Close Realms or frozen objects you no longer use") == true)
        frozen.removeAll()
        let count = try onOtherThread { try Realm(configuration: configuration).objects(ProcessDog.self).count }
        #expect(count == Int(Environment.defaultMaximumReaders) - 1)
    }
}
