import Foundation
import Testing
import TrellisTestSupport
@testable import Trellis

/// File format 6's compact layout: rows with the slot width of their values (``RowFormat``): the
/// width a writer picks, every value read back at every width, rows of 8-byte slots (files before
/// format 6) read as before; primary-key entries whose value has the object key's significant
/// bytes; and the upgrade of a file of the previous layout (``CompactUpgrade``).
@Suite struct CompactRowTests {
    let folder = TemporaryFolder()

    private static func header(_ row: [UInt8]) -> (count: Int, width: Int) {
        let header = UInt16(row[0]) | UInt16(row[1]) << 8
        return (RowFormat.columnCount(header: header), RowFormat.slotWidth(header: header))
    }

    /// Every column of `row` holds what `values` say: null bits, fixed slots, tail bytes.
    private static func expectValues(_ row: RowView, _ values: [_StoredValue.Payload],
                                     sourceLocation: SourceLocation = #_sourceLocation)
    {
        #expect(row.columnCount == values.count, sourceLocation: sourceLocation)
        for (column, value) in values.enumerated() {
            if case .null = value {
                #expect(row.isNull(column), "column \(column)", sourceLocation: sourceLocation)
                continue
            }
            #expect(!row.isNull(column), "column \(column)", sourceLocation: sourceLocation)
            if RowWriter.hasTail(value) {
                var expected = [UInt8](repeating: 0, count: RowWriter.tailByteCount(of: value))
                if !expected.isEmpty {
                    expected.withUnsafeMutableBytes { RowWriter.writeTail(of: value, to: $0.baseAddress!) }
                }
                #expect(Array(row.tail(column)) == expected, "column \(column)", sourceLocation: sourceLocation)
            } else {
                #expect(row.slot(column) == RowWriter.slotBits(of: value), "column \(column)",
                        sourceLocation: sourceLocation)
            }
        }
    }

    @Test func aRowOfSmallValuesHasOneByteSlots() {
        let values: [_StoredValue.Payload] = [.int(5), .bool(true), .link(200), .string("rex")]
        let row = RowWriter.encode(values)
        #expect(Self.header(row) == (4, 1))
        // header 2, null bitmap 1, four 1-byte slots, "rex"
        #expect(row.count == 2 + 1 + 4 + 3)
        row.withUnsafeBytes { Self.expectValues(RowView(bytes: $0), values) }
    }

    @Test func theWidestValueSetsTheWidthOfEverySlot() {
        #expect(Self.header(RowWriter.encode([.int(1), .int(100_000)])).width == 3)
        #expect(Self.header(RowWriter.encode([.int(1), .int(Int64(UInt32.max))])).width == 4)
        #expect(Self.header(RowWriter.encode([.int(1), .int(1 << 40)])).width == 6)
        #expect(Self.header(RowWriter.encode([.int(1), .int(-1)])).width == 8)
        #expect(Self.header(RowWriter.encode([.int(1), .double(1.5)])).width == 8)
        #expect(Self.header(RowWriter.encode([.null, .null])).width == 1)
        #expect(Self.header(RowWriter.encode([])) == (0, 1))
    }

    @Test func slotsWidenWhenATailOffsetOrLengthOutgrowsHalfASlot() {
        // 1-byte slots hold offsets and lengths up to 15: "abc" after 5 bytes of row fits.
        #expect(Self.header(RowWriter.encode([.int(1), .string("abc")])).width == 1)
        // 20 bytes end at 25: 2-byte slots (offsets up to 255).
        let twenty = String(repeating: "x", count: 20)
        #expect(Self.header(RowWriter.encode([.int(1), .string(twenty)])).width == 2)
        let long = String(repeating: "y", count: 300)
        let row = RowWriter.encode([.int(1), .string(long)])
        #expect(Self.header(row).width == 3)
        row.withUnsafeBytes { Self.expectValues(RowView(bytes: $0), [.int(1), .string(long)]) }
    }

