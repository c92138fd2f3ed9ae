import Foundation
@testable import TrellisStorage
import TrellisTestSupport

/// A file's trees as the tests fill and compare them: seeded commits into the three trees `a`,
/// `b` (byte order) and `c` (integer order), and every entry of a file's trees read back into a
/// dictionary (UsedBytesChecksumTests, FaultTests, CompactionTests).
enum SeededTrees {
    /// A tree's entries, key to value.
    typealias Model = [[UInt8]: [UInt8]]

    /// The three trees `fill` writes; `c` is integer-ordered (8-byte native keys).
    static let names = ["a", "b", "c"]

    /// How `fill` writes: `rounds` commits, each making `operations` puts or deletes in every tree
    /// on keys drawn below `keys`; from round `deletesFrom` on, `deletePercent` of them delete;
    /// `overflowPercent` of the values are `overflowLength` bytes (an overflow run), the others
    /// under `smallLength`.
    struct Shape {
        var rounds: Int
        var operations: Int
        var keys: Int
        var deletesFrom: Int
        var deletePercent: Int
        var overflowPercent: Int
        var overflowLength: Int
        var smallLength: Int
    }

    /// Commits `shape.rounds` write transactions into the trees `a`, `b` and `c` (creating them),
    /// drawing keys, operations and values from `random`.
    static func fill(_ environment: StorageEnvironment, shape: Shape, random: inout SplitMix64) throws {
        for round in 0..<shape.rounds {
            try environment.write { write in
                for tree in names {
                    try write.createTree(tree, order: tree == "c" ? .integer : .bytes)
                    for _ in 0..<shape.operations {
                        let number = UInt64(random.below(shape.keys))
                        let key = tree == "c" ? withUnsafeBytes(of: number) { Array($0) } : Array("key\(number)".utf8)
                        if round >= shape.deletesFrom && random.chance(shape.deletePercent) {
                            try write.delete(tree, key: key)
                        } else {
                            let length = random.chance(shape.overflowPercent) ? shape.overflowLength : random.below(shape.smallLength)
                            try write.put(tree, key: key, value: random.bytes(length))
                        }
                    }
                }
            }
        }
    }

    /// Every entry of the trees `trees` (nil: every tree of the file) in the current commit; a tree
    /// named but missing is left out.
    static func contents(_ environment: StorageEnvironment, trees: [String]? = nil) throws -> [String: Model] {
        try environment.read { read in
            var result: [String: Model] = [:]
            for tree in try trees ?? read.treeNames() {
                guard try read.info(tree) != nil else { continue }
                var model: Model = [:]
                let cursor = try read.cursor(tree)
                var more = try cursor.first()
                while more {
                    model[try cursor.key()] = try cursor.value()
                    more = try cursor.next()
                }
                result[tree] = model
            }
            return result
        }
    }

    /// Every entry of the tree `tree` (empty when there is none).
    static func contents(_ environment: StorageEnvironment, tree: String) throws -> Model {
        try contents(environment, trees: [tree])[tree] ?? [:]
    }
}
