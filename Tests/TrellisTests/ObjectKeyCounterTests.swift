import Foundation
import Testing
@testable import Trellis

/// Object keys are never handed out twice, whichever Realm, thread or process committed last: a
/// Realm reuses the counters its own last commit stored only while no other commit came after it.
@Suite struct ObjectKeyCounterTests {
    let folder = TemporaryFolder()

    func configuration() -> Realm.Configuration {
        var configuration = folder.configuration([Dog.self])
        configuration.syncOnCommit = false
        return configuration
    }

    func keys(_ realm: Realm) throws -> [ObjectKey] {
        try realm.objects(Dog.self).map { try #require($0._managed?.key) }.sorted()
    }

    @Test func eachOfARealmsCommitsTakesTheNextKey() throws {
        let realm = try Realm(configuration: configuration())
        for index in 0..<3 { try realm.write { realm.add(Dog(value: ["name": "d\(index)"])) } }
        let stored = try keys(realm)
        #expect(stored.count == 3)
        #expect(stored == Array(stored[0]...(stored[0] + 2)))
    }

    @Test func anotherRealmsCommitsBetweenTwoOfThisRealmsTakeNoKeyTwice() throws {
        let realm = try Realm(configuration: configuration())
        try realm.write { realm.add(Dog(value: ["name": "first"])) }
        let configuration = configuration()
        try onOtherThread {
            let other = try Realm(configuration: configuration)
            for index in 0..<2 { try other.write { other.add(Dog(value: ["name": "other\(index)"])) } }
        }
        try realm.write { realm.add(Dog(value: ["name": "last"])) }
        #expect(try keys(realm).count == 4)
        #expect(Set(realm.objects(Dog.self).map(\.name)) == ["first", "other0", "other1", "last"])
    }

    @Test func aWriteThatChangedNothingLeavesItsVersionToTheNextWriter() throws {
        let realm = try Realm(configuration: configuration())
        try realm.write { realm.add(Dog(value: ["name": "first"])) }
        // Makes no version: the other Realm's commit takes the one it would have had.
        try realm.write {}
        let configuration = configuration()
        try onOtherThread {
            let other = try Realm(configuration: configuration)
            try other.write { other.add(Dog(value: ["name": "other"])) }
        }
        try realm.write { realm.add(Dog(value: ["name": "last"])) }
        #expect(try keys(realm).count == 3)
    }
}