    /// A row of 8-byte slots is byte for byte the layout of files before format 6.
    @Test func aRowOfEightByteSlotsIsTheLayoutOfEarlierFiles() {
        let values: [_StoredValue.Payload] = [.int(-2), .null, .string("ab")]
        var expected = [UInt8](repeating: 0, count: 2 + 1 + 24 + 2)
        expected[0] = 3
        expected[2] = 0b010
        withUnsafeBytes(of: UInt64(bitPattern: -2)) { for i in 0..<8 { expected[3 + i] = $0[i] } }
        withUnsafeBytes(of: UInt64(27) | UInt64(2) << 32) { for i in 0..<8 { expected[19 + i] = $0[i] } }
        expected[27] = UInt8(ascii: "a")
        expected[28] = UInt8(ascii: "b")
        #expect(RowWriter.encode(values) == expected)
        #expect(RowWriter.encode(values, compact: false) == expected)
        expected.withUnsafeBytes { Self.expectValues(RowView(bytes: $0), values) }
    }

    /// A collection element keeps its 8-byte slot (a set element's bytes are its key).
    @Test func aCollectionElementKeepsItsEightByteSlot() {
        let element = RowWriter.encode(single: .int(3))
        #expect(Self.header(element) == (1, 8))
        #expect(element.count == RowFormat.tailStart(1))
    }

