import Foundation
import Testing
@testable import Trellis
import TrellisTestSupport

/// The column copy stays equal to the rows through random inserts, updates and deletes that
/// cross chunk boundaries (4 objects per chunk), checked after every commit by the consistency
/// checker; aggregates and sorts read from it give the rows' answers.
@Suite struct ColumnStoreTests {
    let folder = TemporaryFolder()
    typealias Generator = SplitMix64

    func open(_ name: String, chunkShift: Int = 2) throws -> Realm {
        var configuration = ColumnQueryDifferentialTests.configuration(folder, name)
        configuration.columnChunkShift = chunkShift
        return try Realm(configuration: configuration)
    }

    /// With 4-object chunks every change rebuilds its chunk; with 32-object chunks a
    /// transaction that changes a few objects of a chunk patches it in place.
    @Test(arguments: [(21, 2), (22, 2), (23, 5), (24, 5)] as [(UInt64, Int)])
    func randomWritesKeepTheColumnCopyEqualToTheRows(seed: UInt64, chunkShift: Int) throws {
        var g = Generator(seed: seed)
        let realm = try open("writes\(seed).realm", chunkShift: chunkShift)
        var serial = 0
        for round in 0..<60 {
            try realm.write {
                let live = Array(realm.objects(ColumnSample.self))
                for _ in 0..<Int.random(in: 1...12, using: &g) {
                    switch Int.random(in: 0..<6, using: &g) {
                    case 0, 1:
                        let sample = ColumnSample()
                        sample.serial = serial
                        serial += 1
                        ColumnQueryDifferentialTests.fill(sample, &g)
                        realm.add(sample)
                    case 2:
                        if let victim = live.randomElement(using: &g), !victim.isInvalidated { realm.delete(victim) }
                    case 3:
                        // A run of neighbours: whole chunks empty and go.
                        let start = Int.random(in: 0..<max(live.count, 1), using: &g)
                        for victim in live.dropFirst(start).prefix(6) where !victim.isInvalidated { realm.delete(victim) }
                    case 4:
                        if let target = live.randomElement(using: &g), !target.isInvalidated {
                            ColumnQueryDifferentialTests.fill(target, &g)
                        }
                    default:
                        if let target = live.randomElement(using: &g), !target.isInvalidated {
                            target.name = ColumnQueryDifferentialTests.names.randomElement(using: &g) ?? ""
                            target.optName = nil
                        }
                    }
                }
                // A query inside the write sees the write (the copy is brought up to date first).
                let expected: [Int] = Array(realm.objects(ColumnSample.self)).filter { $0.int > 1 }.map(\.serial)
                #expect(Array(realm.objects(ColumnSample.self).filter("int > 1")).map(\.serial) == expected)
            }
            if round % 20 == 19 {
                try realm.write { realm.delete(realm.objects(ColumnSample.self).filter("serial < \(serial / 2)")) }
            }
            let problems = realm._consistencyProblems()
            #expect(problems.isEmpty, "round \(round): \(problems.prefix(3))")
            if !problems.isEmpty { break }
        }
        try realm.write { realm.deleteAll() }
        #expect(realm._consistencyProblems().isEmpty)
        #expect(realm.objects(ColumnSample.self).filter("int != 12345").isEmpty)
    }

    @Test func writesOfAFewObjectsPerChunkPatchItAndCompactItWhenUnusedBytesPileUp() throws {
        let realm = try open("patches.realm", chunkShift: 6)
        try realm.write {
            realm.add((0..<128).map { i in ColumnSample(value: ["serial": i, "name": "name \(i)"]) })
        }
        guard let table = realm.core.table(for: ColumnSample.self, create: false), let storage = table.columns else {
            Issue.record("no column copy")
            return
        }
        func chunkSize() -> Int { realm.core.transaction.get(storage.database, integerKey: 0)?.count ?? 0 }
        let fresh = chunkSize()
        var largest = fresh
        let renamed = Array(realm.objects(ColumnSample.self).filter("serial IN {1, 2, 3, 4, 5, 65, 66, 67, 68, 69}"))
        for round in 0..<200 {
            // Ten objects, five per chunk: too many for the delta, few enough to patch each
            // chunk. Each rename appends the new name and leaves the old one unused.
            try realm.write { for sample in renamed { sample.name = "r\(round) " + String(repeating: "x", count: round % 40) } }
            largest = max(largest, chunkSize())
        }
        #expect(realm._consistencyProblems().isEmpty)
        #expect(largest > fresh, "the chunk is patched (its unused bytes grow)")
        #expect(largest < 2 * fresh + 400, "a chunk is rebuilt once unused bytes outweigh the rest")
        #expect(realm.objects(ColumnSample.self).filter("name BEGINSWITH 'r199 '").count == 10)
        try realm.write { realm.delete(realm.objects(ColumnSample.self).filter("serial < 124")) }
        #expect(realm._consistencyProblems().isEmpty)
        #expect(realm.objects(ColumnSample.self).filter("serial >= 0").count == 4)
    }

