import Foundation
import Testing
@testable import TrellisStorage
import TrellisTestSupport

/// `compact()` (docs/STORAGE.md, section 7): the file shrinks in place after most of its data is
/// deleted, its contents stay exactly as they were, `check()` passes, and it refuses (typed
/// error, file unchanged) while read transactions of this or another process are live.
@Suite struct CompactionTests {
    typealias Contents = [String: SeededTrees.Model]

    /// Fills trees (small values, overflow values, integer keys), then deletes most entries.
    static func fillThenDeleteMost(_ environment: StorageEnvironment, seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        try environment.write { write in
            try write.createTree("small")
            try write.createTree("large")
            try write.createTree("numbers", order: .integer)
            try write.createTree("kept")
            for index in 0..<20_000 {
                try write.put("small", key: Array(String(format: "key %06d", index).utf8), value: random.bytes(random.below(120)))
                try write.put("numbers", key: withUnsafeBytes(of: UInt64(index)) { Array($0) }, value: random.bytes(16))
                if index % 40 == 0 { try write.put("large", key: Array("big \(index)".utf8), value: random.bytes(3000 + random.below(20_000))) }
                if index % 100 == 0 { try write.put("kept", key: Array("kept \(index)".utf8), value: random.bytes(50)) }
            }
        }
        try environment.write { write in
            // Keep every 25th small key: leaves all over the file stay in use.
            let cursor = try write.cursor("small")
            var doomed: [[UInt8]] = []
            var more = try cursor.first()
            var position = 0
            while more {
                if position % 25 != 0 { doomed.append(try cursor.key()) }
                position += 1
                more = try cursor.next()
            }
            for key in doomed { try write.delete("small", key: key) }
            try write.deleteRange("numbers", from: withUnsafeBytes(of: UInt64(500)) { Array($0) }, to: nil)
            try write.deleteRange("large", from: Array("big 2".utf8), to: nil)
        }
    }

    @Test(arguments: [true, false])
    func compactShrinksTheFileAfterMostDataIsDeletedAndKeepsItsContents(durable: Bool) throws {
        let directory = temporaryDirectory("compact")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/data"
        var options = StorageEnvironment.Options()
        options.syncOnCommit = durable
        let expected: Contents
        let report: CompactionReport
        do {
            let environment = try StorageEnvironment(path: path, options: options)
            defer { environment.close() }
            try Self.fillThenDeleteMost(environment, seed: durable ? 1 : 2)
            expected = try SeededTrees.contents(environment)
            let before = try environment.check()
            report = try environment.compact()
            let after = try environment.check()
            #expect(after.entries == before.entries)
            #expect(after.pageCount < before.pageCount / 2, "\(before) -> \(after)")
            #expect(after.freePages <= 64, "\(after)")
            #expect(report.bytesAfter == after.pageCount * UInt64(StorageLimits.pageSize))
            #expect(report.bytesAfter < report.bytesBefore / 2, "\(report)")
            #expect(try SeededTrees.contents(environment) == expected)
            // The file keeps working: more writes, and a second compaction changes nothing much.
            try environment.write { try $0.put("kept", key: Array("after".utf8), value: [1, 2, 3]) }
            _ = try environment.check()
            print("CompactionTests durable \(durable): \(report.bytesBefore) -> \(report.bytesAfter) bytes, "
                + "\(report.moveCommits) move commits, \(before.pagesInUse) pages in use")
        }
        let reopened = try StorageEnvironment(path: path)
        defer { reopened.close() }
        _ = try reopened.check()
        var withAfter = expected
        withAfter["kept"]?[Array("after".utf8)] = [1, 2, 3]
        #expect(try SeededTrees.contents(reopened) == withAfter)
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.size] as? UInt64 ?? 0 < report.bytesBefore / 2)
    }

    @Test func compactRefusesWhileAReadTransactionOfThisProcessIsLive() throws {
        let environment = try StorageEnvironment(file: MemoryFile())
        defer { environment.close() }
        try Self.fillThenDeleteMost(environment, seed: 3)
        let size = try environment.file.size()
        let reader = try environment.beginRead()
        #expect {
            try environment.compact()
        } throws: { error in
            (error as? StorageError)?.code == .compactionBlocked && "\(error)".contains("read transactions")
        }
        #expect(try environment.file.size() == size)
        #expect(try reader.get("kept", key: Array("kept 100".utf8)) != nil)
        reader.end()
        let report = try environment.compact()
        #expect(report.bytesAfter < size / 2)
        _ = try environment.check()
    }

    @Test func compactRefusesWhileAnotherProcessReadsAndProceedsOnceItIsGone() throws {
        let directory = temporaryDirectory("compact-process")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/data"
        let environment = try StorageEnvironment(path: path)
        defer { environment.close() }
        try Self.fillThenDeleteMost(environment, seed: 4)
        let expected = try SeededTrees.contents(environment)
        let helpers = HelperProcesses(directory: directory)
        defer { helpers.stopAll() }
        let output = Pipe()
        let reader = try helpers.start(["hold-reader", path], output: output)
        let line = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
        #expect(line.hasPrefix("reading"))
        let size = try environment.file.size()
        #expect(throws: StorageError.self) { try environment.compact() }
        #expect(try environment.file.size() == size)
        // A killed reader's slot is cleared (its pid is gone): compaction then proceeds.
        helpers.kill(reader)
        let report = try environment.compact()
        #expect(report.bytesAfter < size / 2)
        _ = try environment.check()
        #expect(try SeededTrees.contents(environment) == expected)
    }

    @Test func aFileWithNothingToMoveOnlyLosesItsGrowthSlack() throws {
        let environment = try StorageEnvironment(file: MemoryFile())
        defer { environment.close() }
        try environment.write { write in
            try write.createTree("a")
            try write.put("a", key: [1], value: [2])
        }
        let report = try environment.compact()
        #expect(report.moveCommits == 0)
        #expect(report.bytesAfter == (try environment.check()).pageCount * UInt64(StorageLimits.pageSize))
        #expect(report.bytesAfter < report.bytesBefore)
        #expect(try environment.read { try $0.get("a", key: [1]) } == [2])
    }
}
