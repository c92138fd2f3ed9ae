import Dispatch
import Foundation
import Testing
@testable import TrellisStorage

/// Making a new file while others open it (issue 37: threads and processes creating one new
/// Realm at once read it before it was whole, "is truncated: its last commit needs 12288 bytes
/// but the file has 8192"): a new file appears at its path whole or not at all, an open that
/// finds a file being made in place waits for its maker, and only a file that stays short is
/// refused.
@Suite struct FileCreationTests {
    private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// The bytes of a new, whole file (header, first commit's slot, zeroed second slot).
    private func newFileBytes(in directory: String) throws -> Data {
        let path = directory + "/template"
        try StorageEnvironment(path: path).close()
        let whole = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(whole.count == Int(StorageEnvironment.headerBytes))
        return whole
    }

    /// Another maker of the file at `path`, part way through making it in place: it holds the
    /// writer lock (flock, as the engine's writer does) and has written `written` bytes of
    /// `whole`. `finish()` writes the rest and lets go.
    private final class InPlaceMaker {
        let descriptor: Int32
        let whole: Data

        init(path: String, whole: Data, written: Int) throws {
            descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
            self.whole = whole
            #expect(descriptor >= 0)
            #expect(flock(descriptor, LOCK_EX) == 0)
            write(whole.prefix(written), at: 0)
        }