    @Test func aPrimaryKeyEntryHoldsTheObjectKeysSignificantBytes() {
        #expect([0, 1, 255, 256, 65_535, 100_000, 1 << 32, UInt64.max].map(PrimaryKeyEncoding.valueByteCount)
                == [1, 1, 1, 2, 2, 3, 5, 8])
        var random = SplitMix64(seed: 4)
        for _ in 0..<2000 {
            let key = random.next() >> (random.next() % 64)
            var little = key.littleEndian
            let length = PrimaryKeyEncoding.valueByteCount(key)
            withUnsafeBytes(of: &little) { bytes in
                // The short value and the 8-byte value of files before format 6 read the same key.
                #expect(PrimaryKeyEncoding.objectKey(UnsafeRawBufferPointer(rebasing: bytes.prefix(length))) == key)
                #expect(PrimaryKeyEncoding.objectKey(bytes) == key)
                #expect(length == 8 || key >> UInt64(8 * length) == 0)
                #expect(length == 1 || key >> UInt64(8 * (length - 1)) != 0)
            }
        }
    }

    private static func randomPayload(_ random: inout SplitMix64) -> _StoredValue.Payload {
        let bits = Int(random.next() % 65)
        let number = bits == 0 ? 0 : random.next() >> UInt64(64 - bits)
        switch random.next() % 10 {
        case 0: return .null
        case 1: return .int(Int64(bitPattern: number))
        case 2: return .bool(number & 1 == 1)
        case 3: return .float(Float(bitPattern: UInt32(truncatingIfNeeded: number)))
        case 4: return .double(Double(bitPattern: number))
        case 5: return .link(number)
        case 6: return .date(Date(timeIntervalSinceReferenceDate: Double(Int64(truncatingIfNeeded: number) % 1_000_000)))
        case 7: return .data(Data((0..<Int(random.next() % 40)).map { _ in UInt8(truncatingIfNeeded: random.next()) }))
        case 8:
            let length = Int(random.next() % 4 == 0 ? random.next() % 5000 : random.next() % 12)
            return .string(String(repeating: "é", count: length / 2))
        default:
            let bytes = (0..<12).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            return .objectId(bytes.withUnsafeBytes { ObjectId(bytes: $0) } ?? ObjectId())
        }
    }

    /// Random rows (fixed seeds): the compact row and the 8-byte row of the same values read the
    /// same values; the compact row's width is the narrowest that holds them; every width occurs.
    @Test(arguments: [1, 2, 3] as [UInt64])
    func randomRowsReadBackTheirValuesAtEveryWidth(_ seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var widths = Set<Int>()
        for _ in 0..<3000 {
            let count = Int(random.next() % 12)
            let values = (0..<count).map { _ in Self.randomPayload(&random) }
            let compact = RowWriter.encode(values), wide = RowWriter.encode(values, compact: false)
            widths.insert(Self.header(compact).width)
            #expect(compact.count <= wide.count)
            compact.withUnsafeBytes { Self.expectValues(RowView(bytes: $0), values) }
            wide.withUnsafeBytes { Self.expectValues(RowView(bytes: $0), values) }
            let variable = values.map(RowWriter.hasTail)
            // Compacting the 8-byte row gives the compact row; the compact row is as narrow as it gets.
            let recompacted = wide.withUnsafeBytes {
                RowWriter.compacted(RowView(bytes: $0), isVariableWidth: { variable[$0] })
            }
            if Self.header(compact).width < 8 { #expect(recompacted == compact) } else { #expect(recompacted == nil) }
            #expect(compact.withUnsafeBytes {
                RowWriter.compacted(RowView(bytes: $0), isVariableWidth: { variable[$0] })
            } == nil)
        }
        #expect(widths == Set(1...8))
    }

    @Test func aDamagedHeaderReadsAsNoColumns() {
        var row = RowWriter.encode([.int(7), .string("abc")])
        row[1] |= 0x1F  // a count far beyond the row's bytes
        row.withUnsafeBytes {
            let view = RowView(bytes: $0)
            #expect(view.columnCount == 0)
            #expect(view.isNull(0) && view.slot(0) == 0 && view.tail(1).isEmpty)
        }
    }

    @Test func slotsClaimedPastTheRowsBytesReadAsZeroAndEmpty() {
        var row = RowWriter.encode([.int(7), .string("abc")])
        #expect(Self.header(row).width == 1)
        row[1] &= 0x1F  // width 8: the claimed slots run past the row's 8 bytes
        row.withUnsafeBytes {
            let view = RowView(bytes: $0)
            #expect(view.columnCount == 0)
            #expect(view.slot(0) == 0 && view.slot(1) == 0 && view.tail(1).isEmpty && view.string(1) == "")
        }
    }

    @Test func textsOfEveryShortLengthReadBackWhole() {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyzé€𝄞")
        for length in 0...24 {
            let text = String((0..<length).map { alphabet[($0 * 7) % alphabet.count] })
            let row = RowWriter.encode([.int(1), .string(text), .int(2)])
            row.withUnsafeBytes {
                let view = RowView(bytes: $0)
                #expect(view.string(1) == text, "\(text.utf8.count) bytes")
                #expect(view.string(1).utf8.elementsEqual(text.utf8))
                #expect(view.int(0) == 1 && view.int(2) == 2)
            }
        }
    }

    // MARK: - The upgrade of files of the previous layout

    /// A file written by this build, then every row written again with 8-byte slots and the
    /// catalog set back to format 5: the layout of the files earlier versions wrote.
    private func formatFiveFile(_ name: String) throws -> URL {
        let url = folder.file(name)
        try onOtherThread {
            let realm = try Realm(configuration: .init(fileURL: url, objectTypes: F2Fixture.types()))
            try F2Fixture.populate(realm)
        }
        let environment = try Environment(path: url.path, readOnly: false, initialMapSize: 1 << 24,
                                          mapSizeLimit: 1 << 30)
        let txn = try environment.beginWrite()
        let meta = try #require(try txn.database(named: "meta", create: false))
        var catalog = try FileState.readCatalog(txn, meta: meta, path: url.path)
        for stored in catalog.classes {
            let rows = try #require(Table.existingRows(of: stored.name, in: txn))
            let variable = ColumnKind.of(stored).map { $0 == .variable }
            var keys = [UInt64]()
            let cursor = try #require(txn.existingCursor(rows))
            var entry = cursor.first()
            while let (key, _) = entry { keys.append(Cursor.integerKey(key)); entry = cursor.next() }
            for key in keys {
                let bytes = try #require(txn.get(rows, integerKey: key))
                let row = RowView(bytes: bytes)
                let values = (0..<row.columnCount).map {
                    RowWriter.rawPayload(row, $0, variableWidth: $0 < variable.count && variable[$0])
                }
                try RowWriter.encode(values, compact: false).withUnsafeBytes {
                    try txn.put(rows, integerKey: key, value: $0)
                }
            }
            // Primary-key entries with 8-byte values.
            guard let index = try txn.database(named: Table.primaryKeysName(stored.name), create: false) else { continue }
            let entries = try #require(txn.existingCursor(index)).entries(withPrefix: [])
                .map { (Array($0.key), PrimaryKeyEncoding.objectKey($0.value)) }
            for (key, objectKey) in entries {
                var value = objectKey
                _ = try key.withUnsafeBytes { k in try withUnsafeBytes(of: &value) { try txn.put(index, key: k, value: $0) } }
            }
        }
        catalog.format = 5
        try FileState.writeCatalog(catalog, txn: txn, meta: meta)
        try txn.commit()
        return url
    }

    @Test func aFormatFiveFileReadsAsItIsReadOnlyAndGetsCompactRowsOnItsFirstWritableOpen() throws {
        let expected = try onOtherThread {
            let fresh = try Realm(configuration: .init(fileURL: self.folder.file("fresh.realm"), objectTypes: F2Fixture.types()))
            try F2Fixture.populate(fresh)
            let census = LayoutCensus(fresh)
            #expect(census.rows >= F2Fixture.ownerCount + F2Fixture.dogCount, "\(census)")
            #expect(census.narrowRows > 0 && census.widerThanNeeded == 0, "\(census)")
            #expect(census.primaryKeyEntries > 0 && census.widePrimaryKeyEntries == 0, "\(census)")
            return F2Fixture.describe(fresh)
        }
        let url = try formatFiveFile("five.realm")
        try onOtherThread {
            var readOnly = Realm.Configuration(fileURL: url, objectTypes: F2Fixture.types())
            readOnly.readOnly = true
            let realm = try Realm(configuration: readOnly)
            #expect(realm.core.file.catalog.format == 5)
            let census = LayoutCensus(realm)
            #expect(census.narrowRows == 0 && census.widerThanNeeded > 0, "\(census)")
            #expect(census.primaryKeyEntries > 0 && census.widePrimaryKeyEntries == census.primaryKeyEntries, "\(census)")
            #expect(F2Fixture.describe(realm) == expected)
            #expect(realm._consistencyProblems().isEmpty)
        }
        try onOtherThread {
            let realm = try Realm(configuration: .init(fileURL: url, objectTypes: F2Fixture.types()))
            #expect(realm.core.file.catalog.format == SchemaCatalog.formatVersion)
            let census = LayoutCensus(realm)
            #expect(census.narrowRows > 0 && census.widerThanNeeded == 0, "\(census)")
            #expect(census.primaryKeyEntries > 0 && census.widePrimaryKeyEntries == 0, "\(census)")
            #expect(F2Fixture.describe(realm) == expected)
            #expect(realm._consistencyProblems().isEmpty)
            let owners = realm.objects(F2Owner.self)
            #expect(owners.filter("age > 40").count == Array(owners).filter { $0.age > 40 }.count)
        }
        // Opened again: nothing left to upgrade, the same objects.
        try onOtherThread {
            let realm = try Realm(configuration: .init(fileURL: url, objectTypes: F2Fixture.types()))
            #expect(LayoutCensus(realm).widerThanNeeded == 0 && LayoutCensus(realm).widePrimaryKeyEntries == 0)
            #expect(F2Fixture.describe(realm) == expected)
        }
    }
}
