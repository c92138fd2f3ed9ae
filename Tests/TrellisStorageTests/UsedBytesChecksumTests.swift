import Foundation
import Testing
@testable import TrellisStorage
import TrellisTestSupport

/// Format versions 7 and 8 (issue 37, W6commit): a tree page is checksummed over its used bytes
/// (header, slots and the cells packed after them), flagged in its header with the length; pages
/// of older versions (whole-page checksums, no flag) are read as they are (docs/STORAGE.md 2.3-2.4).
@Suite struct UsedBytesChecksumTests {
    typealias Model = SeededTrees.Model

    /// Several commits into three trees (one integer-keyed, a few overflow values, deletes).
    private static func fill(_ environment: StorageEnvironment, seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let shape = SeededTrees.Shape(rounds: 5, operations: 120, keys: 500, deletesFrom: 2, deletePercent: 25,
                                      overflowPercent: 4, overflowLength: 5000, smallLength: 120)
        try SeededTrees.fill(environment, shape: shape, random: &random)
    }

    private static func page(_ image: [UInt8], _ number: UInt64) -> ArraySlice<UInt8> {
        let start = Int(number) * Layout.pageSize
        return image[start..<(start + Layout.pageSize)]
    }

    private static func used(_ page: ArraySlice<UInt8>) -> Int {
        let start = page.startIndex
        return Int(page[start + 4]) | Int(page[start + 5]) << 8 | Int(page[start + 6]) << 16 | Int(page[start + 7]) << 24
    }

    private static func xxh64(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        bytes.withUnsafeBytes { Checksum.xxh64($0) }
    }

    /// A new file is version 7; every tree page it holds carries the flag and a length that
    /// covers its slots, everything after the length is zero, and the checksum its parent
    /// records (here: the meta slot's for the catalog root) is the XXH64 of that prefix only.
    @Test func aNewFileChecksumsEachTreePageOverItsUsedBytes() throws {
        let file = MemoryFile()
        let environment = try StorageEnvironment(file: file)
        try Self.fill(environment, seed: 37)
        let meta = try environment.read { $0.snapshot.meta }
        environment.close()
        let image = file.contents
        #expect(UInt32(image[8]) == FileHeader.version && FileHeader.version == 9, "the header's format version")
        var treePages = 0
        for number in Layout.firstDataPage..<meta.pageCount {
            let page = Self.page(image, number)
            let kind = page[page.startIndex]
            guard kind == PageKind.branch.rawValue || kind == PageKind.compactLeaf.rawValue else { continue }
            treePages += 1
            #expect(page[page.startIndex + 1] == Layout.usedBytesFlag, "page \(number) is not flagged")
            let count = Int(page[page.startIndex + 2]) | Int(page[page.startIndex + 3]) << 8
            let used = Self.used(page)
            #expect(used >= Layout.headerSize + count * Layout.slotSize && used <= Layout.pageSize, "page \(number)")
            #expect(page[(page.startIndex + used)...].allSatisfy { $0 == 0 }, "page \(number) has bytes after its length")
        }
        #expect(treePages > 10)
        let catalog = try #require(meta.catalog)
        let root = Self.page(image, catalog.page)
        let used = Self.used(root)
        #expect(used < Layout.pageSize / 2, "a catalog of three trees uses \(used) bytes")
        #expect(Self.xxh64(root.prefix(used)) == catalog.checksum)
        #expect(Self.xxh64(root) != catalog.checksum)
    }

