import Foundation
import Testing
import Trellis

/// A small object, as many apps store by the million.
final class SpaceItem: Object {
    @Persisted var number = 0
    @Persisted var name = ""
    @Persisted var score = 0.0
}

/// Space is reused: writing a set of small objects, deleting them all and writing them again,
/// three times, leaves a file within 1.5 times the size of one round. Deleted pages go back
/// to LMDB's free list and the next round takes them from there.
///
/// LMDB hands out the pages a commit freed only from the second commit after it (a reader may
/// still be at the version before it), so a round written in one single transaction right
/// after the delete cannot reuse them and needs up to twice the space; written in chunks, as
/// here, only the first chunk can not.
///
/// `TRELLIS_SPACE_OBJECTS` sets the round's size: 1,000,000 for the full test
/// (`TRELLIS_SPACE_OBJECTS=1000000 swift test --filter SpaceTests`); CI writes 20,000.
@Suite struct SpaceTests {
    let folder = TemporaryFolder()

    /// Writes `count` objects in 20 transactions (a bulk import in chunks).
    func write(_ count: Int, into realm: Realm) throws {
        let batch = max(1, count / 20)
        for start in stride(from: 0, to: count, by: batch) {
            try realm.write {
                for number in start..<min(start + batch, count) {
                    let item = SpaceItem()
                    item.number = number
                    item.name = "item \(number)"
                    item.score = Double(number) / 7
                    realm.add(item)
                }
            }
        }
    }

    func size() throws -> Int {
        try FileManager.default.attributesOfItem(atPath: folder.file().path)[.size] as? Int ?? 0
    }

    @Test func writingDeletingAndWritingAgainThreeTimesStaysWithinOneAndAHalfRounds() throws {
        let count = Int(ProcessInfo.processInfo.environment["TRELLIS_SPACE_OBJECTS"] ?? "") ?? 20_000
        let realm = try Realm(configuration: folder.configuration([SpaceItem.self]))
        try write(count, into: realm)
        let oneRound = try size()
        var sizes = [oneRound]
        for _ in 0..<3 {
            try realm.write { realm.delete(realm.objects(SpaceItem.self)) }
            try write(count, into: realm)
            sizes.append(try size())
        }
        #expect(realm.objects(SpaceItem.self).count == count)
        #expect(realm.objects(SpaceItem.self).filter("number == %@", count - 1).first?.name == "item \(count - 1)")
        let last = sizes[sizes.count - 1]
        #expect(Double(last) <= Double(oneRound) * 1.5, "sizes after each round: \(sizes)")
        let mib = sizes.map { String(format: "%.1f", Double($0) / 1_048_576) }
        print("space test: \(count) objects a round; file size after each round (MiB): \(mib.joined(separator: ", ")); "
            + String(format: "last / first = %.2f", Double(last) / Double(max(oneRound, 1))))
    }
}
