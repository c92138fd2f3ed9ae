import Foundation
@testable import Trellis

/// Format 6's compact layout in a Realm's file: the slot widths of every row (``RowFormat``) and
/// the value lengths of every primary-key entry. Counts rows with slots narrower than 8 bytes,
/// rows and entries wider than their values need (what the format-6 writer or upgrade would
/// have written narrower).
struct LayoutCensus: CustomStringConvertible {
    var rows = 0
    var narrowRows = 0
    var widerThanNeeded = 0
    var widths: [Int: Int] = [:]
    var primaryKeyEntries = 0
    var widePrimaryKeyEntries = 0

    init(_ realm: Realm) {
        let txn = realm.core.transaction
        for stored in realm.core.file.catalog.classes {
            if let database = Table.existingRows(of: stored.name, in: txn), let cursor = txn.existingCursor(database) {
                let variable = ColumnKind.of(stored).map { $0 == .variable }
                var entry = cursor.first()
                while let (_, bytes) = entry {
                    let row = RowView(bytes: bytes)
                    rows += 1
                    widths[row.layout.width, default: 0] += 1
                    if row.layout.width < 8 { narrowRows += 1 }
                    if RowWriter.compacted(row, isVariableWidth: { $0 < variable.count && variable[$0] }) != nil {
                        widerThanNeeded += 1
                    }
                    entry = cursor.next()
                }
            }
            if let index = try? txn.database(named: Table.primaryKeysName(stored.name), create: false),
               let cursor = txn.existingCursor(index)
            {
                var entry = cursor.first()
                while let (_, value) = entry {
                    primaryKeyEntries += 1
                    if value.count != PrimaryKeyEncoding.valueByteCount(PrimaryKeyEncoding.objectKey(value)) {
                        widePrimaryKeyEntries += 1
                    }
                    entry = cursor.next()
                }
            }
        }
    }

    var description: String {
        "\(rows) rows, \(narrowRows) narrow, \(widerThanNeeded) wider than needed, widths "
            + "\(widths.sorted { $0.key < $1.key }); \(primaryKeyEntries) primary-key entries, "
            + "\(widePrimaryKeyEntries) wide"
    }
}
