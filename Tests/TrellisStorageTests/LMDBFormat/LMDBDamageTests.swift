import Foundation
import Testing
import TrellisLMDBFormat
import TrellisStorage
import TrellisTestSupport

/// A damaged LMDB-format file is a typed error, never a trap or a read outside the file, and the
/// file is left as it was. LMDB pages carry no checksums, so a flipped byte inside a value (or in
/// bytes LMDB does not use) cannot be seen by any reader: such a flip converts, and is counted.
/// `TRELLIS_LMDB_FLIPS=N` sets the number of random flips (default 120).
@Suite struct LMDBDamageTests {
    static func makeFile(_ directory: String) throws -> (path: String, bytes: Data, expected: [String: LMDBFileMaker.Dump]) {
        let path = directory + "/pristine.realm"
        let expected = LMDBConversionTests.makeFile(path, seed: 61, databases: 6, entries: 300)
        return (path, try Data(contentsOf: URL(fileURLWithPath: path)), expected)
    }

    /// Upgrades a copy of `bytes` with `damage` applied; returns what happened.
    static func convertDamaged(_ bytes: Data, directory: String, round: Int, damage: (inout Data) -> Void)
        throws -> (error: LMDBFormatError?, converted: [String: LMDBFileMaker.Dump]?)
    {
        let path = directory + "/flip\(round).realm"
        var damaged = bytes
        damage(&damaged)
        try damaged.write(to: URL(fileURLWithPath: path))
        defer { for suffix in ["", "-lock", LMDBUpgrade.convertingSuffix, LMDBUpgrade.backupSuffix] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        do {
            try LMDBUpgrade.upgrade(path: path)
            return (nil, try LMDBConversionTests.storageView(path))
        } catch let error as LMDBFormatError {
            // The damaged file is left exactly as it was, with nothing beside it.
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == damaged, "round \(round)")
            #expect(!FileManager.default.fileExists(atPath: path + LMDBUpgrade.convertingSuffix))
            #expect(!FileManager.default.fileExists(atPath: path + LMDBUpgrade.backupSuffix))
            return (error, nil)
        }
    }

    @Test func aFlippedPageNumberOfAnyTreePageIsATypedError() throws {
        // Given a sound file: every page of it that names itself as page n (n >= 2) is a tree or
        // overflow page of the commit, or a free page
        let directory = temporaryDirectory("lmdb-page-flip")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (_, bytes, expected) = try Self.makeFile(directory)
        let pageSize = 4096
        var detected = 0, tried = 0
        for page in 2..<(bytes.count / pageSize) {
            let named = bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: page * pageSize, as: UInt64.self) }
            let flags = bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: page * pageSize + 10, as: UInt16.self) }
            guard named == UInt64(page), flags & 0x03 != 0 else { continue }  // branch and leaf pages
            tried += 1
            // When the low byte of its page number is flipped
            let outcome = try Self.convertDamaged(bytes, directory: directory, round: page) { $0[page * pageSize] ^= 0x01 }
            // Then the conversion refuses, naming the page — unless the page is free (unused by the commit)
            if let error = outcome.error {
                #expect(error.code == .damagedFile(page: UInt64(page)), "page \(page): \(error)")
                detected += 1
            } else {
                #expect(outcome.converted == expected ? true : false, "page \(page) was used, and its damage not seen")
            }
        }
        #expect(detected > 0)
        print("LMDBDamageTests: \(detected) of \(tried) branch and leaf pages with a flipped number detected (the rest are free pages)")
    }

    @Test func aDamagedNewerMetaPageFallsBackToTheOlderCommitAndBothAreAnError() throws {
        // Given a file whose last commit adds the key "last" to tree "t"
        let directory = temporaryDirectory("lmdb-meta-flip")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/pristine.realm"
        let maker = LMDBFileMaker(path: path)
        maker.write { txn in
            let dbi = LMDBFileMaker.open(txn, "t")
            for index in 0..<100 { LMDBFileMaker.put(txn, dbi, Array("key\(index)".utf8), [UInt8(index)]) }
        }
        maker.write { txn in LMDBFileMaker.put(txn, LMDBFileMaker.open(txn, "t"), Array("last".utf8), [1]) }
        maker.close()
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let newer = bytes.withUnsafeBytes {
            $0.loadUnaligned(fromByteOffset: 144, as: UInt64.self) > $0.loadUnaligned(fromByteOffset: 4096 + 144, as: UInt64.self)
        } ? 0 : 1

        // When the newer meta page's magic is damaged (as a torn meta write leaves it), the older
        // commit is read: LMDB's rule, the newer *valid* meta page
        let one = try Self.convertDamaged(bytes, directory: directory, round: 0) { $0[newer * 4096 + 16] ^= 0xFF }
        let tree = try #require(one.converted?["t"], "\(String(describing: one.error))")
        #expect(tree.entries.count == 100)
        #expect(!tree.entries.contains { $0.0 == Array("last".utf8) })
        // and with both damaged the file is not an LMDB file any more.
        let both = try Self.convertDamaged(bytes, directory: directory, round: 1) {
            $0[16] ^= 0xFF
            $0[4096 + 16] ^= 0xFF
        }
        #expect(both.error?.code == .notLMDBFile)
        // A newer meta page whose last page lies past the file is damage too: the older is read.
        let cut = try Self.convertDamaged(bytes, directory: directory, round: 2) { $0[newer * 4096 + 136 + 6] ^= 0x01 }
        #expect(cut.converted?["t"]?.entries.count == 100)
    }

    @Test func randomFlipsAreTypedErrorsOrConvertNeverATrap() throws {
        let directory = temporaryDirectory("lmdb-random-flip")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (_, bytes, expected) = try Self.makeFile(directory)
        var random = SplitMix64(seed: 71)
        let flips = environmentInteger("TRELLIS_LMDB_FLIPS", default: 120)
        var typed = 0, same = 0, changed = 0
        for round in 0..<flips {
            let offset = random.below(bytes.count)
            let mask = UInt8(1 + random.below(255))
            let outcome = try Self.convertDamaged(bytes, directory: directory, round: round) { $0[offset] ^= mask }
            if outcome.error != nil {
                typed += 1
            } else if outcome.converted == expected {
                same += 1
            } else {
                changed += 1  // a value byte (LMDB has no checksums to tell)
            }
        }
        print("LMDBDamageTests: \(flips) random flips: \(typed) typed errors, \(same) harmless, \(changed) converted a changed value (no checksum in LMDB's format), 0 traps")
        #expect(typed + same + changed == flips)
        #expect(typed > 0)
    }
}
