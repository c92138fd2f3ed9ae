import Foundation
import Testing
@testable import TrellisStorage
import TrellisTestSupport

/// The in-place leaf reads an embedder's hot paths use (LeafPage.swift), checked against the
/// tree's own answers, and `.append` checked on the way down the rightmost path.
@Suite struct LeafPageTests {
    private func key(_ number: UInt64) -> [UInt8] { withUnsafeBytes(of: number) { Array($0) } }

    /// A tree of integer keys with gaps (every third key missing) and a few overflow values.
    private func makeIntegerTree(_ environment: StorageEnvironment, count: UInt64) throws {
        try environment.write { write in
            try write.createTree("rows", order: .integer)
            for number in UInt64(0)..<count where number % 3 != 1 {
                let value = number % 97 == 0 ? [UInt8](repeating: UInt8(number % 251), count: 3000) : Array("row \(number)".utf8)
                try write.put("rows", key: key(number), value: value)
            }
        }
    }

    @Test func keptIntegerLeavesAnswerEveryKeyAsTheTreeDoes() throws {
        let environment = try StorageEnvironment(file: MemoryFile())
        try makeIntegerTree(environment, count: 5000)
        var random = SplitMix64(seed: 37)
        try environment.read { read in
            let access = try read.access("rows")
            var kept: KeptIntegerLeaf?
            var answeredByPage = 0
            for _ in 0..<20_000 {
                // Mostly near the last key (as link hops and list elements go), sometimes anywhere.
                let number = random.chance(80) ? UInt64(random.below(40)) + (kept?.firstKey ?? 0) : UInt64(random.below(5200))
                let expected = try read.get("rows", key: key(number))
                if let leaf = kept {
                    switch leaf.lookup(number) {
                    case .found(let value):
                        answeredByPage += 1
                        #expect(Array(value) == expected, "key \(number)")
                    case .absent:
                        answeredByPage += 1
                        #expect(expected == nil, "key \(number) reported absent")
                    case .elsewhere:
                        #expect(number < leaf.firstKey || number > leaf.lastKey || expected.map { $0.count > 2000 } == true,
                                "key \(number) in range [\(leaf.firstKey), \(leaf.lastKey)] not answered")
                    }
                }
                let page = try key(number).withUnsafeBytes { try access.leaf(containing: $0) }
                kept = page.flatMap(KeptIntegerLeaf.init)
                #expect(kept != nil)
            }
            #expect(answeredByPage > 10_000)
        }
    }

    @Test func keptBytesLeavesAnswerEveryKeyAsTheTreeDoes() throws {
        let environment = try StorageEnvironment(file: MemoryFile())
        try environment.write { write in
            try write.createTree("chunks")
            for number in 0..<3000 where number % 4 != 0 {
                try write.put("chunks", key: Array("object \(number / 10) chunk \(number % 10)".utf8), value: Array("v\(number)".utf8))
            }
        }
        var random = SplitMix64(seed: 38)
        try environment.read { read in
            let access = try read.access("chunks")
            var kept: KeptBytesLeaf?
            var number = 0
            for _ in 0..<10_000 {
                // Runs of keys that follow each other (the kept leaf's entry after the one it
                // found last), and jumps.
                number = random.chance(30) ? random.below(3100) : number + 1 + (random.chance(20) ? 1 : 0)
                let bytes = Array("object \(number / 10) chunk \(number % 10)".utf8)
                let expected = try read.get("chunks", key: bytes)
                var answered = false
                if var leaf = kept {
                    switch bytes.withUnsafeBytes({ leaf.lookup($0) }) {
                    case .found(let value):
                        #expect(Array(value) == expected)
                        answered = true
                    case .absent:
                        #expect(expected == nil)
                        answered = true
                    case .elsewhere: break
                    }
                    kept = leaf
                }
                if !answered { kept = try bytes.withUnsafeBytes { try access.leaf(containing: $0) }.flatMap(KeptBytesLeaf.init) }
            }
        }
    }

    @Test func forEachLeafVisitsEveryEntryInKeyOrderAndOnlyInAReadTransaction() throws {
        let environment = try StorageEnvironment(file: MemoryFile())
        try makeIntegerTree(environment, count: 4000)
        var expected: [UInt64] = []
        try environment.read { read in
            let cursor = try read.cursor("rows")
            var more = try cursor.first()
            while more {
                expected.append(try cursor.key().withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) })
                more = try cursor.next()
            }
            var walked: [UInt64] = []
            var pages = 0
            let done = try read.access("rows").forEachLeaf { leaf in
                pages += 1
                for index in 0..<leaf.count { walked.append(try leaf.key(at: index).loadUnaligned(as: UInt64.self)) }
            }
            #expect(done)
            #expect(pages > 1)
            #expect(walked == expected)
        }
        try environment.write { write throws in
            #expect(try write.access("rows").forEachLeaf { _ in Issue.record("a write transaction's tree changes") } == false)
            #expect(try key(5).withUnsafeBytes { try write.access("rows").leaf(containing: $0) } == nil)
        }
    }

    @Test func appendRefusesAKeyThatDoesNotFollowTheLastAndLeavesTheTreeAsItWas() throws {
        let environment = try StorageEnvironment(file: MemoryFile())
        try environment.write { write in
            try write.createTree("rows", order: .integer)
            for number in UInt64(0)..<2000 { try write.put("rows", key: key(number * 2), value: [1], mode: .append) }
        }
        try environment.write { write in
            for refused in [UInt64(0), 1, 1999, 3998] {
                #expect(throws: StorageError.self) { try write.put("rows", key: key(refused), value: [2], mode: .append) }
            }
            try write.put("rows", key: key(3999), value: [3], mode: .append)
        }
        try environment.read { read throws in
            #expect(try read.info("rows")?.count == 2001)
            #expect(try read.get("rows", key: key(1)) == nil)
            #expect(try read.get("rows", key: key(0)) == [1])
            #expect(try read.get("rows", key: key(3998)) == [1])
            #expect(try read.get("rows", key: key(3999)) == [3])
        }
        #expect(try environment.check().entries == 2001)
    }
}
