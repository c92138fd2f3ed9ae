import Foundation
import Testing
@testable import Trellis
import TrellisTestSupport

class GraphNode: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var link: GraphNode?
    @Persisted var list: List<GraphNode>
    @Persisted var set: MutableSet<GraphNode>
    @Persisted var map: Map<String, GraphNode?>
    @Persisted var box: GraphBox?
    @Persisted var boxes: List<GraphBox>
    @Persisted(originProperty: "list") var listedBy: LinkingObjects<GraphNode>
    @Persisted(originProperty: "link") var linkedBy: LinkingObjects<GraphNode>
}

class GraphBox: EmbeddedObject {
    @Persisted var value = 0
    @Persisted var target: GraphNode?
}

/// What the graph should be: the in-memory model the database is compared with.
struct ExpectedNode: Equatable {
    var link: Int?
    var list: [Int] = []
    var set: Set<Int> = []
    var map: [String: Int?] = [:]
    var box: Int?
    var boxes: [Int] = []
}

/// Thousands of random relationship operations, each commit checked against the expected graph
/// and by the consistency checker.
@Suite struct RandomizedRelationshipTests {
    let folder = TemporaryFolder()

    @Test(arguments: [UInt64(1), 2, 3])
    func randomOperationsKeepLinksListsAndBacklinksConsistent(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let realm = try Realm(configuration: folder.configuration([GraphNode.self, GraphBox.self], name: "\(seed).realm"))
        var model = [Int: ExpectedNode]()
        var nextId = 0
        var nextBoxValue = 0
        var log = [String]()

        func node(_ id: Int) -> GraphNode {
            guard let node = realm.object(ofType: GraphNode.self, forPrimaryKey: id) else {
                fatalError("seed \(seed): node \(id) missing after \(log.suffix(5))")
            }
            return node
        }
        func randomId() -> Int? { model.keys.sorted().randomElement(using: &random) }

        for commit in 0..<400 {
            try realm.write {
                for _ in 0..<Int.random(in: 1...6, using: &random) {
                    let operation = model.count < 3 ? 0 : Int.random(in: 0..<12, using: &random)
                    guard let id = randomId() ?? (operation == 0 ? -1 : nil) else { continue }
                    switch operation {
                    case 0:
                        let created = GraphNode()
                        created.id = nextId
                        realm.add(created)
                        model[nextId] = ExpectedNode()
                        log.append("create \(nextId)")
                        nextId += 1
                    case 1:
                        let target = Bool.random(using: &random) ? randomId() : nil
                        node(id).link = target.map(node)
                        model[id]?.link = target
                        log.append("link \(id) -> \(String(describing: target))")
                    case 2, 3:
                        guard let target = randomId() else { continue }
                        let index = Int.random(in: 0...(model[id]?.list.count ?? 0), using: &random)
                        node(id).list.insert(node(target), at: index)
                        model[id]?.list.insert(target, at: index)
                        log.append("list \(id) insert \(target) at \(index)")
                    case 4:
                        guard let count = model[id]?.list.count, count > 0 else { continue }
                        let index = Int.random(in: 0..<count, using: &random)
                        node(id).list.remove(at: index)
                        model[id]?.list.remove(at: index)
                        log.append("list \(id) remove at \(index)")
                    case 5:
                        guard let target = randomId() else { continue }
                        if model[id]?.set.contains(target) == true {
                            node(id).set.remove(node(target))
                            model[id]?.set.remove(target)
                        } else {
                            node(id).set.insert(node(target))
                            model[id]?.set.insert(target)
                        }
                        log.append("set \(id) toggle \(target)")
                    case 6:
                        let key = "k\(Int.random(in: 0..<3, using: &random))"
                        if Bool.random(using: &random), let target = randomId() {
                            node(id).map[key] = node(target)
                            model[id]?.map[key] = .some(target)
                        } else {
                            node(id).map[key] = nil
                            model[id]?.map[key] = nil
                        }
                        log.append("map \(id)[\(key)]")
                    case 7:
                        if Bool.random(using: &random) {
                            let box = GraphBox()
                            box.value = nextBoxValue
                            box.target = randomId().map(node)
                            node(id).box = box
                            model[id]?.box = nextBoxValue
                            nextBoxValue += 1
                        } else {
                            node(id).box = nil
                            model[id]?.box = nil
                        }
                        log.append("box \(id)")
                    case 8:
                        let box = GraphBox()
                        box.value = nextBoxValue
                        node(id).boxes.append(box)
                        model[id]?.boxes.append(nextBoxValue)
                        nextBoxValue += 1
                        log.append("boxes \(id) append")
                    case 9:
                        guard let count = model[id]?.boxes.count, count > 0 else { continue }
                        let index = Int.random(in: 0..<count, using: &random)
                        node(id).boxes.remove(at: index)
                        model[id]?.boxes.remove(at: index)
                        log.append("boxes \(id) remove at \(index)")
                    default:
                        guard model.count > 4 else { continue }
                        realm.delete(node(id))
                        model[id] = nil
                        for key in model.keys {
                            if model[key]?.link == id { model[key]?.link = nil }
                            model[key]?.list.removeAll { $0 == id }
                            model[key]?.set.remove(id)
                            for (mapKey, value) in model[key]?.map ?? [:] where value == id {
                                model[key]?.map[mapKey] = .some(nil)
                            }
                        }
                        log.append("delete \(id)")
                    }
                }
            }
            let problems = realm._consistencyProblems()
            #expect(problems.isEmpty, "seed \(seed) commit \(commit): \(problems.prefix(3)) after \(log.suffix(6))")
            try verify(realm, model, context: "seed \(seed) commit \(commit), last ops \(log.suffix(6))")
            if !problems.isEmpty { return }
        }
        #expect(log.count > 1000)
    }

    func verify(_ realm: Realm, _ model: [Int: ExpectedNode], context: String) throws {
        #expect(realm.objects(GraphNode.self).count == model.count, "\(context)")
        var listOccurrences = [Int: Int]()
        var linkOccurrences = [Int: Int]()
        for (_, expected) in model {
            for id in expected.list { listOccurrences[id, default: 0] += 1 }
            if let link = expected.link { linkOccurrences[link, default: 0] += 1 }
        }
        for (id, expected) in model {
            let node = try #require(realm.object(ofType: GraphNode.self, forPrimaryKey: id))
            let actual = ExpectedNode(
                link: node.link?.id,
                list: node.list.map(\.id),
                set: Set(node.set.map(\.id)),
                map: Dictionary(uniqueKeysWithValues: node.map.map { ($0.key, $0.value?.id) }),
                box: node.box?.value,
                boxes: node.boxes.map(\.value))
            #expect(actual == expected, "node \(id): \(context)")
            #expect(node.listedBy.count == listOccurrences[id, default: 0], "listedBy of \(id): \(context)")
            #expect(node.linkedBy.count == linkOccurrences[id, default: 0], "linkedBy of \(id): \(context)")
        }
    }
}
