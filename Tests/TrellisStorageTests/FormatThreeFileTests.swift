import Foundation
import Testing
import TrellisTestSupport
@testable import TrellisStorage

/// Files of format version 3 (8-byte leaf cells, written by builds before the compact leaf cells
/// of version 5) open, read and take commits in this build (docs/STORAGE.md, 2.1 and 2.5).
/// `Resources/FormatThree/format3.store` was written by main at 3f7fc13 from
/// `FormatThreeFixture.contents()` (one commit per tree, synced and sealed at close).
@Suite struct FormatThreeFileTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Resources/FormatThree/format3.store")

    /// A copy of the fixture in a folder of its own (opening writes its lock file beside it).
    private func copyOfFixture(_ label: String) throws -> (directory: String, path: String) {
        let directory = temporaryDirectory(label)
        let path = directory + "/format3.store"
        try FileManager.default.copyItem(atPath: Self.fixture.path, toPath: path)
        return (directory, path)
    }

    private static func header(_ path: String) throws -> (version: UInt32, bytes: Data) {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let version = bytes.subdata(in: 8..<12).withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
        return (UInt32(littleEndian: version), bytes)
    }

    /// Every tree of `contents` holds exactly its entries, read by cursor and by key.
    private static func expectContents(_ environment: StorageEnvironment, _ contents: [FormatThreeFixture.Tree]) throws {
        try environment.read { read in
            for tree in contents {
                #expect(try read.info(tree.name)?.count == UInt64(tree.entries.count), "\(tree.name)")
                let cursor = try read.cursor(tree.name)
                var index = 0
                var more = try cursor.first()
                while more {
                    guard index < tree.entries.count else {
                        Issue.record("\(tree.name) has more than its \(tree.entries.count) entries")
                        break
                    }
                    #expect(try cursor.key() == tree.entries[index].key, "\(tree.name) #\(index)")
                    #expect(try cursor.value() == tree.entries[index].value, "\(tree.name) #\(index)")
                    index += 1
                    more = try cursor.next()
                }
                #expect(index == tree.entries.count, "\(tree.name)")
                for entry in tree.entries.prefix(50) {
                    #expect(try read.get(tree.name, key: entry.key) == entry.value, "\(tree.name)")
                }
            }
        }
    }

    @Test func aFormatThreeFileIsReadWithItsEightByteCells() throws {
        let (directory, path) = try copyOfFixture("format3-read")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(try Self.header(path).version == 3)
        let environment = try StorageEnvironment(path: path, options: { var o = StorageEnvironment.Options(); o.readOnly = true; return o }())
        defer { environment.close() }
        let report = try environment.check()
        let contents = FormatThreeFixture.contents()
        #expect(report.entries == contents.reduce(0) { $0 + $1.entries.count })
        try Self.expectContents(environment, contents)
    }

    @Test func aFormatThreeFileTakesCommitsAndKeepsItsVersion() throws {
        let (directory, path) = try copyOfFixture("format3-write")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var contents = FormatThreeFixture.contents()
        do {
            let environment = try StorageEnvironment(path: path)
            // Changes to the first quarter of every tree: pages copied from 8-byte-cell leaves
            // are written back in this build's layout, beside the leaves it does not touch.
            try environment.write { write in
                for (treeIndex, tree) in contents.enumerated() {
                    for index in stride(from: 0, to: tree.entries.count / 4, by: 7) {
                        let value = Array("changed \(index)".utf8)
                        try write.put(tree.name, key: tree.entries[index].key, value: value)
                        contents[treeIndex].entries[index].value = value
                    }
                }
            }
            try Self.expectContents(environment, contents)
            environment.close()
        }
        // The header is written once, at creation: the file keeps version 3 (docs/STORAGE.md 2.1),
        // and holds leaves of both layouts (kind 2 and kind 6).
        let (version, bytes) = try Self.header(path)
        #expect(version == 3)
        let kinds = Set(stride(from: 3 * 4096, to: bytes.count, by: 4096).map { bytes[$0] })
        #expect(kinds.contains(PageKind.leaf.rawValue) && kinds.contains(PageKind.compactLeaf.rawValue), "\(kinds)")
        let environment = try StorageEnvironment(path: path)
        defer { environment.close() }
        _ = try environment.check()
        try Self.expectContents(environment, contents)
    }
}