        private func write(_ bytes: Data, at offset: Int) {
            let wrote = bytes.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, off_t(offset)) }
            #expect(wrote == bytes.count)
        }

        func finish(from offset: Int) {
            write(whole.suffix(from: offset), at: offset)
            #expect(flock(descriptor, LOCK_UN) == 0)
            close(descriptor)
        }
    }

    /// The interleaving that failed, made to last: the maker has written the header and the
    /// first slot (8 KiB of 12) when another open looks. That open waits for the maker and then
    /// opens the whole file (before the fix it refused it: "shorter than a TrellisStorage
    /// file's header").
    @Test func anOpenOfAFileBeingMadeInPlaceWaitsForItsMaker() throws {
        for written in [0, 4096, 8192] {
            let directory = temporaryDirectory("creation-wait")
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let path = directory + "/data"
            let maker = try InPlaceMaker(path: path, whole: try newFileBytes(in: directory), written: written)
            let opened = LockedBox<Result<UInt64, Error>?>(nil)
            let done = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                opened.set(Result {
                    let environment = try StorageEnvironment(path: path)
                    defer { environment.close() }
                    try environment.write { try $0.createTree("t") }
                    return try environment.status().txnID
                })
                done.signal()
            }
            // While the maker holds the lock the open cannot have finished, with or without an error.
            #expect(done.wait(timeout: .now() + .milliseconds(300)) == .timedOut,
                    "with \(written) bytes written the open did not wait: \(String(describing: opened.get()))")
            maker.finish(from: written)
            #expect(done.wait(timeout: .now() + .seconds(30)) == .success)
            // The maker's first commit (1), then the opener's (2): one file, made once.
            #expect(try opened.get()?.get() == 2, "with \(written) bytes written")
        }
    }

    /// A file shorter than its header that no one is making is refused at once, with a typed
    /// error that says so; the file is left as it was.
    @Test func aFileThatStaysShorterThanItsHeaderIsRefused() throws {
        let directory = temporaryDirectory("creation-short")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/data"
        let cut = try newFileBytes(in: directory).prefix(8192)
        try cut.write(to: URL(fileURLWithPath: path))
        let outcome = finishes(within: 20) { try StorageEnvironment(path: path) }
        #expect(outcome != nil, "the open waited for a maker that does not exist")
        if case .failure(let error as StorageError) = outcome {
            #expect(error.code == .incompatibleFile)
            #expect(error.message.contains("shorter than a TrellisStorage file's header"))
        } else {
            Issue.record("a file cut inside its header opened: \(String(describing: outcome))")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == cut)
    }

    /// Threads of separate environments (as separate processes are) create one new file at
    /// once while another thread watches the path: it never sees the file shorter than whole,
    /// every creator writes to the one file that won, and no temporary file is left.
    @Test func aNewFileAppearsWholeAtItsPathAndEveryCreatorUsesIt() throws {
        let directory = temporaryDirectory("creation-race")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let creators = 4
        for round in 0..<25 {
            let path = directory + "/data-\(round)"
            let start = DispatchSemaphore(value: 0)
            let group = DispatchGroup()
            let failures = LockedBox<[String]>([])
            let watching = LockedBox(true)
            let shortSizes = LockedBox<Set<Int>>([])
            Thread.detachNewThread {
                var status = stat()
                while watching.get() {
                    if stat(path, &status) == 0, status.st_size < off_t(StorageEnvironment.headerBytes) {
                        let size = Int(status.st_size)
                        var seen = shortSizes.get()
                        seen.insert(size)
                        shortSizes.set(seen)
                    }
                }
            }
            for creator in 0..<creators {
                group.enter()
                Thread.detachNewThread {
                    start.wait()
                    do {
                        let environment = try StorageEnvironment(path: path)
                        try environment.write { write in
                            if try write.info("t") == nil { try write.createTree("t") }
                            try write.put("t", key: self.bytes("creator \(creator)"), value: self.bytes("\(round)"))
                        }
                        environment.close()
                    } catch {
                        var list = failures.get()
                        list.append("creator \(creator): \(error)")
                        failures.set(list)
                    }
                    group.leave()
                }
            }
            for _ in 0..<creators { start.signal() }
            group.wait()
            watching.set(false)
            #expect(failures.get().isEmpty, "round \(round): \(failures.get())")
            #expect(shortSizes.get().isEmpty, "round \(round): the path showed a file of \(shortSizes.get()) bytes")
            let environment = try StorageEnvironment(path: path)
            #expect(try environment.read { try $0.info("t")?.count } == UInt64(creators), "round \(round)")
            environment.close()
        }
        let left = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.contains(".creating-") }
        #expect(left.isEmpty, "temporary files left: \(left)")
    }

    /// A creation that cannot be made (its folder is missing) fails naming the path asked for,
    /// not the temporary name, and leaves nothing.
    @Test func aCreationThatFailsNamesThePathAndLeavesNothing() throws {
        let directory = temporaryDirectory("creation-fails")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/missing/data"
        do {
            _ = try StorageEnvironment(path: path)
            Issue.record("a file was made in a missing folder")
        } catch let error as StorageError {
            #expect(error.code == .io(operation: "open", errno: ENOENT))
            #expect(error.message.contains("'\(path)'") && !error.message.contains(".creating-"), "\(error.message)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
    }
    /// A creator killed before its link step leaves `<name>.creating-<pid>-<random>`; the next
    /// open removes it once its process is gone and it is older than a creation can take, and
    /// leaves a live process's (or a young) temporary file alone.
    @Test func anOpenRemovesTheTemporaryFileOfACreatorThatDied() throws {
        let directory = temporaryDirectory("abandoned-creation")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/data"
        // Above any pid_max: no such process.
        let deadOld = path + ".creating-\(Int32.max - 1)-abc"
        let deadYoung = path + ".creating-\(Int32.max - 1)-def"
        let liveOld = path + ".creating-\(getpid())-123"
        let other = directory + "/other.creating-\(Int32.max - 1)-abc"
        let old = Date(timeIntervalSinceNow: -3_600)
        for file in [deadOld, deadYoung, liveOld, other] {
            #expect(FileManager.default.createFile(atPath: file, contents: Data(count: 12_288)))
        }
        for file in [deadOld, liveOld, other] {
            try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: file)
        }
        let environment = try StorageEnvironment(path: path)
        environment.close()
        let left = Set(try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.contains(".creating-") })
        #expect(left == Set([deadYoung, liveOld, other].map { String($0.dropFirst(directory.count + 1)) }))
    }
}
