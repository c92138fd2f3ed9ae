import Foundation
import Testing
@testable import TrellisStorage
import TrellisTestSupport

/// Encrypted files (docs/STORAGE.md, section 12): the round trip, the three key mistakes as
/// typed errors, tampering as `corruptFile`, no plaintext in the file, the decrypted-page cache's
/// bound, and readers of other threads and processes.
@Suite(.serialized) struct EncryptionTests {
    static let key: [UInt8] = (0..<64).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
    static let otherKey: [UInt8] = (0..<64).map { UInt8(truncatingIfNeeded: $0 &* 11 &+ 5) }

    static func options(_ key: [UInt8]?, cachePages: Int = 2048) -> StorageEnvironment.Options {
        var options = StorageEnvironment.Options()
        options.encryptionKey = key
        options.decryptedPageCacheSize = cachePages
        return options
    }

    /// A data set with distinctive strings in tree names, keys and values, inline and overflow.
    static func dataSet() -> [String: [(key: String, value: String)]] {
        var random = SplitMix64(seed: 38)
        var trees: [String: [(key: String, value: String)]] = [:]
        for tree in 0..<3 {
            trees["SecretTree\(tree)Name"] = (0..<300).map { index in
                let long = index % 25 == 0
                let filler = String(repeating: "Q\(random.below(10))", count: long ? 3000 : 20)
                return ("SecretKey-\(tree)-\(index)-ZX", "SecretValue-\(tree)-\(index)-\(filler)")
            }
        }
        return trees
    }

    static func write(_ data: [String: [(key: String, value: String)]], to environment: StorageEnvironment) throws {
        try environment.write { write in
            for (tree, entries) in data {
                try write.createTree(tree)
                for entry in entries { try write.put(tree, key: Array(entry.key.utf8), value: Array(entry.value.utf8)) }
            }
        }
    }

    static func expectContents(_ data: [String: [(key: String, value: String)]], in environment: StorageEnvironment) throws {
        #expect(try mismatches(data, in: environment) == 0)
    }

    /// The entries of `data` that `environment` does not hold as they are (0: all match).
    static func mismatches(_ data: [String: [(key: String, value: String)]], in environment: StorageEnvironment) throws -> Int {
        try environment.read { read in
            var wrong = Set(try read.treeNames()) == Set(data.keys) ? 0 : 1
            for (tree, entries) in data {
                for entry in entries where try read.get(tree, key: Array(entry.key.utf8)) != Array(entry.value.utf8) {
                    wrong += 1
                }
            }
            return wrong
        }
    }

    static func code(of body: () throws -> Void) -> StorageError.Code? {
        do {
            try body()
            return nil
        } catch let error as StorageError {
            return error.code
        } catch {
            return nil
        }
    }

    @Test func anEncryptedFileReopensWithItsKeyWithEveryEntry() throws {
        let directory = temporaryDirectory("encryption")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/data"
        let data = Self.dataSet()
        do {
            let environment = try StorageEnvironment(path: path, options: Self.options(Self.key))
            try Self.write(data, to: environment)
            try Self.expectContents(data, in: environment)
            environment.close()
        }
        let reopened = try StorageEnvironment(path: path, options: Self.options(Self.key))
        defer { reopened.close() }
        _ = try reopened.check()
        try Self.expectContents(data, in: reopened)
        // Version 10 on disk (the encrypted format of 4-byte leaf cells, used-bytes checksums and
        // freed pages listed in the slot),
        // with 4,128-byte pages.
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(UInt32(bytes[8]) == FileHeader.encryptedVersion && FileHeader.encryptedVersion == 10)
        #expect(bytes.count % PageCipher.physicalPageSize == 0)
    }