    @Test func smallWritesGoToTheDeltaUntilItIsFoldedIntoTheChunks() throws {
        let realm = try open("delta.realm", chunkShift: 6)
        try realm.write { realm.add((0..<64).map { i in ColumnSample(value: ["serial": i, "int": i]) }) }
        guard let table = realm.core.table(for: ColumnSample.self, create: false), let storage = table.columns,
              let delta = storage.delta
        else {
            Issue.record("no column copy")
            return
        }
        func stored() -> [UInt8] { realm.core.transaction.get(storage.database, integerKey: 0).map { Array($0) } ?? [] }
        func pending() -> Int { storage.deltaCount(in: realm.core.transaction) }
        _ = delta
        let before = stored()
        let all = realm.objects(ColumnSample.self)
        for serial in 0..<10 {
            try realm.write { all.filter("serial == \(serial)").first?.int = 1000 + serial }
        }
        // A new object, past the key the chunks cover: read from its row, nothing recorded.
        try realm.write { realm.add(ColumnSample(value: ["serial": 64, "int": 2000])) }
        try realm.write { realm.delete(all.filter("serial == 63")) }
        #expect(pending() == 11, "one key per covered object the small transactions changed")
        #expect(stored() == before, "the stored chunk is not rewritten")
        #expect(all.filter("int >= 1000").count == 11)
        #expect(all.filter("serial == 63").isEmpty && all.filter("int == 63").isEmpty)
        #expect(all.sum(of: \.int) == (0..<63).reduce(0, +) - (0..<10).reduce(0, +) + (1000..<1010).reduce(0, +) + 2000)
        #expect(Array(all.sorted(byKeyPath: "int", ascending: false)).first?.serial == 64)
        #expect(realm._consistencyProblems().isEmpty)
        for serial in 10..<70 {
            try realm.write { all.filter("serial == \(serial)").first?.int = 3000 }
        }
        #expect(pending() < ColumnDelta.limit, "the delta was folded into the chunks")
        #expect(stored() != before)
        #expect(all.filter("int == 3000").count == 54)  // serials 10...62 and 64
        #expect(realm._consistencyProblems().isEmpty)
    }

    /// A small write after the core's own commit takes the delta's state from that commit
    /// (session 36): the delta stays exact when another Realm's commit, a cancelled write or a
    /// `deleteAll` comes between, and when a write flushes twice (a copy inside it).
    @Test func smallWritesAfterOtherWritesCancelsAndDeleteAllKeepTheDeltaExact() throws {
        let realm = try open("delta-after.realm", chunkShift: 6)
        let configuration = realm.configuration
        try realm.write { realm.add((0..<40).map { i in ColumnSample(value: ["serial": i, "int": i]) }) }
        let all = realm.objects(ColumnSample.self)
        func check(_ step: String) {
            let problems = realm._consistencyProblems()
            #expect(problems.isEmpty, "\(step): \(problems.prefix(3))")
            let expected = Array(all).filter { $0.int >= 1000 }.count
            #expect(all.filter("int >= 1000").count == expected, "\(step)")
        }
        for serial in 0..<3 { try realm.write { all.filter("serial == \(serial)").first?.int = 1000 } }
        check("own small writes")
        // Another Realm (another core) changes covered objects: the delta's state moves.
        try onOtherThread {
            let other = try Realm(configuration: configuration)
            let objects = other.objects(ColumnSample.self)
            for serial in 3..<6 { try other.write { objects.filter("serial == \(serial)").first?.int = 1000 } }
        }
        realm.refresh()
        try realm.write { all.filter("serial == 6").first?.int = 1000 }
        check("after another Realm's commits")
        realm.beginWrite()
        all.filter("serial == 7").first?.int = 1000
        realm.cancelWrite()
        try realm.write { all.filter("serial == 8").first?.int = 1000 }
        check("after a cancelled write")
        try realm.write {
            all.filter("serial == 9").first?.int = 1000
            try realm.writeCopy(toFile: folder.file("delta-copy.realm"))
            all.filter("serial == 10").first?.int = 1000
        }
        try realm.write { all.filter("serial == 11").first?.int = 1000 }
        check("after a write that flushed twice")
        try realm.write {
            realm.deleteAll()
            realm.add((100..<110).map { i in ColumnSample(value: ["serial": i, "int": i]) })
        }
        for serial in 100..<104 { try realm.write { all.filter("serial == \(serial)").first?.int = 1000 } }
        check("after deleteAll")
        #expect(all.filter("int >= 1000").count == 4)
    }

