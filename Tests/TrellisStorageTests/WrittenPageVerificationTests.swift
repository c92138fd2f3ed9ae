import Foundation
import Testing
@testable import TrellisStorage
import TrellisTestSupport

/// Pages a process wrote count as verified in it (they are not hashed again when read), until a
/// sync fails: the OS may then have dropped them from its cache, so every mark is forgotten and
/// a page that no longer holds what was written is reported, never returned (docs/STORAGE.md, 2.4).
@Suite struct WrittenPageVerificationTests {
    private static let value = Array("a value written once, then damaged".utf8)

    /// Where the only copy of `Self.value` lies in the file.
    private static func valueOffset(in file: MemoryFile) throws -> Int {
        let contents = file.contents
        var found: [Int] = []
        let first = value[0]
        for offset in 0..<(contents.count - value.count) where contents[offset] == first {
            if Array(contents[offset..<offset + value.count]) == value { found.append(offset) }
        }
        try #require(found.count == 1)
        return found[0]
    }

    /// `durableCommits`: the failed sync is a commit's (syncOnCommit); otherwise `sync()`'s after
    /// relaxed commits.
    @Test(arguments: [true, false])
    func aPageDamagedAfterAFailedSyncIsACorruptFileErrorNotAWrongValue(durableCommits: Bool) throws {
        let file = MemoryFile()
        var options = StorageEnvironment.Options()
        options.syncOnCommit = durableCommits
        let environment = try StorageEnvironment(file: file, options: options)
        try environment.write { write in
            try write.createTree("t")
            try write.createTree("u")
            try write.put("t", key: Array("key".utf8), value: Self.value)
        }
        file.failure = (.sync, 0, 5)
        if durableCommits {
            #expect(throws: StorageError.self) {
                try environment.write { try $0.put("u", key: Array("other".utf8), value: [1, 2, 3]) }
            }
        } else {
            try environment.write { try $0.put("u", key: Array("other".utf8), value: [1, 2, 3]) }
            #expect(throws: StorageError.self) { try environment.sync() }
        }
        // What a dropped page read back from the disk could hold: not the bytes written.
        file.flip(at: try Self.valueOffset(in: file) + 3, with: 0x20)
        let error = #expect(throws: StorageError.self) {
            _ = try environment.read { try $0.get("t", key: Array("key".utf8)) }
        }
        guard case .corruptFile? = error?.code else {
            Issue.record("expected corruptFile, got \(String(describing: error))")
            return
        }
    }

    /// Without a failed sync, the written pages read back as written (the marks are the
    /// checksums of the bytes written) through commits that reuse and rewrite pages.
    @Test func pagesWrittenByManyCommitsReadBackAsWritten() throws {
        let file = MemoryFile()
        var options = StorageEnvironment.Options()
        options.syncOnCommit = false
        let environment = try StorageEnvironment(file: file, options: options)
        try environment.write { try $0.createTree("t", order: .integer) }
        var random = SplitMix64(seed: 2_437)
        var model: [UInt64: [UInt8]] = [:]
        for _ in 0..<400 {
            try environment.write { write in
                for _ in 0..<5 {
                    let key = UInt64(random.below(3_000))
                    let value = random.bytes(random.chance(10) ? 3_000 : random.below(120) + 1)
                    try write.put("t", key: withUnsafeBytes(of: key) { Array($0) }, value: value)
                    model[key] = value
                }
            }
        }
        let read = try environment.beginRead()
        defer { read.end() }
        for (key, value) in model {
            let stored = try read.get("t", key: withUnsafeBytes(of: key) { Array($0) })
            #expect(stored == value)
        }
        _ = try environment.check()
    }
}
