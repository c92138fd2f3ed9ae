import Foundation
import Testing
@testable import TrellisStorage
import TrellisTestSupport

/// Where a write transaction keeps the bytes it puts: in its dirty pages' buffers, edited in place
/// (DirtyPage.swift), and values too large for a leaf kept by their tree until commit
/// (TreePages.swift); a cursor standing on a dirty page keeps its own copy of its key.
@Suite struct WriteBytesTests {
    private func key(_ number: UInt64) -> [UInt8] { withUnsafeBytes(of: number) { Array($0) } }

    /// Expects keys 0..<10 of "rows" to hold the last of `rounds` puts of `length` bytes that
    /// cycled through them (put `round` wrote `round % 10` with bytes equal to `round`).
    private func expectLastPutOfEachKey(in transaction: some TreeReading, rounds: Int, length: Int,
                                        sourceLocation: SourceLocation = #_sourceLocation) throws {
        for number in 0..<10 {
            let expected = UInt8(truncatingIfNeeded: rounds - 10 + number)
            #expect(try transaction.get("rows", key: key(UInt64(number))) == [UInt8](repeating: expected, count: length),
                    sourceLocation: sourceLocation)
        }
    }

    @Test func aTransactionReplacingOneValueAgainAndAgainEditsItsPagesInPlace() throws {
        let environment = try StorageEnvironment(file: MemoryFile())
        let rounds = 80_000
        let length = 1_000
        try environment.write { write in
            try write.createTree("rows", order: .integer)
            try write.createTree("other")
            try write.put("other", key: Array("kept".utf8), value: Array("unchanged".utf8))
            for round in 0..<rounds {
                let value = [UInt8](repeating: UInt8(truncatingIfNeeded: round), count: length)
                try write.put("rows", key: key(UInt64(round % 10)), value: value)
            }
            // 80 MB were put into 10 entries: a few pages' buffers, edited again and again.
            let pages = try #require(try write.tree("rows")).pages
            #expect(pages.bufferCount <= 8)
            try expectLastPutOfEachKey(in: write, rounds: rounds, length: length)
            #expect(try write.get("other", key: Array("kept".utf8)) == Array("unchanged".utf8))
        }
        try environment.read { read throws in
            try expectLastPutOfEachKey(in: read, rounds: rounds, length: length)
        }
    }

    @Test func aTransactionReplacingLargeValuesAgainAndAgainKeepsItsMemoryBounded() throws {
        // Values too large for a leaf are kept until commit; replaced ones are freed in batches.
        let environment = try StorageEnvironment(file: MemoryFile())
        let rounds = 20_000
        let length = 3_000
        try environment.write { write in
            try write.createTree("rows", order: .integer)
            for round in 0..<rounds {
                let value = [UInt8](repeating: UInt8(truncatingIfNeeded: round), count: length)
                try write.put("rows", key: key(UInt64(round % 10)), value: value)
            }
            // 60 MB were put; without freeing the replaced values they would all be kept.
            let pages = try #require(try write.tree("rows")).pages
            #expect(pages.retainedBytes <= TreePages.retainedLimit)
            try expectLastPutOfEachKey(in: write, rounds: rounds, length: length)
        }
        try environment.read { read throws in
            try expectLastPutOfEachKey(in: read, rounds: rounds, length: length)
        }
    }

    @Test func aValueReadFromTheTransactionIsPutBackIntoTheSameTreeIntact() throws {
        // The value's bytes are in the very page the put edits (and splits): the put copies them
        // before moving anything.
        let environment = try StorageEnvironment(file: MemoryFile())
        try environment.write { write in
            try write.createTree("rows", order: .integer)
            for number in UInt64(0)..<40 {
                try write.put("rows", key: key(number), value: [UInt8](repeating: UInt8(number), count: 90))
            }
            let access = try write.access("rows")
            for number in UInt64(0)..<40 {
                let source = try #require(try key(number).withUnsafeBytes { try access.value(forKey: $0) })
                try key(1_000 + number).withUnsafeBytes { target in
                    _ = try write.put("rows", key: target, value: source)
                }
            }
            // Again from the values just put, in the rightmost pages that these puts edit.
            for number in UInt64(0)..<40 {
                let source = try #require(try key(1_000 + number).withUnsafeBytes { try access.value(forKey: $0) })
                try key(2_000 + number).withUnsafeBytes { target in
                    _ = try write.put("rows", key: target, value: source)
                }
            }
            for number in UInt64(0)..<40 {
                #expect(try write.get("rows", key: key(2_000 + number)) == [UInt8](repeating: UInt8(number), count: 90))
                #expect(try write.get("rows", key: key(1_000 + number)) == [UInt8](repeating: UInt8(number), count: 90))
                #expect(try write.get("rows", key: key(number)) == [UInt8](repeating: UInt8(number), count: 90))
            }
        }
    }

    @Test func bytesPutStayCorrectAcrossSplitsMergesAndCommits() throws {
        // Seeded: keys inserted, replaced and deleted in one transaction, with enough bytes to
        // compact several times; every value is checked against a dictionary before and after
        // the commit.
        let environment = try StorageEnvironment(file: MemoryFile())
        var random = SplitMix64(seed: 371)
        var expected: [UInt64: [UInt8]] = [:]
        try environment.write { write in
            try write.createTree("rows", order: .integer)
            for step in 0..<60_000 {
                let number = UInt64(random.below(3_000))
                if random.chance(15), expected[number] != nil {
                    #expect(try write.delete("rows", key: key(number)))
                    expected[number] = nil
                } else {
                    let length = random.chance(5) ? 2_500 + random.below(3_000) : 200 + random.below(1_200)
                    let value = [UInt8](repeating: UInt8(truncatingIfNeeded: step), count: length)
                    try write.put("rows", key: key(number), value: value)
                    expected[number] = value
                }
            }
            for (number, value) in expected { #expect(try write.get("rows", key: key(number)) == value) }
        }
        try environment.read { read throws in
            #expect(try read.info("rows")?.count == UInt64(expected.count))
            for (number, value) in expected { #expect(try read.get("rows", key: key(number)) == value) }
        }
    }

    @Test func aCursorOnAChangedNodeLosesItsEntryWhenTheKeyIsDeleted() throws {
        let environment = try StorageEnvironment(file: MemoryFile())
        try environment.write { write in
            try write.createTree("rows", order: .integer)
            for number in UInt64(0)..<50 { try write.put("rows", key: key(number), value: Array("v\(number)".utf8)) }
        }
        try environment.write { write in
            try write.put("rows", key: key(20), value: Array("changed".utf8))  // the leaf is now a changed node
            let cursor = try write.cursor("rows")
            #expect(try cursor.seek(exactly: key(20)))
            #expect(try write.delete("rows", key: key(20)))
            // The cursor's key is gone: it is on no entry (it must not report the next key).
            #expect(throws: StorageError.self) { try cursor.key() }
            #expect(try cursor.seek(exactly: key(21)))
            #expect(try write.delete("rows", key: key(20)) == false)
            try write.put("rows", key: key(20), value: Array("back".utf8))
            #expect(try cursor.key() == key(21))
            #expect(try cursor.previous())
            #expect(try cursor.key() == key(20))
            #expect(try cursor.value() == Array("back".utf8))
        }
    }
}
