import Dispatch
import Foundation
import Testing
@testable import Trellis

/// Realm's SectionedResultsTests model: sectioned by the first letter of `stringCol`.
class LetteredItem: Object {
    @Persisted var stringCol = ""
    @Persisted var boolCol = false
    @Persisted var intCol = 0
    var firstLetter: String { stringCol.first.map { String($0) } ?? "" }
}

/// Realm's notifications of sectioned results and of one section (its SectionedResultsTests:
/// testObserveOnQueue, testObservationOnSection, testObserveWithKeyPathFilter), with Realm's
/// objects: banana, box, apple, chalk, sectioned by first letter.
@Suite struct SectionedResultsRealmNotificationTests {
    let folder = TemporaryFolder()

    func fruits() throws -> Realm {
        let realm = try Realm(configuration: folder.configuration([LetteredItem.self]))
        try realm.write {
            for name in ["banana", "box", "apple", "chalk"] { realm.add(LetteredItem(value: ["stringCol": name])) }
        }
        return realm
    }

    static func describe<C: RealmSectionedResult>(_ change: SectionedResultsChange<C>) -> String {
        switch change {
        case .initial(let collection): return "initial \(collection.count)"
        case .update(let collection, let deletions, let insertions, let modifications, let inserted, let deleted):
            let paths = { (paths: [IndexPath]) in paths.map { "\($0.section).\($0.item)" }.joined(separator: ",") }
            return "count \(collection.count) d[\(paths(deletions))] i[\(paths(insertions))] m[\(paths(modifications))] "
                + "+\(Array(inserted)) -\(Array(deleted))"
        }
    }

    @Test func sectionChangesOnAQueueAreRealmsIndexPathsForEachCommit() throws {
        let realm = try fruits()
        let results = realm.objects(LetteredItem.self)
        let sections = results.sectioned(by: \.firstLetter, ascending: true)
        let log = LockedBox<[String]>([])
        let delivered = DispatchSemaphore(value: 0)
        let queue = DispatchQueue(label: "sections")
        let token = sections.observe(keyPaths: [\.stringCol], on: queue) { change in
            log.mutate { $0.append(Self.describe(change)) }
            delivered.signal()
        }
        #expect(delivered.wait(timeout: .now() + 10) == .success)
        try realm.write {
            realm.delete([results[2], results[0]])  // apple, banana
            results[0].stringCol = "bog"  // box
            realm.add(LetteredItem(value: ["stringCol": "zebra"]))
        }
        #expect(delivered.wait(timeout: .now() + 10) == .success)
        try realm.write {
            results.filter("stringCol == 'bog'")[0].stringCol = "bogg"
            results.filter("stringCol == 'chalk'")[0].intCol = 1  // not an observed key path
        }
        #expect(delivered.wait(timeout: .now() + 10) == .success)
        token.invalidate()
        #expect(log.get() == [
            "initial 3",
            // Realm: a modified row whose index path changed is a deletion and an insertion;
            // the rows of a deleted section are not listed.
            "count 3 d[1.0,1.1] i[0.0,2.0] m[] +[2] -[0]",
            "count 3 d[] i[] m[0.0] +[] -[]",
        ])
    }

    @Test func observingOneSectionReportsOnlyItsOwnChangesAsRealmDoes() throws {
        let realm = try fruits()
        let results = realm.objects(LetteredItem.self)
        let sections = results.sectioned(by: \.firstLetter, ascending: true)
        let a = LockedBox<[String]>([]), b = LockedBox<[String]>([])
        let tokenA = sections[0].observe(keyPaths: [\.stringCol]) { change in a.mutate { $0.append(Self.describe(change)) } }
        let tokenB = sections[1].observe(keyPaths: [\.stringCol]) { change in b.mutate { $0.append(Self.describe(change)) } }
        realm.refresh()
        try realm.write { realm.delete([results[2], results[0]]) }  // apple, banana
        realm.refresh()
        try realm.write {
            results.filter("stringCol == 'box'")[0].stringCol = "bog"
            realm.add(LetteredItem(value: ["stringCol": "bag"]))
        }
        realm.refresh()
        try realm.write { realm.add(LetteredItem(value: ["stringCol": "app"])) }
        realm.refresh()
        tokenA.invalidate()
        tokenB.invalidate()
        #expect(a.get() == ["initial 1", "count 0 d[] i[] m[] +[] -[0]", "count 1 d[] i[0.0] m[] +[0] -[]"])
        #expect(b.get() == ["initial 2", "count 1 d[1.0] i[] m[] +[] -[]", "count 2 d[0.0] i[0.0,0.1] m[] +[] -[]"])
    }

    @Test func observingSectionsWithAKeyPathFiresWhenRowsChangeSectionAndForTheKeyPathOnly() throws {
        let realm = try fruits()
        let results = realm.objects(LetteredItem.self)
        let sections = results.sectioned(by: \.firstLetter, ascending: true)
        let count = LockedBox(0)
        let token = sections.observe(keyPaths: [\.boolCol]) { _ in count.mutate { $0 += 1 } }
        realm.refresh()
        let apple = results.where { $0.stringCol.starts(with: "a") }[0]
        try realm.write { apple.stringCol = "box" }  // changes section
        realm.refresh()
        try realm.write { apple.boolCol = true }  // the observed property
        realm.refresh()
        #expect(count.get() == 3)
        try realm.write { apple.stringCol = "box" }  // same section, not observed
        realm.refresh()
        try realm.write { apple.intCol = 4 }
        realm.refresh()
        #expect(count.get() == 3)
        token.invalidate()
    }
}
