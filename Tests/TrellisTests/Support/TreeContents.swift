import Testing
@testable import Trellis

/// Every entry of `dbi`, in the order a cursor walks them (either storage engine).
func treeEntries(_ dbi: DatabaseHandle, _ txn: Transaction) throws -> [([UInt8], [UInt8])] {
    let cursor = try txn.cursor(dbi)
    var out: [([UInt8], [UInt8])] = []
    var entry = cursor.first()
    while let (key, value) = entry {
        out.append((Array(key), Array(value)))
        entry = cursor.next()
    }
    return out
}

/// Expects `dbi` to hold exactly `model`: a cursor walks its entries in `ordered` key order, and
/// `get` finds each key's value.
func expectTree(_ dbi: DatabaseHandle, holds model: [[UInt8]: [UInt8]], in txn: Transaction,
                ordered: ([UInt8], [UInt8]) -> Bool, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let expected = model.sorted { ordered($0.key, $1.key) }
    let walked = try treeEntries(dbi, txn)
    #expect(walked.map(\.0) == expected.map(\.key), sourceLocation: sourceLocation)
    #expect(walked.map(\.1) == expected.map(\.value), sourceLocation: sourceLocation)
    for (key, value) in model {
        let found = key.withUnsafeBytes { txn.get(dbi, key: $0).map(Array.init) }
        #expect(found == value, "key \(key)", sourceLocation: sourceLocation)
    }
}
