import Foundation
import Testing
@testable import Trellis
import TrellisTestSupport

// `@count` in queries reads stored counts (a list's header, a set's or map's stored count, the
// backlink counts) instead of visiting the elements (issue 18). Checked against counts taken in
// Swift on random data with duplicates, nulls and deleted targets (fixed seed).

final class CountTag: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted(originProperty: "tags") var listed: LinkingObjects<CountItem>
    @Persisted(originProperty: "tagSet") var setMembers: LinkingObjects<CountItem>
    @Persisted(originProperty: "mainTag") var mains: LinkingObjects<CountItem>
}

final class CountItem: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var mainTag: CountTag?
    @Persisted var tags: List<CountTag>
    @Persisted var tagSet: MutableSet<CountTag>
    @Persisted var tagMap: Map<String, CountTag?>
    @Persisted var numbers: List<Int?>
    @Persisted var numberSet: MutableSet<Int>
    @Persisted var labels: Map<String, String?>
}

@Suite struct CountQueryTests {
    let folder = TemporaryFolder()

    @Test func countsInQueriesAgreeWithCountsTakenInSwift() throws {
        let realm = try Realm(configuration: folder.configuration([CountTag.self, CountItem.self]))
        var random = SplitMix64(seed: 0x5EED_C0DE)
        try realm.write {
            let tags = (0..<30).map { realm.create(CountTag.self, value: ["id": $0]) }
            for id in 0..<120 {
                let item = realm.create(CountItem.self, value: ["id": id])
                if random.next(6) > 0 { item.mainTag = tags[random.next(30)] }
                for _ in 0..<random.next(6) { item.tags.append(tags[random.next(30)]) }  // duplicates too
                for _ in 0..<random.next(5) { item.tagSet.insert(tags[random.next(30)]) }
                for n in 0..<random.next(4) { item.tagMap["k\(n)"] = random.next(3) == 0 ? nil : tags[random.next(30)] }
                for _ in 0..<random.next(5) { item.numbers.append(random.next(3) == 0 ? nil : random.next(10)) }
                for _ in 0..<random.next(5) { item.numberSet.insert(random.next(8)) }
                for n in 0..<random.next(4) { item.labels["l\(n)"] = random.next(2) == 0 ? nil : "v\(n)" }
            }
            // Deleted targets leave lists, sets and backlinks; a map keeps the key with nil.
            for id in [3, 7, 11, 19] {
                if let tag = realm.object(ofType: CountTag.self, forPrimaryKey: id) { realm.delete(tag) }
            }
        }
        let items = Array(realm.objects(CountItem.self))
        let tags = Array(realm.objects(CountTag.self))
        for n in 0..<7 {
            let itemCases: [(String, (CountItem) -> Int)] = [
                ("tags.@count", { $0.tags.count }), ("tagSet.@count", { $0.tagSet.count }),
                ("numbers.@count", { $0.numbers.count }), ("numberSet.@count", { $0.numberSet.count }),
                ("labels.@count", { $0.labels.count }), ("labels.@size", { $0.labels.count }),
            ]
            for (path, count) in itemCases {
                let found = Set(realm.objects(CountItem.self).filter("\(path) == %@", n).map(\.id))
                #expect(found == Set(items.filter { count($0) == n }.map(\.id)), "\(path) == \(n)")
            }
            let tagCases: [(String, (CountTag) -> Int)] = [
                ("listed.@count", { tag in items.reduce(0) { $0 + $1.tags.filter { $0.id == tag.id }.count } }),
                ("setMembers.@count", { tag in items.filter { $0.tagSet.contains { $0.id == tag.id } }.count }),
                ("mains.@count", { tag in items.filter { $0.mainTag?.id == tag.id }.count }),
                ("@links.@count", { tag in
                    items.reduce(0) { total, item in
                        total + item.tags.filter { $0.id == tag.id }.count
                            + (item.tagSet.contains { $0.id == tag.id } ? 1 : 0)
                            + (item.mainTag?.id == tag.id ? 1 : 0)
                            + item.tagMap.values.filter { $0?.id == tag.id }.count
                    }
                }),
            ]
            for (path, count) in tagCases {
                let found = Set(realm.objects(CountTag.self).filter("\(path) == %@", n).map(\.id))
                #expect(found == Set(tags.filter { count($0) == n }.map(\.id)), "\(path) == \(n)")
                // The LinkingObjects property agrees with the query.
                if path == "listed.@count" {
                    for tag in tags { #expect(tag.listed.count == count(tag)) }
                }
            }
        }
    }
}

private extension SplitMix64 {
    mutating func next(_ bound: Int) -> Int { Int.random(in: 0..<bound, using: &self) }
}
