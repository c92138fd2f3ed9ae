import Testing
@testable import TrellisStorage
import TrellisTestSupport

/// A dirty page edited in place (DirtyPage.swift): every edit keeps it a page as format 7 writes
/// it (cells in key order packed right after the slots, `used` where the last ends), with the
/// entries a plain array of them would have.
@Suite struct DirtyPageTests {
    /// The entries of a leaf page, read through the reader's checked accessors.
    private func entries(_ page: DirtyPage) throws -> [[UInt8]] {
        try (0..<page.count).map { index in
            let (key, value) = try page.view.leafEntry(at: index)
            guard case .inline(let bytes) = value else { throw StorageError.misuse("overflow") }
            return Array(key) + [0xFF] + Array(bytes)
        }
    }

    /// The cells are packed in key order from `cellStart` (after the slots) to `used`.
    private func checkPacked(_ page: DirtyPage) {
        #expect(page.cellStart >= Layout.headerSize + page.count * Layout.slotSize)
        var expected = page.cellStart
        for index in 0..<page.count {
            #expect(page.offset(index) == expected)
            let start = page.offset(index)
            let keyLength = Int(page.base.loadLE(UInt16.self, at: start))
            let valueLength = Int(page.base.loadLE(UInt16.self, at: start + 2))
            expected = start + Layout.leafCellHeader + keyLength + valueLength
        }
        #expect(page.used == expected)
    }

    @Test func randomInsertsRemovalsAndReplacementsMatchAnArrayOfEntries() throws {
        var random = SplitMix64(seed: 4_101)
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: Layout.pageSize, alignment: 16)
        defer { buffer.deallocate() }
        let page = DirtyPage(base: buffer)
        page.initialize(isLeaf: true)
        var model: [(key: [UInt8], value: [UInt8])] = []
        var refused = 0
        for _ in 0..<20_000 {
            let key = random.bytes(1 + random.below(12))
            let value = random.bytes(random.below(random.chance(10) ? 900 : 60))
            let index = random.below(model.count + 1)
            let operation = model.isEmpty ? 0 : random.below(3)
            let removing = operation == 0 ? 0 : 1
            let removedIndex = min(index, model.count - removing)
            let fits = key.withUnsafeBytes { key in
                value.withUnsafeBytes { value in
                    switch operation {
                    case 1:  // remove
                        return page.splice(at: removedIndex, removing: 1, inserting: EmptyCollection())
                    default:  // insert (0) or replace (2)
                        return page.splice(at: removedIndex, removing: removing,
                                           inserting: CollectionOfOne(NewCell.leaf(key: key, value: value)))
                    }
                }
            }
            if fits {
                if removing == 1 { model.remove(at: removedIndex) }
                if operation != 1 { model.insert((key, value), at: removedIndex) }
            } else {
                refused += 1
                #expect(operation != 1)
            }
            #expect(try entries(page) == model.map { $0.key + [0xFF] + $0.value })
            checkPacked(page)
            if random.chance(2) { page.compact() }
        }
        // The page filled up and refused edits that did not fit, changing nothing.
        #expect(refused > 0)
        // Commit's layout: no gap after the slots, the same entries.
        page.compact()
        #expect(page.cellStart == Layout.headerSize + page.count * Layout.slotSize)
        checkPacked(page)
        #expect(try entries(page) == model.map { $0.key + [0xFF] + $0.value })
    }

    @Test func aCopiedPageOfAnyLayoutIsLaidOutAsFormatSevenWritesIt() throws {
        // Cells from the end of the page down (the layout of versions 3-6) and a cell that
        // overruns the page.
        let source = UnsafeMutableRawPointer.allocate(byteCount: Layout.pageSize, alignment: 16)
        let target = UnsafeMutableRawPointer.allocate(byteCount: Layout.pageSize, alignment: 16)
        defer { source.deallocate(); target.deallocate() }
        source.initializeMemory(as: UInt8.self, repeating: 0, count: Layout.pageSize)
        source.storeBytes(of: PageKind.compactLeaf.rawValue, as: UInt8.self)
        source.storeLE(UInt16(3), at: 2)
        var at = Layout.pageSize
        for index in 0..<3 {
            at -= Layout.leafCellHeader + 1 + 5
            source.storeLE(UInt16(at), at: Layout.headerSize + index * Layout.slotSize)
            source.storeLE(UInt16(1), at: at)
            source.storeLE(UInt16(5), at: at + 2)
            source.storeBytes(of: UInt8(index), toByteOffset: at + 4, as: UInt8.self)
            for byte in 0..<5 { source.storeBytes(of: UInt8(10 * index + byte), toByteOffset: at + 5 + byte, as: UInt8.self) }
        }
        let page = DirtyPage(base: target)
        try page.copy(PageView(base: UnsafeRawPointer(source), number: 7))
        checkPacked(page)
        #expect(try entries(page) == (0..<3).map { index in [UInt8(index), 0xFF] + (0..<5).map { UInt8(10 * index + $0) } })
        // The last entry's value now claims to run past the page.
        source.storeLE(UInt16(4_000), at: at + 2)
        #expect(throws: StorageError.self) { try page.copy(PageView(base: UnsafeRawPointer(source), number: 7)) }
    }
}
