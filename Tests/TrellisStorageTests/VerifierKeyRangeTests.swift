import Foundation
import Testing
@testable import TrellisStorage

/// `check()` follows the keys' order across pages, not only within them: a branch's separators
/// bound each child, and a key outside its child's bounds is damage even when every checksum
/// matches (a file can be made by hand with right checksums: XXH64 is no secret). The check
/// compares a page's first key with the separator before the child and its last key with the one
/// after (the keys between rise strictly, which it checks too).
@Suite struct VerifierKeyRangeTests {
    static func key(_ number: Int) -> [UInt8] { Array(String(format: "k%07d", number).utf8) }

    /// A sealed file whose tree "t" (byte order, 600 keys) is a root branch over several leaves.
    static func makeImage() throws -> [UInt8] {
        let file = MemoryFile()
        let environment = try StorageEnvironment(file: file)
        try environment.write { write in
            try write.createTree("t", order: .bytes)
            for number in 0..<600 { try write.put("t", key: key(number), value: [UInt8](repeating: 7, count: 24)) }
        }
        environment.close()
        return file.contents
    }

    /// `image` with the separator at `index` of tree "t"'s root branch replaced by `separator`
    /// (same length), and every checksum above it made right again: the root's in the catalog's
    /// entry for "t", the catalog leaf's in both meta slots, the slots' own.
    static func replacingSeparator(at index: Int, with separator: (_ leafFirstKeys: [[UInt8]]) -> [UInt8],
                                   in image: [UInt8]) throws -> [UInt8] {
        var image = image
        try image.withUnsafeMutableBytes { buffer in
            let base = try #require(buffer.baseAddress)
            func page(_ number: UInt64) -> UnsafeMutableRawPointer { base + Int(number) * Layout.pageSize }
            let slots = try [UInt64(1), 2].map { try #require(MetaSlot.decode(page($0))) }
            let catalog = try #require(slots[0].catalog)
            #expect(slots.allSatisfy { $0.catalog == catalog && $0.catalogDepth == 1 })
            let catalogLeaf = PageView(base: page(catalog.page), number: catalog.page)
            let entry = try #require((0..<catalogLeaf.count).first { Array(try catalogLeaf.key(at: $0)) == Array("t".utf8) })
            guard case .inline(let descriptorBytes) = try catalogLeaf.value(at: entry) else {
                Issue.record("the catalog entry of 't' is not inline")
                return
            }
            var descriptor = try TreeDescriptor.decode(descriptorBytes, page: catalog.page)
            let root = try #require(descriptor.root)
            #expect(descriptor.depth == 2)
            let branch = PageView(base: page(root.page), number: root.page)
            #expect(!branch.isLeaf && branch.count > index + 1)
            // The first key of each leaf, read through the branch's children.
            let leafFirstKeys = try (0..<branch.count).map { child in
                let leaf = try branch.child(at: child)
                return Array(try PageView(base: page(leaf.page), number: leaf.page).key(at: 0))
            }
            let replacement = separator(leafFirstKeys)
            let old = try branch.key(at: index)
            #expect(old.count == replacement.count)
            let offset = try #require(old.baseAddress) - UnsafeRawPointer(base)
            for (position, byte) in replacement.enumerated() { buffer[offset + position] = byte }

            descriptor.root = PageReference(page: root.page, checksum: try Checksum.ofPages(page(root.page), count: 1, page: root.page))
            let descriptorOffset = try #require(descriptorBytes.baseAddress) - UnsafeRawPointer(base)
            for (position, byte) in descriptor.encoded().enumerated() { buffer[descriptorOffset + position] = byte }
            let newCatalog = PageReference(page: catalog.page,
                                           checksum: try Checksum.ofPages(page(catalog.page), count: 1, page: catalog.page))
            for (number, slot) in zip([UInt64(1), 2], slots) {
                let rewritten = MetaSlot(txnID: slot.txnID, durableTxnID: slot.durableTxnID, pageCount: slot.pageCount,
                                         catalog: newCatalog, freeList: slot.freeList, freeListCount: slot.freeListCount,
                                         catalogDepth: slot.catalogDepth, freeTreeDepth: slot.freeTreeDepth,
                                         spares: slot.spares, freed: slot.freed)
                rewritten.encode(into: page(number))
            }
        }
        return image
    }

    /// Opens `image` and runs `check()`; the error's text, or nil when it passed.
    static func checkError(_ image: [UInt8]) throws -> String? {
        let environment = try StorageEnvironment(file: MemoryFile(contents: image))
        defer { environment.close() }
        do {
            _ = try environment.check()
            return nil
        } catch let error as StorageError {
            guard case .corruptFile = error.code else { return "not corruptFile: \(error)" }
            return "\(error)"
        }
    }

    @Test func theUntouchedFileAndARewrittenButEqualSeparatorPass() throws {
        let image = try Self.makeImage()
        #expect(try Self.checkError(image) == nil)
        // The rewriting itself keeps a sound file sound: the same separator written back.
        let same = try Self.replacingSeparator(at: 1, with: { $0[1] }, in: image)
        #expect(try Self.checkError(same) == nil)
    }

    @Test func aLeafWhoseLastKeyIsNotBelowTheNextSeparatorIsCorruptFile() throws {
        let image = try Self.makeImage()
        // The separator before the second leaf moved down to the first leaf's second key: the
        // first leaf's later keys (its last among them) are no longer below it.
        let damaged = try Self.replacingSeparator(at: 1, with: { _ in Self.key(1) }, in: image)
        let message = try #require(try Self.checkError(damaged))
        #expect(message.contains("is not below its parent's next separator"), "\(message)")
    }

    @Test func aLeafWhoseFirstKeyIsBelowThePreviousSeparatorIsCorruptFile() throws {
        let image = try Self.makeImage()
        // The separator before the second leaf moved up past that leaf's first key (still below
        // the next separator, so the branch itself stays in order).
        let damaged = try Self.replacingSeparator(at: 1, with: { firstKeys in
            var raised = firstKeys[1]
            raised[raised.count - 1] &+= 1
            return raised
        }, in: image)
        let message = try #require(try Self.checkError(damaged))
        #expect(message.contains("keys out of order at entry 0"), "\(message)")
    }
}