    @Test func aWriteThatIsCancelledLeavesTheColumnCopyAsItWas() throws {
        let realm = try open("cancel.realm")
        try realm.write { realm.add((0..<10).map { i in ColumnSample(value: ["serial": i, "int": i]) }) }
        realm.beginWrite()
        realm.add((10..<20).map { i in ColumnSample(value: ["serial": i, "int": i]) })
        realm.delete(realm.objects(ColumnSample.self).filter("serial < 5"))
        #expect(realm.objects(ColumnSample.self).filter("int >= 0").count == 15)
        realm.cancelWrite()
        #expect(realm.objects(ColumnSample.self).filter("int >= 0").count == 10)
        #expect(realm._consistencyProblems().isEmpty)
    }

    @Test func aDamagedChunkIsReportedByTheConsistencyChecker() throws {
        let realm = try open("damaged.realm")
        try realm.write { realm.add((0..<10).map { i in ColumnSample(value: ["serial": i, "int": i]) }) }
        #expect(realm._consistencyProblems().isEmpty)
        // Write a chunk that disagrees with its rows, behind the engine's back.
        let core = realm.core
        core.beginWrite()
        guard let txn = core.writeTransaction, let table = core.table(for: ColumnSample.self, create: false),
              let storage = table.columns
        else {
            Issue.record("no column copy")
            return
        }
        let builder = ChunkBuilder(slotCount: storage.slotCount, kinds: storage.kinds)
        builder.remove(0)
        let row = RowWriter.encode(table.info.storedFields.map { _ in .null })
        row.withUnsafeBytes { builder.set(1, row: RowView(bytes: $0)) }
        try storage.put(builder, number: 0, in: txn)
        try core.commitWrite()
        let problems = realm._consistencyProblems()
        #expect(problems == ["'c.ColumnSample' chunk 0 does not hold the values of its rows"])
    }

    // MARK: - Aggregates

