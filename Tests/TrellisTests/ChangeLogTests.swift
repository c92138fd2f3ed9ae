import Foundation
import Testing
@testable import Trellis

/// The change log is bounded by bytes and by age, and keeps what this process's observers need.
@Suite struct ChangeLogTests {
    let folder = TemporaryFolder()

    func fastConfiguration() -> Realm.Configuration {
        var configuration = folder.configuration([Dog.self])
        configuration.syncOnCommit = false
        return configuration
    }

    /// The records' total size as LMDB stores them (every entry but the header).
    func storedRecordBytes(_ realm: Realm) throws -> (bytes: Int, records: Int) {
        let database = try #require(realm.core.file.changes)
        let cursor = try #require(realm.core.transaction.existingCursor(database))
        var bytes = 0, records = 0
        var entry = withUnsafeBytes(of: UInt64(1)) { cursor.seek(atLeast: $0) }
        while let (_, value) = entry {
            bytes += value.count
            records += 1
            entry = cursor.next()
        }
        return (bytes, records)
    }

    @Test func manyLargeCommitsKeepTheLogUnderItsByteBudget() throws {
        let realm = try Realm(configuration: fastConfiguration())
        realm.core.file.changeLogLimits = ChangeLogLimits(byteBudget: 64 << 10)
        // Each commit modifies many objects: records of about 4 KiB.
        try realm.write { for index in 0..<200 { realm.add(Dog(value: ["name": "d\(index)"])) } }
        let dogs = realm.objects(Dog.self)
        for round in 0..<300 {
            try realm.write { for dog in dogs { dog.age = round } }
        }
        let stored = try storedRecordBytes(realm)
        #expect(stored.bytes <= 64 << 10 + 16 << 10, "\(stored.bytes) bytes in \(stored.records) records")
        let header = try #require(ChangeLogHeader.read(realm.core.transaction, meta: realm.core.file.meta))
        #expect(header.totalBytes == stored.bytes)
    }

    /// A write after the core's own commit takes the log's header from that commit (session
    /// 36); commits of another Realm and cancelled or failed writes between keep it counting
    /// every record.
    @Test func theHeaderCountsEveryRecordThroughOtherRealmsCommitsAndCancelledWrites() throws {
        let configuration = fastConfiguration()
        let realm = try Realm(configuration: configuration)
        try realm.write { realm.add(Dog(value: ["name": "a"])) }
        let dog = try #require(realm.objects(Dog.self).first)
        for round in 0..<20 {
            try realm.write { dog.age = round }
            if round % 5 == 1 {
                try onOtherThread {
                    let other = try Realm(configuration: configuration)
                    try other.write { other.add(Dog(value: ["name": "other \(round)"])) }
                }
                realm.refresh()
            }
            if round % 7 == 3 {
                realm.beginWrite()
                dog.age = -1
                realm.cancelWrite()
            }
            let stored = try storedRecordBytes(realm)
            let header = try #require(ChangeLogHeader.read(realm.core.transaction, meta: realm.core.file.meta))
            #expect(header.totalBytes == stored.bytes, "round \(round)")
        }
    }

    @Test func tinyCommitsOnAnEmptyFileLeaveItSmall() throws {
        let realm = try Realm(configuration: fastConfiguration())
        try realm.write { realm.add(Dog(value: ["name": "only"])) }
        let dog = try #require(realm.objects(Dog.self).first)
        for round in 0..<5000 { try realm.write { dog.age = round } }
        let size = try FileManager.default.attributesOfItem(atPath: folder.file().path)[.size] as? Int ?? 0
        // 5,000 records of ~30 bytes fit the default budget whole: well under a megabyte.
        #expect(size < 1 << 20, "file is \(size) bytes")
    }

