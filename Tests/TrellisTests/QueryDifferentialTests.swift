import Foundation
import Testing
@testable import Trellis
import TrellisTestSupport

/// Thousands of random predicates, each evaluated by the query engine and by a plain Swift
/// filter over the same objects: the answers must be identical.
@Suite struct QueryDifferentialTests {
    let folder = TemporaryFolder()

    typealias Generator = SplitMix64

    /// What the Swift side knows of an owner, read through the ordinary accessors.
    struct OwnerFacts {
        let name: String
        let age: Int
        let dogAge: Int?
        let dogAges: [Int]
        let setAges: [Int]
        let scores: [Int]
        let tags: [String]
        let parentAges: [Int]
    }

    typealias Case = (text: String, test: (OwnerFacts) -> Bool)

    static let ops: [(String, @Sendable (Int, Int) -> Bool)] = [
        ("==", { $0 == $1 }), ("!=", { $0 != $1 }), ("<", { $0 < $1 }),
        ("<=", { $0 <= $1 }), (">", { $0 > $1 }), (">=", { $0 >= $1 }),
    ]

    static func leaf(_ g: inout Generator) -> Case {
        let (op, f) = ops.randomElement(using: &g)!
        let n = Int.random(in: 0...12, using: &g)
        switch Int.random(in: 0..<11, using: &g) {
        case 0: return ("age \(op) \(n * 5)", { f($0.age, n * 5) })
        case 1:
            // A nil link compares as nil: equal to nothing, unequal to every number.
            return ("dog.age \(op) \(n)", { facts in
                guard let age = facts.dogAge else { return op == "!=" }
                return f(age, n)
            })
        case 2: return ("ANY dogs.age \(op) \(n)", { $0.dogAges.contains { f($0, n) } })
        case 3: return ("ALL dogs.age \(op) \(n)", { $0.dogAges.allSatisfy { f($0, n) } })
        case 4: return ("NONE dogSet.age \(op) \(n)", { !$0.setAges.contains { f($0, n) } })
        case 5: return ("dogs.@count \(op) \(n % 4)", { f($0.dogAges.count, n % 4) })
        case 6: return ("dogs.@sum.age \(op) \(n * 2)", { f($0.dogAges.reduce(0, +), n * 2) })
        case 7:
            return ("dogs.@max.age \(op) \(n)", { facts in
                guard let max = facts.dogAges.max() else { return op == "!=" }
                return f(max, n)
            })
        case 8: return ("ANY scores \(op) \(n)", { $0.scores.contains { f($0, n) } })
        case 9:
            let letter = ["a", "b", "c", "B"].randomElement(using: &g)!
            let insensitive = Bool.random(using: &g)
            return ("ANY tags BEGINSWITH\(insensitive ? "[c]" : "") '\(letter)'", { facts in
                facts.tags.contains { insensitive ? $0.lowercased().hasPrefix(letter.lowercased()) : $0.hasPrefix(letter) }
            })
        default:
            return ("SUBQUERY(parents, $p, $p.age \(op) \(n * 5)).@count > 0", { $0.parentAges.contains { f($0, n * 5) } })
        }
    }

    static func predicate(_ g: inout Generator, depth: Int) -> Case {
        RandomPredicates.combination(&g, depth: depth, leaf: leaf)
    }

    func populate(_ realm: Realm, _ g: inout Generator) throws {
        try realm.write {
            let pets = (0..<20).map { Pet("pet\($0)", age: Int.random(in: 0...12, using: &g)) }
            let owners = (0..<40).map { Owner("owner\($0)", age: Int.random(in: 0...60, using: &g)) }
            let tagWords = ["apple", "Bear", "cat", "bee", "Cow", "ant"]
            for owner in owners {
                if Bool.random(using: &g) { owner.dog = pets.randomElement(using: &g) }
                for _ in 0..<Int.random(in: 0...3, using: &g) { owner.dogs.append(pets.randomElement(using: &g)!) }
                for _ in 0..<Int.random(in: 0...2, using: &g) { owner.dogSet.insert(pets.randomElement(using: &g)!) }
                for _ in 0..<Int.random(in: 0...3, using: &g) { owner.scores.insert(Int.random(in: 0...12, using: &g)) }
                for _ in 0..<Int.random(in: 0...2, using: &g) { owner.tags.append(tagWords.randomElement(using: &g)!) }
                if Int.random(in: 0..<3, using: &g) == 0 { owner.children.append(owners.randomElement(using: &g)!) }
            }
            realm.add(owners)
            realm.add(pets)
        }
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func randomPredicatesMatchAPlainSwiftFilter(seed: UInt64) throws {
        var g = Generator(seed: seed)
        let realm = try Realm(configuration: folder.configuration([Owner.self, Pet.self], name: "diff\(seed).realm"))
        try populate(realm, &g)
        let owners = realm.objects(Owner.self)
        let facts = Array(owners).map { owner in
            OwnerFacts(name: owner.name, age: owner.age, dogAge: owner.dog?.age, dogAges: owner.dogs.map(\.age),
                       setAges: owner.dogSet.map(\.age), scores: Array(owner.scores), tags: Array(owner.tags),
                       parentAges: owner.parents.map(\.age))
        }
        var checked = 0
        for _ in 0..<1000 {
            let (text, test) = Self.predicate(&g, depth: 3)
            let engine = Array(owners.filter(text)).map(\.name)
            let swift = facts.filter(test).map(\.name)
            #expect(engine == swift, "\(text)")
            // Counted on fresh results too (count evaluates them without iterating).
            let counted = owners.filter(text).count
            #expect(counted == swift.count, "count of \(text)")
            if engine != swift || counted != swift.count { break }
            checked += 1
        }
        #expect(checked == 1000)
    }
}