    @Test(arguments: [31, 32, 33] as [UInt64])
    func aggregatesFromTheColumnsEqualTheRowsAnswers(seed: UInt64) throws {
        var g = Generator(seed: seed)
        let realm = try open("aggregates\(seed).realm")
        try ColumnQueryDifferentialTests.populate(realm, &g)
        let all = realm.objects(ColumnSample.self)
        for results in [all, all.filter("int > 1"), all.filter("optInt == nil"), all.filter("int == 12345"),
                        all.sorted(byKeyPath: "double")]
        {
            func both<T: Equatable>(_ read: () -> T) -> (T, T) {
                realm.core.readsColumnCopies = true
                let columns = read()
                realm.core.readsColumnCopies = false
                defer { realm.core.readsColumnCopies = true }
                return (columns, read())
            }
            func same<T: Equatable>(_ pair: (T, T), _ what: String) {
                #expect(pair.0 == pair.1, "\(what) over \(results.count) objects")
            }
            func sameDouble(_ pair: (Double?, Double?), _ what: String) {
                let equal = pair.0 == pair.1 || (pair.0?.isNaN == true && pair.1?.isNaN == true)
                #expect(equal, "\(what): \(String(describing: pair.0)) vs \(String(describing: pair.1))")
                if let a = pair.0, let b = pair.1, a == 0, b == 0 { #expect(a.sign == b.sign, "\(what): sign of zero") }
            }
            same(both { results.sum(of: \.int) }, "sum int")
            same(both { results.sum(of: \.optInt) }, "sum optInt")
            same(both { results.min(of: \.optInt) }, "min optInt")
            same(both { results.max(of: \.small) }, "max small")
            same(both { results.min(of: \.date) }, "min date")
            same(both { results.max(of: \.optDate) }, "max optDate")
            sameDouble(both { results.average(ofProperty: "int") }, "average int")
            sameDouble(both { results.average(ofProperty: "optInt") }, "average optInt")
            sameDouble(both { results.sum(of: \.double) }, "sum double")
            sameDouble(both { results.min(of: \.double) }, "min double")
            sameDouble(both { results.max(of: \.double) }, "max double")
            sameDouble(both { results.average(ofProperty: "double") }, "average double")
            sameDouble(both { results.sum(ofProperty: "optFloat") }, "sum optFloat")
            sameDouble(both { results.min(ofProperty: "optFloat") }, "min optFloat")
        }
    }

    @Test func aggregatesOfAPlainClassFollowRealm() throws {
        let realm = try open("plain.realm")
        let all = realm.objects(ColumnSample.self)
        #expect(all.sum(of: \.int) == 0)
        #expect(all.min(of: \.int) == nil)
        #expect(all.average(of: \.double) == nil)
        try realm.write {
            realm.add((1...10).map { i in ColumnSample(value: ["serial": i, "int": i, "double": Double(i) / 2]) })
        }
        #expect(all.sum(of: \.int) == 55)
        #expect(all.min(of: \.int) == 1)
        #expect(all.max(of: \.int) == 10)
        #expect(all.average(ofProperty: "int") as Double? == 5.5)
        #expect(all.sum(of: \.double) == 27.5)
        #expect(all.filter("int > 5").sum(of: \.int) == 40)
        #expect(all.filter("int > 5").average(ofProperty: "double") as Double? == 4)
    }

    // MARK: - Sorting

    @Test(arguments: [41, 42] as [UInt64])
    func sortsFromTheColumnsEqualTheRowsOrder(seed: UInt64) throws {
        var g = Generator(seed: seed)
        let realm = try open("sorts\(seed).realm")
        try ColumnQueryDifferentialTests.populate(realm, &g)
        let all = realm.objects(ColumnSample.self)
        let sorts: [[Trellis.SortDescriptor]] = [
            [Trellis.SortDescriptor(keyPath: "int")], [Trellis.SortDescriptor(keyPath: "int", ascending: false)],
            [Trellis.SortDescriptor(keyPath: "optInt")], [Trellis.SortDescriptor(keyPath: "optInt", ascending: false)],
            [Trellis.SortDescriptor(keyPath: "flag"), Trellis.SortDescriptor(keyPath: "small", ascending: false)],
            [Trellis.SortDescriptor(keyPath: "optFlag", ascending: false), Trellis.SortDescriptor(keyPath: "optDate")],
            [Trellis.SortDescriptor(keyPath: "date", ascending: false), Trellis.SortDescriptor(keyPath: "serial", ascending: false)],
            [Trellis.SortDescriptor(keyPath: "optFloat")], [Trellis.SortDescriptor(keyPath: "double")],
            [Trellis.SortDescriptor(keyPath: "small"), Trellis.SortDescriptor(keyPath: "name")],
        ]
        for descriptors in sorts {
            for results in [all, all.filter("int >= 0")] {
                realm.core.readsColumnCopies = true
                let columns = Array(results.sorted(by: descriptors)).map(\.serial)
                realm.core.readsColumnCopies = false
                let rows = Array(results.sorted(by: descriptors)).map(\.serial)
                realm.core.readsColumnCopies = true
                #expect(columns == rows, "\(descriptors)")
            }
        }
        // Without NaN (which has no order), the sort is the stable Swift sort of the values.
        let finite = all.filter("optFloat != nil").sorted(byKeyPath: "small", ascending: false)
        let expected = Array(all.filter("optFloat != nil")).sorted { $0.small > $1.small }.map(\.serial)
        #expect(Array(finite).map(\.serial) == expected)
    }
}
