import Foundation
import Testing
@testable import Trellis

/// `shouldCompactOnLaunch` compacts a file only when it is opened for the first time in the
/// process and nothing else has it open (Realm's contract), and nothing opens it until the
/// compacted file has replaced it.
@Suite(.serialized) struct CompactOnLaunchRaceTests {
    let folder = TemporaryFolder()

    /// Writes 200 dogs with 1 KiB names and deletes 150 of them (free pages to compact away),
    /// from another process, so nothing of the file stays open here.
    func prepareFileWithFreeSpace() throws -> String {
        let path = folder.file().path
        #expect(try runHelper(["write", path, "200"]) == "wrote 200")
        try onOtherThread {
            let realm = try Realm(configuration: .init(fileURL: URL(fileURLWithPath: path), objectTypes: [ProcessDog.self]))
            try realm.write {
                realm.delete(realm.objects(ProcessDog.self).filter("age >= 50"))
                realm.objects(ProcessDog.self).forEach { $0.name += String(repeating: "x", count: 1024) }
            }
        }
        return path
    }

    func size(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
    }

    /// Another thread opens the file while a compaction on launch is under way (its environment
    /// open, the compacted copy written, the file not yet replaced). Before the fix it opened a
    /// second LMDB environment of the file at once: the compaction's close then released its
    /// locks and cleared its reader slots, and the rename replaced the file under its map, so
    /// its commits went to the replaced file and were lost. It must wait for the compaction and
    /// then open the compacted file.
    @Test func aThreadOpeningTheFileWhileItIsCompactedOnLaunchWaitsAndKeepsItsWrites() throws {
        // The reservation hook is process-wide: one test at a time sets it (FileStateHookTurns).
        try FileStateHookTurns.withTurn {
            let path = try prepareFileWithFreeSpace()
            let url = URL(fileURLWithPath: path)
            let plain = Realm.Configuration(fileURL: url, objectTypes: [ProcessDog.self])
            let compacting = Realm.Configuration(fileURL: url, shouldCompactOnLaunch: { _, _ in true },
                                                 objectTypes: [ProcessDog.self])
            let events = LockedBox<[String]>([])
            let settled = DispatchSemaphore(value: 0), proceed = DispatchSemaphore(value: 0)
            let finished = DispatchSemaphore(value: 0)
            FileState.willWaitForReservationHook.withLock {
                $0 = { waiting in
                    guard waiting == path else { return }
                    events.mutate { $0.append("waiting") }
                    settled.signal()
                }
            }
            FilePreparation.compactionHook.withLock {
                $0 = { compacted in
                    guard compacted == path else { return }
                    FilePreparation.compactionHook.withLock { $0 = nil }
                    // In the middle of the compaction another thread opens the file and writes.
                    Thread {
                        do {
                            let realm = try Realm(configuration: plain)
                            events.mutate { $0.append("opened \(realm.objects(ProcessDog.self).count)") }
                            settled.signal()
                            proceed.wait()
                            try realm.write { realm.add(ProcessDog(value: ["name": "during", "age": 1000])) }
                            events.mutate { $0.append("wrote, count \(realm.objects(ProcessDog.self).count)") }
                        } catch {
                            events.mutate { $0.append("error \(error)") }
                            settled.signal()
                        }
                        finished.signal()
                    }.start()
                    // Until it has opened the file, or is waiting to.
                    settled.wait()
                }
            }
            defer {
                FilePreparation.compactionHook.withLock { $0 = nil }
                FileState.willWaitForReservationHook.withLock { $0 = nil }
            }
            let before = size(path)
            let count = try onOtherThread { try Realm(configuration: compacting).objects(ProcessDog.self).count }
            proceed.signal()
            finished.wait()
            FileState.willWaitForReservationHook.withLock { $0 = nil }
            #expect(count == 50)
            #expect(size(path) < before, "compacted: \(before) bytes before, \(size(path)) after")
            #expect(events.get() == ["waiting", "opened 50", "wrote, count 51"])
            // Another process reads the file on disk: the write made after the compaction is in it.
            #expect(try runHelper(["count", path]) == "51")
        }
    }

    /// Realm skips compacting on launch while another process has the file open (Trellis tells by
    /// the lock LMDB holds on the lock file, ``ExclusiveFileUse``); once it has closed it, the
    /// next first open compacts.
    @Test func compactingOnLaunchSkipsAFileAnotherProcessHasOpen() throws {
        let path = try prepareFileWithFreeSpace()
        let asked = LockedBox(0)
        let compacting = Realm.Configuration(fileURL: URL(fileURLWithPath: path), shouldCompactOnLaunch: { _, _ in
            asked.mutate { $0 += 1 }
            return true
        }, objectTypes: [ProcessDog.self])
        let holder = try startHoldingReaders(path)
        let before = size(path)
        let count = try onOtherThread { try Realm(configuration: compacting).objects(ProcessDog.self).count }
        #expect(count == 51)
        #expect(asked.get() == 0)
        #expect(size(path) == before)
        holder.killAndWait()
        let after = try onOtherThread { try Realm(configuration: compacting).objects(ProcessDog.self).count }
        #expect(after == 51)
        #expect(asked.get() == 1)
        #expect(size(path) < before, "compacted: \(before) bytes before, \(size(path)) after")
    }

    /// `shouldCompactOnLaunch` runs under no lock: it may open other files. Opening the file being
    /// compacted from it cannot succeed (nothing opens it until it is replaced) and throws rather
    /// than waiting forever.
    @Test func theShouldCompactOnLaunchBlockMayOpenOtherFilesButNotTheOneBeingCompacted() throws {
        let path = try prepareFileWithFreeSpace()
        let other = Realm.Configuration(fileURL: folder.file("other.realm"), objectTypes: [ProcessDog.self])
        let same = Realm.Configuration(fileURL: URL(fileURLWithPath: path), objectTypes: [ProcessDog.self])
        let outcomes = LockedBox<[String]>([])
        let compacting = Realm.Configuration(fileURL: URL(fileURLWithPath: path), shouldCompactOnLaunch: { _, _ in
            do {
                let realm = try Realm(configuration: other)
                outcomes.mutate { $0.append("other \(realm.objects(ProcessDog.self).count)") }
            } catch {
                outcomes.mutate { $0.append("other failed: \(error)") }
            }
            do {
                _ = try Realm(configuration: same)
                outcomes.mutate { $0.append("same opened") }
            } catch let error as Realm.Error {
                outcomes.mutate { $0.append(error.localizedDescription.contains("shouldCompactOnLaunch") ? "same refused" : "\(error)") }
            } catch {
                outcomes.mutate { $0.append("\(error)") }
            }
            return true
        }, objectTypes: [ProcessDog.self])
        let count = try onOtherThread { try Realm(configuration: compacting).objects(ProcessDog.self).count }
        #expect(count == 50)
        #expect(outcomes.get() == ["other 0", "same refused"])
    }
}