    /// A byte changed inside a page's used bytes (its length and flag included) is a typed error;
    /// one changed after them is read by nobody, and every tree reads as before.
    @Test func aChangeInTheUsedBytesIsDetectedAndOneAfterThemIsHarmless() throws {
        let file = MemoryFile()
        var expected: [String: Model] = [:]
        let meta: MetaSlot
        do {
            let environment = try StorageEnvironment(file: file)
            try Self.fill(environment, seed: 38)
            expected = try SeededTrees.contents(environment, trees: ["a", "b", "c"])
            meta = try environment.read { $0.snapshot.meta }
            environment.close()
        }
        let image = file.contents
        let catalog = try #require(meta.catalog)
        let start = Int(catalog.page) * Layout.pageSize
        let used = Self.used(Self.page(image, catalog.page))
        // In the used bytes: the flag, the length, a slot, the last cell byte.
        for (offset, mask) in [(1, UInt8(1)), (4, UInt8(0x10)), (Layout.headerSize, UInt8(2)), (used - 1, UInt8(0x40))] {
            let damaged = MemoryFile(contents: image)
            damaged.flip(at: start + offset, with: mask)
            #expect(throws: StorageError.self, "a change at byte \(offset) of the catalog root went unseen") {
                let environment = try StorageEnvironment(file: damaged)
                defer { environment.close() }
                _ = try SeededTrees.contents(environment, trees: ["a", "b", "c"])
                _ = try environment.check()
            }
        }
        // After them: unread.
        for offset in [used, (used + Layout.pageSize) / 2, Layout.pageSize - 1] {
            let damaged = MemoryFile(contents: image)
            damaged.flip(at: start + offset, with: 0x5A)
            let environment = try StorageEnvironment(file: damaged)
            defer { environment.close() }
            #expect(try SeededTrees.contents(environment, trees: ["a", "b", "c"]) == expected)
            _ = try environment.check()
        }
    }

    /// A file of an older version (the format-3 fixture, every page checksummed whole) reads its
    /// pages by their own rule and takes commits whose tree pages are flagged; its header keeps
    /// its version, and both kinds of pages read back (and pass `check()`) after a reopening.
    /// Setting the flag on a page checksummed whole (its length field is then 0) is damage.
    @Test func aFileOfAnOlderVersionHoldsBothChecksumRulesAndReadsBoth() throws {
        let fixture = [UInt8](try Data(contentsOf: FormatThreeFileTests.fixture))
        #expect(fixture[8] == 3)
        let file = MemoryFile(contents: fixture)
        let environment = try StorageEnvironment(file: file)
        let catalogBefore = try #require(try environment.read { $0.snapshot.meta.catalog })
        let trees = ["a", "b", "c", "bytes", "numbers"]
        try Self.fill(environment, seed: 39)
        let expected = try SeededTrees.contents(environment, trees: trees)
        #expect(expected["numbers"]?.count == 2_000, "the fixture's trees are read")
        let meta = try environment.read { $0.snapshot.meta }
        environment.close()
        let image = file.contents
        #expect(image[8] == 3, "the header keeps its version")
        var (flagged, whole) = (0, 0)
        for number in Layout.firstDataPage..<meta.pageCount {
            let page = Self.page(image, number)
            guard [PageKind.branch.rawValue, PageKind.leaf.rawValue, PageKind.compactLeaf.rawValue]
                .contains(page[page.startIndex]) else { continue }
            if page[page.startIndex + 1] == Layout.usedBytesFlag { flagged += 1 } else { whole += 1 }
        }
        #expect(flagged > 10 && whole > 10, "\(flagged) flagged and \(whole) whole-page tree pages")
        let reopened = try StorageEnvironment(file: MemoryFile(contents: image))
        #expect(try SeededTrees.contents(reopened, trees: trees) == expected)
        _ = try reopened.check()
        reopened.close()

        let damaged = MemoryFile(contents: fixture)
        damaged.flip(at: Int(catalogBefore.page) * Layout.pageSize + Layout.flagsOffset, with: Layout.usedBytesFlag)
        #expect(throws: StorageError.self) {
            let environment = try StorageEnvironment(file: damaged)
            defer { environment.close() }
            _ = try SeededTrees.contents(environment, trees: trees)
        }
    }

    /// A version this build does not know (a newer build's) is `incompatibleFile` naming it and
    /// the versions this build reads; the file is left as it was.
    @Test func aFileOfANewerVersionIsRefusedNamingTheVersions() throws {
        let file = MemoryFile()
        try StorageEnvironment(file: file).close()
        var header = Array(file.contents.prefix(Layout.pageSize))
        header.withUnsafeMutableBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            base.storeLE(UInt32(11), at: 8)
            base.storeLE(Checksum.xxh64(UnsafeRawBufferPointer(start: base, count: 16)), at: 16)
        }
        try header.withUnsafeBytes { try file.write($0, at: 0) }
        let before = file.contents
        #expect {
            _ = try StorageEnvironment(file: file)
        } throws: { error in
            guard let error = error as? StorageError, case .incompatibleFile = error.code else { return false }
            return "\(error)".contains("format version 11") && "\(error)".contains("versions 3, 5, 7 and 9")
        }
        #expect(file.contents == before)
    }
}