    @Test func recordsOlderThanTheAgeBoundAreDropped() throws {
        let realm = try Realm(configuration: fastConfiguration())
        realm.core.file.changeLogLimits = ChangeLogLimits(maximumAge: 0)
        try realm.write { realm.add(Dog(value: ["name": "a"])) }
        let dog = try #require(realm.objects(Dog.self).first)
        for round in 0..<10 { try realm.write { dog.age = round } }
        // Every commit notes a checkpoint only a minute after the last: with an age bound of 0,
        // the checkpoint of the first commit makes everything before it old; force a second.
        try realm.write {
            var header = try #require(ChangeLogHeader.read(realm.core.transaction, meta: realm.core.file.meta))
            header.checkpoints = header.checkpoints.map { (version: $0.version, time: $0.time - 3600) }
            header.checkpoints.append((version: realm.core.transaction.version - 1, time: Date().timeIntervalSince1970 - 1))
            try header.write(realm.core.transaction, meta: realm.core.file.meta)
            // Written behind the core's back: its copy of the header its last commit stored
            // (which a write based on that commit uses instead of reading `meta`) is stale.
            realm.core.committedLogHeader = nil
            dog.age = 100
        }
        let stored = try storedRecordBytes(realm)
        #expect(stored.records <= 2, "\(stored.records) records kept")
    }

    @Test func anObserverOfThisProcessKeepsTheRecordsItNeedsAndGetsExactChanges() throws {
        let realm = try Realm(configuration: fastConfiguration())
        realm.core.file.changeLogLimits = ChangeLogLimits(byteBudget: 8 << 10, hardByteLimit: 8 << 20)
        try realm.write { realm.add(Dog(value: ["name": "first"])) }
        let log = LockedBox<[String]>([])
        let token = realm.objects(Dog.self).observe { change in
            if case .update(_, let deletions, let insertions, let modifications) = change {
                log.mutate { $0.append("d\(deletions) i\(insertions.count) m\(modifications)") }
            }
        }
        realm.refresh()
        let configuration = realm.configuration
        try onOtherThread {
            let other = try Realm(configuration: configuration)
            for index in 0..<2000 { try other.write { other.add(Dog(value: ["name": "d\(index)"])) } }
        }
        realm.refresh()
        // Exact: 2,000 insertions and the first object untouched (no fallback marking it modified).
        #expect(log.get() == ["d[] i2000 m[]"])
        token.invalidate()
    }

    @Test func theHeaderIsKeptInMetaAndTheLogHoldsOnlyRecords() throws {
        let realm = try Realm(configuration: fastConfiguration())
        for index in 0..<3 { try realm.write { realm.add(Dog(value: ["name": "d\(index)"])) } }
        let changes = try #require(realm.core.file.changes)
        #expect(realm.core.transaction.get(changes, integerKey: 0) == nil)
        let header = try #require(ChangeLogHeader.read(realm.core.transaction, meta: realm.core.file.meta))
        let stored = try storedRecordBytes(realm)
        #expect(header.totalBytes == stored.bytes)
    }

    @Test func aHeaderAnOlderFileKeepsUnderKeyZeroIsMovedToMeta() throws {
        let realm = try Realm(configuration: fastConfiguration())
        try realm.write { realm.add(Dog(value: ["name": "a"])) }
        let changes = try #require(realm.core.file.changes)
        let meta = realm.core.file.meta
        // The file as a Trellis before session 33 leaves it: the header under key 0 of `changes`
        // (u64 total bytes, u64 oldest version, u32 checkpoint count, (u64 version, f64 time)*),
        // here with 1,000 bytes more than the records hold, to tell a moved header from a measured one.
        try realm.write {
            let txn = realm.core.transaction
            let current = try #require(ChangeLogHeader.read(txn, meta: meta))
            var legacy = [UInt8]()
            func put<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { legacy += $0 } }
            put(UInt64(current.totalBytes + 1000))
            put(UInt64(current.oldestVersion ?? 0))
            put(UInt32(current.checkpoints.count))
            for checkpoint in current.checkpoints {
                put(UInt64(checkpoint.version))
                put(checkpoint.time.bitPattern)
            }
            try legacy.withUnsafeBytes { try txn.put(changes, integerKey: 0, value: $0) }
            try ChangeLogHeader.metaKey.withUnsafeBytes { _ = try txn.delete(meta, key: $0) }
        }
        #expect(ChangeLogHeader.read(realm.core.transaction, meta: meta) == nil)
        try realm.write { realm.add(Dog(value: ["name": "b"])) }
        #expect(realm.core.transaction.get(changes, integerKey: 0) == nil)
        let moved = try #require(ChangeLogHeader.read(realm.core.transaction, meta: meta))
        let stored = try storedRecordBytes(realm)
        #expect(moved.totalBytes == stored.bytes + 1000)
    }
}
