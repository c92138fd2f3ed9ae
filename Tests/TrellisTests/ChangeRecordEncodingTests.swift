import Foundation
import Testing
@testable import Trellis
import TrellisTestSupport

/// A commit's change record and the object-key counter's key keep their stored forms: files of
/// earlier versions hold them, and other processes read them.
@Suite struct ChangeRecordEncodingTests {
    /// The stored bytes of a record, as `ChangeRecordEncoding` documents them.
    private func stored(_ recorder: ChangeRecorder) -> [UInt8] {
        ChangeRecordEncoding.withEncoded(recorder) { Array($0) }
    }

    @Test func aRecordIsStoredInItsDocumentedLayout() {
        var recorder = ChangeRecorder()
        recorder.modified(3, 7, column: 2)
        recorder.modified(3, 7, column: 0)
        recorder.deleted(3, 5)
        recorder.inserted(3, 40)
        recorder.inserted(3, 41)
        recorder.inserted(1, 9)
        var expected = [UInt8]()
        func put<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { expected += $0 } }
        // Table 1: one range, no deletions, no modifications.
        put(UInt32(1)); put(UInt32(1)); put(UInt64(9)); put(UInt64(9)); put(UInt32(0)); put(UInt32(0))
        // Table 3: the range 40...41, key 5 deleted, key 7 modified in columns 0 and 2.
        put(UInt32(3)); put(UInt32(1)); put(UInt64(40)); put(UInt64(41))
        put(UInt32(1)); put(UInt64(5))
        put(UInt32(1)); put(UInt64(7)); put(UInt16(2)); put(Int32(0)); put(Int32(2))
        #expect(stored(recorder) == expected)
    }

    @Test(arguments: [UInt64(1), 37, 2026])
    func randomRecordsReadBackAsTheChangesMade(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        for _ in 0..<200 {
            var recorder = ChangeRecorder()
            var expected = ChangeSet()
            // Keys 1...50 exist before the transaction; new ones are handed out from 51 up.
            var nextKey = [UInt32: ObjectKey]()
            var deletedOld = [UInt32: Set<ObjectKey>]()
            for _ in 0..<random.below(40) {
                let table = UInt32(1 + random.below(3))
                var changes = expected.tables[table] ?? ChangeSet.TableChanges()
                switch random.below(4) {
                case 0:
                    let key = nextKey[table] ?? 51
                    nextKey[table] = key + 1
                    recorder.inserted(table, key)
                    changes.insertions.insert(key)
                case 1:
                    let candidates = changes.insertions.sorted()
                    guard !candidates.isEmpty else { continue }
                    let inserted = candidates[random.below(candidates.count)]
                    recorder.deleted(table, inserted)
                    changes.insertions.remove(inserted)
                case 2:
                    let key = ObjectKey(1 + random.below(50))
                    guard !deletedOld[table, default: []].contains(key) else { continue }
                    recorder.deleted(table, key)
                    deletedOld[table, default: []].insert(key)
                    changes.deletions.insert(key)
                    changes.modifications[key] = nil
                default:
                    let key = ObjectKey(1 + random.below(50))
                    guard !deletedOld[table, default: []].contains(key) else { continue }
                    let column = random.below(6)
                    recorder.modified(table, key, column: column)
                    changes.modifications[key, default: []].insert(column)
                }
                expected.tables[table] = changes
            }
            if recorder.isEmpty { continue }
            let decoded = try #require(ChangeRecordEncoding.withEncoded(recorder) { ChangeRecordEncoding.decode($0) })
            #expect(decoded == expected, "seed \(seed)")
        }
    }

    @Test(arguments: [UInt32(0), 1, 9, 10, 99, 100, 12_345, 1_000_000_000, UInt32.max])
    func aTablesKeyCounterIsStoredUnderSeqAndItsNumber(tableId: UInt32) {
        let key = RealmCore.withCounterKey(tableId) { Array($0) }
        #expect(key == Array("seq.\(tableId)".utf8))
    }
}
