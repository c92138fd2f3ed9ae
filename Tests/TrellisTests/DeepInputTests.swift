import Foundation
import Testing
@testable import Trellis

class ChainNode: Object {
    @Persisted var value = 0
    @Persisted var next: ChainNode?
}

class KeyedChainNode: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var next: KeyedChainNode?
}

class CycleObject: Object {
    @Persisted var name = ""
    @Persisted var link: CycleObject?
    @Persisted var links: List<CycleObject>
}

/// Input of any depth is handled without recursion on the stack: long query chains, long
/// linked lists of objects, object cycles.
@Suite struct DeepInputTests {
    let folder = TemporaryFolder()

    @Test func aFlatAndChainOfSevenThousandTermsCompilesAndEvaluates() throws {
        let realm = try Realm(configuration: folder.configuration([Dog.self]))
        try realm.write { for age in 0..<10 { realm.add(Dog(value: ["name": "d\(age)", "age": age])) } }
        let chain = Array(repeating: "age >= 0", count: 7000).joined(separator: " AND ") + " AND age < 5"
        #expect(realm.objects(Dog.self).filter(chain).count == 5)
        #expect(try realm.objects(Dog.self).filter(validating: chain).count == 5)
        let alternatives = Array(repeating: "age == 100", count: 7000).joined(separator: " OR ") + " OR age == 3"
        #expect(realm.objects(Dog.self).filter(alternatives).count == 1)
    }

    @Test func aLongLinkedListOfObjectsIsAddedReadAndDeleted() throws {
        let count = Int(ProcessInfo.processInfo.environment["TRELLIS_DEEP_CHAIN"] ?? "") ?? 200_000
        let realm = try Realm(configuration: folder.configuration([ChainNode.self]))
        let head = ChainNode()
        var tail = head
        for value in 1..<count {
            let node = ChainNode()
            node.value = value
            tail.next = node
            tail = node
        }
        try realm.write { realm.add(head) }
        #expect(realm.objects(ChainNode.self).count == count)
        var node: ChainNode? = realm.objects(ChainNode.self).filter("value == 0").first
        var seen = 0
        while let current = node {
            seen += 1
            node = current.next
        }
        #expect(seen == count)
        try realm.write { realm.delete(realm.objects(ChainNode.self)) }
        #expect(realm.objects(ChainNode.self).isEmpty)
    }

    /// Export reads a link as its target's primary key, never by following it: a linked list
    /// exports whatever its length (`TRELLIS_DEEP_CHAIN` sets it; 20,000 in CI).
    @Test func aLongLinkedListIsExportedAsExtendedJSON() throws {
        let count = Int(ProcessInfo.processInfo.environment["TRELLIS_DEEP_CHAIN"] ?? "") ?? 20_000
        let url = folder.file("keyed.realm")
        try onOtherThread {
            let realm = try Realm(configuration: Realm.Configuration(fileURL: url, objectTypes: [KeyedChainNode.self]))
            let head = KeyedChainNode()
            var tail = head
            for id in 1..<count {
                let node = KeyedChainNode()
                node.id = id
                tail.next = node
                tail = node
            }
            try realm.write { realm.add(head) }
        }
        let documents = try #require(try ExtendedJSON.documents(inFile: url)["KeyedChainNode"])
        #expect(documents.count == count)
        let first = try #require(try JSONSerialization.jsonObject(with: documents[0]) as? [String: Any])
        #expect(first["next"] as? [String: String] == ["$numberLong": "1"])
    }

    @Test func objectsLinkedBothWaysMadeWithPositionalValuesAreAdded() throws {
        let realm = try Realm(configuration: folder.configuration([CycleObject.self]))
        let a = CycleObject(value: ["a", NSNull(), []])
        let b = CycleObject(value: ["b", a, [a]])
        a.link = b
        a.links.append(b)
        try realm.write { realm.add(a) }
        let stored = try #require(realm.objects(CycleObject.self).filter("name == 'a'").first)
        #expect(stored.link?.name == "b")
        #expect(stored.link?.link?.name == "a")
        #expect(stored.links.first?.links.first?.name == "a")
        #expect(realm.objects(CycleObject.self).count == 2)
    }
}