    @Test func aWrongKeyNoKeyAKeyOnAPlainFileAndAShortKeyAreTypedErrors() throws {
        let directory = temporaryDirectory("encryption-keys")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let encrypted = directory + "/encrypted"
        let plain = directory + "/plain"
        try Self.write(Self.dataSet(), to: StorageEnvironment(path: encrypted, options: Self.options(Self.key)))
        try Self.write(Self.dataSet(), to: StorageEnvironment(path: plain))
        #expect(Self.code { _ = try StorageEnvironment(path: encrypted, options: Self.options(Self.otherKey)) } == .wrongEncryptionKey)
        #expect(Self.code { _ = try StorageEnvironment(path: encrypted) } == .encryptionKeyRequired)
        #expect(Self.code { _ = try StorageEnvironment(path: plain, options: Self.options(Self.key)) } == .fileNotEncrypted)
        #expect(Self.code { _ = try StorageEnvironment(path: encrypted, options: Self.options(Array(Self.key[0..<32]))) }
            == .wrongEncryptionKey)
        // The failed opens changed nothing.
        let reopened = try StorageEnvironment(path: encrypted, options: Self.options(Self.key))
        defer { reopened.close() }
        try Self.expectContents(Self.dataSet(), in: reopened)
    }

    @Test func noStoredStringAppearsInTheFileBytes() throws {
        let directory = temporaryDirectory("encryption-scan")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let data = Self.dataSet()
        var needles = Set(data.keys)
        for entries in data.values {
            for entry in entries {
                needles.insert(entry.key)
                needles.insert(String(entry.value.prefix(24)))
            }
        }
        /// How many of `needles` occur in the file's (and its lock file's) bytes.
        func found(_ needles: [String], in path: String) throws -> Int {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
                + ((try? Data(contentsOf: URL(fileURLWithPath: path + "-lock"))) ?? Data())
            return needles.filter { bytes.range(of: Data($0.utf8)) != nil }.count
        }
        for (name, key) in [("plain", nil), ("encrypted", Self.key)] as [(String, [UInt8]?)] {
            let environment = try StorageEnvironment(path: directory + "/" + name, options: Self.options(key))
            try Self.write(data, to: environment)
            // Update and delete, so that freed pages and the free list hold older contents too.
            try environment.write { write in
                for (tree, entries) in data {
                    for entry in entries.prefix(50) { try write.delete(tree, key: Array(entry.key.utf8)) }
                }
            }
            try Self.write(data, to: environment)
            environment.close()
        }
        // The scan works: it finds the strings in the plain file (a sample: the scan is naive).
        let sample = Array(needles.sorted().enumerated().filter { $0.offset % 40 == 0 }.map(\.element))
        #expect(try found(sample, in: directory + "/plain") == sample.count)
        // Every stored string contains "Secret": its absence rules out all of them, and a few
        // shorter pieces (an 8-byte window of a key, a filler run, a tree name's tail) too.
        #expect(try found(["Secret", "Key-0-1", "Q1Q2", "Q3Q3", "ree0Name", "Value-"], in: directory + "/encrypted") == 0)
        print("EncryptionTests: \(needles.count) stored strings, none in the encrypted file")
    }

    @Test func everyChangedByteOfAnEncryptedFileIsCorruptionOrHarmlessNeverWrongData() throws {
        let data = Self.dataSet()
        let file = MemoryFile()
        let environment = try StorageEnvironment(file: file, options: Self.options(Self.key))
        try Self.write(data, to: environment)
        try environment.write { write in _ = try write.put("SecretTree0Name", key: Array("extra".utf8), value: [1, 2, 3]) }
        let pageCount = try environment.read { read in Int(read.snapshot.meta.pageCount) }
        environment.close()
        let original = file.contents
        let stride = PageCipher.physicalPageSize
        var random = SplitMix64(seed: 3838)
        var detected = 0
        var harmless = 0
        let flips = environmentInteger("TRELLIS_STORAGE_ENCRYPTED_FLIPS", default: 300)
        for flip in 0..<flips {
            var image = original
            // Pages 1 on (the header is covered by the key check: see the next test).
            // Only pages the commit counts (the file grows in steps: the tail is unused).
            let position = stride + random.below((pageCount - 1) * stride)
            image[position] ^= UInt8(1 << random.below(8))
            let outcome: String
            do {
                let damaged = try StorageEnvironment(file: MemoryFile(contents: image), options: Self.options(Self.key))
                defer { damaged.close() }
                _ = try damaged.check()
                var model = data
                model["SecretTree0Name", default: []].append(("extra", "\u{1}\u{2}\u{3}"))
                let wrong = try Self.mismatches(model, in: damaged)
                outcome = wrong == 0 ? "harmless" : "read \(wrong) entries wrong"
            } catch let error as StorageError {
                if case .corruptFile = error.code { outcome = "detected" } else { outcome = "\(error)" }
            }
            switch outcome {
            case "harmless": harmless += 1
            case "detected": detected += 1
            default:
                Issue.record("flip \(flip) at byte \(position) (page \(position / stride)): \(outcome)")
                return
            }
        }
        #expect(detected > 0)
        print("EncryptionTests: \(flips) flips: \(detected) detected, \(harmless) harmless (free or unused pages)")
    }

    @Test func aTamperedDataPageIsCorruptFileNamingThePage() throws {
        let file = MemoryFile()
        let environment = try StorageEnvironment(file: file, options: Self.options(Self.key))
        try Self.write(Self.dataSet(), to: environment)
        let root = try environment.read { read in try read.snapshot.meta.catalog?.page ?? 0 }
        environment.close()
        var image = file.contents
        image[Int(root) * PageCipher.physicalPageSize + 100] ^= 0x10
        // The catalog root is read when the file opens (or, at the latest, by the check).
        #expect(Self.code {
            let damaged = try StorageEnvironment(file: MemoryFile(contents: image), options: Self.options(Self.key))
            defer { damaged.close() }
            _ = try damaged.check()
        } == .corruptFile(page: root))
        // A changed header byte (the salt) reads as a wrong key: it cannot be told apart.
        var header = file.contents
        header[40] ^= 1
        #expect(Self.code { _ = try StorageEnvironment(file: MemoryFile(contents: header), options: Self.options(Self.key)) }
            == .wrongEncryptionKey)
    }

    @Test func theDecryptedPageCacheKeepsItsBoundAndFreesWhatTransactionsHeld() throws {
        let data = Self.dataSet()
        let environment = try StorageEnvironment(file: MemoryFile(), options: Self.options(Self.key, cachePages: 16))
        defer { environment.close() }
        try Self.write(data, to: environment)
        guard let cache = environment.pager.decrypted else {
            Issue.record("no cache on an encrypted file")
            return
        }
        // Four threads read everything many times while a writer commits.
        let errors = ThreadMessages()
        DispatchQueue.concurrentPerform(iterations: 5) { thread in
            do {
                if thread == 4 {
                    for round in 0..<20 {
                        try environment.write { write in
                            try write.put("SecretTree1Name", key: Array("round".utf8), value: Array("\(round)".utf8))
                        }
                    }
                    return
                }
                for _ in 0..<5 {
                    let wrong = try Self.mismatches(data, in: environment)
                    if wrong > 0 { errors.record("thread \(thread) read \(wrong) entries wrong") }
                }
            } catch {
                errors.record("\(error)")
            }
        }
        #expect(errors.messages.isEmpty, "\(errors.messages)")
        let status = cache.status
        // At most the bound, plus one overflow run inserted last (runs here are 2-3 pages).
        #expect(status.cachedPages <= 16 + 3)
        #expect(status.liveUses == 0)
        #expect(status.retiredPages == 0)
        // A long transaction keeps what it was lent; it is freed when the transaction ends.
        let held = try environment.beginRead()
        for (tree, entries) in data {
            for entry in entries { _ = try held.get(tree, key: Array(entry.key.utf8)) }
        }
        #expect(cache.status.retiredPages > 0)
        held.end()
        #expect(cache.status.retiredPages == 0)
        print("EncryptionTests: cache \(cache.status.cachedPages) pages of 16 after 4 readers and a writer")
    }

    @Test func readerProcessesWithTheKeySeeEachCommit() throws {
        let directory = temporaryDirectory("encryption-process")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/data"
        let environment = try StorageEnvironment(path: path, options: Self.options(Self.key))
        defer { environment.close() }
        try environment.write { write in
            try write.createTree("t")
            _ = try write.put("t", key: [1], value: [UInt8](repeating: 9, count: 5000))
        }
        /// A helper process reading tree "t" with the key: "reading TXN ENTRIES:DIGEST", then
        /// the digest again after a line on its input.
        func readInOtherProcess(key: [UInt8]?) throws -> String {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
                .appendingPathComponent("TrellisStorageProcessHelper")
            process.arguments = ["hold-snapshot", path, "t"]
            if let key { process.environment = ["TRELLIS_STORAGE_TEST_KEY": key.map { String(format: "%02x", $0) }.joined()] }
            let input = Pipe()
            let output = Pipe()
            process.standardInput = input
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            input.fileHandleForWriting.write(Data("\n".utf8))
            try input.fileHandleForWriting.close()
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return text
        }
        let first = try readInOtherProcess(key: Self.key).split(separator: "\n").map(String.init)
        #expect(first.count == 2 && first[0].hasPrefix("reading ") && first[0].contains(" 1:"), "\(first)")
        #expect(first.count == 2 && first[1] == "digest " + (first[0].split(separator: " ").last.map(String.init) ?? ""))
        try environment.write { write in _ = try write.put("t", key: [2], value: [7]) }
        let second = try readInOtherProcess(key: Self.key)
        #expect(second.hasPrefix("reading ") && second.contains(" 2:"), "\(second)")
        // Without the key the other process cannot open the file.
        #expect(try readInOtherProcess(key: nil).isEmpty)
    }
}

/// Error messages gathered from several threads.
final class ThreadMessages: @unchecked Sendable {
    private let lock = NSLock()
    private var gathered: [String] = []
    func record(_ message: String) {
        lock.lock()
        gathered.append(message)
        lock.unlock()
    }
    var messages: [String] {
        lock.lock()
        defer { lock.unlock() }
        return gathered
    }
}