/// The leaf layout this build writes (format version 5, docs/STORAGE.md 2.5): a 4-byte cell
/// header (key length, value length or the overflow marker) where versions 3 and 4 spent 8.
@Suite struct CompactLeafCellTests {
    @Test func aNewFileIsOfTheCurrentVersionAndItsLeafCellsHaveFourByteHeaders() throws {
        let directory = temporaryDirectory("compact-cells")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/data"
        let long = [UInt8](repeating: 7, count: 5_000)
        do {
            let environment = try StorageEnvironment(path: path)
            try environment.write { write in
                try write.createTree("t")
                try write.put("t", key: Array("key".utf8), value: Array("value".utf8))
                try write.put("t", key: Array("long".utf8), value: long)
            }
            environment.close()
        }
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(UInt32(bytes[8]) == FileHeader.version && FileHeader.version == 9)
        // The tree's one leaf: the page of kind 6 holding 2 entries.
        let leaves = stride(from: 3 * 4096, to: bytes.count, by: 4096).filter { bytes[$0] == 6 && bytes[$0 + 2] == 2 }
        #expect(leaves.count == 1)
        guard let page = leaves.first else { return }
        func u16(_ at: Int) -> Int { Int(bytes[page + at]) | Int(bytes[page + at + 1]) << 8 }
        // Entry 0 is "key" (sorts first): key length 3, value length 5, key, value.
        let cell = u16(32)
        #expect(u16(cell) == 3 && u16(cell + 2) == 5)
        #expect(Array(bytes[(page + cell + 4)..<(page + cell + 12)]) == Array("keyvalue".utf8))
        // Entry 1, "long": the overflow marker, then first page, checksum and the value's length.
        let overflowCell = u16(34)
        #expect(u16(overflowCell) == 4 && u16(overflowCell + 2) == 0xFFFF)
        let lengthAt = page + overflowCell + 4 + 4 + 16
        #expect(bytes[lengthAt..<(lengthAt + 4)].reversed().reduce(0) { $0 << 8 | Int($1) } == 5_000)
        let environment = try StorageEnvironment(path: path)
        defer { environment.close() }
        #expect(try environment.read { try $0.get("t", key: Array("long".utf8)) } == long)
    }

    /// 10,000 entries of 8-byte keys and 16-byte values made in order: 30 bytes each with the
    /// slot (135 a leaf) where 8-byte cell headers took 34 (119 a leaf, 85 leaves).
    @Test func smallEntriesMadeInOrderTakeThirtyBytesEach() throws {
        let environment = try StorageEnvironment(file: MemoryFile())
        try environment.write { write in
            try write.createTree("rows", order: .integer)
            for key in UInt64(0)..<10_000 {
                try write.put("rows", key: withUnsafeBytes(of: key) { Array($0) }, value: [UInt8](repeating: 1, count: 16))
            }
        }
        let report = try environment.check()
        // 75 leaves (10,000 / 135, rounded up), a root branch, the catalog's leaf, the free tree.
        #expect(report.pagesInUse <= 79, "\(report.pagesInUse) pages in use")
        #expect(report.entries == 10_000)
    }
}

/// What `Resources/FormatThree/format3.store` holds: a byte-ordered tree of keys and values of
/// many lengths (some values in overflow runs), and an integer-ordered tree deep enough for
/// branches, from SplitMix64 with a fixed seed.
enum FormatThreeFixture {
    struct Tree {
        var name: String
        var order: KeyOrder
        var entries: [(key: [UInt8], value: [UInt8])]
    }

    static func contents() -> [Tree] {
        var random = SplitMix64(seed: 0x5EED_F03A)
        var keyed: [[UInt8]: [UInt8]] = [:]
        while keyed.count < 600 {
            let key = random.bytes(1 + random.below(40))
            let long = random.below(60) == 0
            keyed[key] = random.bytes(long ? 2_000 + random.below(6_000) : random.below(300))
        }
        let bytesTree = Tree(name: "bytes", order: .bytes,
                             entries: keyed.sorted { $0.key.lexicographicallyPrecedes($1.key) }.map { ($0.key, $0.value) })
        let numbers = Tree(name: "numbers", order: .integer, entries: (UInt64(0)..<2_000).map { number in
            (withUnsafeBytes(of: (number * 3).littleEndian) { Array($0) }, random.bytes(8 + random.below(24)))
        })
        return [bytesTree, numbers]
    }

    /// Writes these contents at `path`: how the resource was made, by main at 3f7fc13 (a build
    /// that writes format 3); this build would write format 5.
    static func write(to path: String) throws {
        let environment = try StorageEnvironment(path: path)
        defer { environment.close() }
        for tree in contents() {
            try environment.write { write in
                try write.createTree(tree.name, order: tree.order)
                for entry in tree.entries { try write.put(tree.name, key: entry.key, value: entry.value) }
            }
        }
    }
}
