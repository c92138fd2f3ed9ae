import Foundation
import Testing
@testable import Trellis
import TrellisTestSupport

/// An object with a column of every kind the column copy scans.
final class ColumnSample: Object {
    @Persisted var serial = 0
    @Persisted var int = 0
    @Persisted var optInt: Int?
    @Persisted var small: Int8 = 0
    @Persisted var flag = false
    @Persisted var optFlag: Bool?
    @Persisted var double = 0.0
    @Persisted var optFloat: Float?
    @Persisted var date = Date(timeIntervalSince1970: 0)
    @Persisted var optDate: Date?
    @Persisted var name = ""
    @Persisted var optName: String?
    @Persisted var oid = ObjectId(bytes: [UInt8](repeating: 0, count: 12)) ?? ObjectId()
    @Persisted var optOid: ObjectId?
    @Persisted var tags: List<String>
    @Persisted var friend: ColumnSample?
}

/// Random predicates over the column copy, checked against a plain Swift filter and against the
/// rows (the same query with the column copies turned off), over files whose chunks hold 4
/// objects, so that every query crosses dozens of chunks, some full, some with gaps, some gone.
@Suite struct ColumnQueryDifferentialTests {
    let folder = TemporaryFolder()
    typealias Generator = SplitMix64
    typealias Case = (text: String, test: (ColumnSample) -> Bool)

    static let ints = [-3, 0, 1, 2, 5, 40, 41, Int.max, Int.min]
    static let doubles = [-1.5, -0.0, 0.0, 2.5, 40.0, .nan, .infinity, -.infinity]
    static let floats: [Float?] = [nil, -1.5, 0, 2.5, .nan]
    static let seconds = [0, 1, 2, 1_000_000_000]
    /// Short names live in the chunks; the long ones (over ``ChunkFormat/inlineLimit`` bytes)
    /// stay in their rows and are read from there.
    static let names = ["", "a", "ab", "abc", "b", "dog 1", "dog 10", "dog 2", "Zoë", "e\u{301}", "\u{e9}", "K",
                        "\u{212A}", "Ab", "dog 1" + String(repeating: "y", count: 70),
                        "Zoë" + String(repeating: "\u{e9}", count: 40), String(repeating: "a", count: 65)]
    static let oids = ["000000000000000000000001", "000000000000000000000002", "00000000000000000000000a"]

    static func configuration(_ folder: TemporaryFolder, _ name: String) -> Realm.Configuration {
        var configuration = folder.configuration([ColumnSample.self], name: name)
        configuration.columnChunkShift = 2
        return configuration
    }

    static func fill(_ sample: ColumnSample, _ g: inout Generator) {
        sample.int = ints.randomElement(using: &g) ?? 0
        sample.optInt = Bool.random(using: &g) ? nil : ints.randomElement(using: &g)
        sample.small = Int8.random(in: -3...3, using: &g)
        sample.flag = Bool.random(using: &g)
        sample.optFlag = [nil, true, false].randomElement(using: &g) ?? nil
        sample.double = doubles.randomElement(using: &g) ?? 0
        sample.optFloat = floats.randomElement(using: &g) ?? nil
        let second: Int = seconds.randomElement(using: &g) ?? 0, optionalSecond: Int = seconds.randomElement(using: &g) ?? 0
        sample.date = Date(timeIntervalSince1970: Double(second))
        sample.optDate = Bool.random(using: &g) ? nil : Date(timeIntervalSince1970: Double(optionalSecond))
        sample.name = names.randomElement(using: &g) ?? ""
        sample.optName = Bool.random(using: &g) ? nil : names.randomElement(using: &g)
        sample.oid = objectId(oids.randomElement(using: &g) ?? oids[0])
        sample.optOid = Bool.random(using: &g) ? nil : objectId(oids.randomElement(using: &g) ?? oids[0])
    }

    static func objectId(_ text: String) -> ObjectId { (try? ObjectId(string: text)) ?? ObjectId() }

    static func ordered<T: Comparable>(_ op: String, _ a: T?, _ b: T) -> Bool {
        guard let a else { return op == "!=" }
        switch op {
        case "==": return a == b
        case "!=": return a != b
        case "<": return a < b
        case "<=": return a <= b
        case ">": return a > b
        default: return a >= b
        }
    }

    static func leaf(_ g: inout Generator) -> Case {
        let op = ["==", "!=", "<", "<=", ">", ">="].randomElement(using: &g) ?? "=="
        switch Int.random(in: 0..<16, using: &g) {
        case 0:
            let n = ints.randomElement(using: &g) ?? 0
            return ("int \(op) \(n)", { ordered(op, $0.int, n) })
        case 1:
            let n = ints.randomElement(using: &g) ?? 0
            return ("optInt \(op) \(n)", { ordered(op, $0.optInt, n) })
        case 2:
            let isNil = Bool.random(using: &g)
            let field = ["optInt", "optFlag", "optFloat", "optDate", "optName", "optOid"].randomElement(using: &g) ?? "optInt"
            return ("\(field) \(isNil ? "==" : "!=") nil", { sample in
                let value: Any? = switch field {
                case "optInt": sample.optInt
                case "optFlag": sample.optFlag
                case "optFloat": sample.optFloat
                case "optDate": sample.optDate
                case "optName": sample.optName
                default: sample.optOid
                }
                return (value == nil) == isNil
            })
        case 3:
            let value = Bool.random(using: &g), equal = Bool.random(using: &g)
            return ("flag \(equal ? "==" : "!=") \(value)", { ($0.flag == value) == equal })
        case 4:
            let value = Bool.random(using: &g), equal = Bool.random(using: &g)
            return ("optFlag \(equal ? "==" : "!=") \(value)", { sample in
                equal ? sample.optFlag == value : sample.optFlag != value
            })
        case 5:
            let d = doubles.filter { !$0.isNaN && $0.isFinite }.randomElement(using: &g) ?? 0
            return ("double \(op) \(d)", { ordered(op, $0.double, d) || (op == "!=" && $0.double.isNaN) })
        case 6:
            let d: Double = [-1.5, 0, 2.5, 3].randomElement(using: &g) ?? 0
            return ("optFloat \(op) \(d)", { sample in
                guard let f = sample.optFloat else { return op == "!=" }
                return ordered(op, Double(f), d) || (op == "!=" && f.isNaN)
            })
        case 7:
            let s = seconds.randomElement(using: &g) ?? 0
            let date = Date(timeIntervalSince1970: Double(s))
            return ("date \(op) T\(s):0", { ordered(op, $0.date, date) })
        case 8:
            let s = seconds.randomElement(using: &g) ?? 0
            let date = Date(timeIntervalSince1970: Double(s))
            return ("optDate \(op) T\(s):0", { ordered(op, $0.optDate, date) })
        case 9:
            let text = names.randomElement(using: &g) ?? ""
            let equal = Bool.random(using: &g)
            return ("name \(equal ? "==" : "!=") '\(text)'", { ($0.name == text) == equal })
        case 10:
            let text = ["", "a", "dog 1", "e", "Z", "\u{e9}"].randomElement(using: &g) ?? ""
            let field = Bool.random(using: &g) ? "name" : "optName"
            let kind = ["BEGINSWITH", "ENDSWITH", "CONTAINS"].randomElement(using: &g) ?? "BEGINSWITH"
            return ("\(field) \(kind) '\(text)'", { sample in
                guard let value = field == "name" ? sample.name : sample.optName else { return false }
                switch kind {
                case "BEGINSWITH": return value.utf8.starts(with: text.utf8)
                case "ENDSWITH": return value.utf8.reversed().starts(with: text.utf8.reversed())
                default: return text.isEmpty || value.contains(text)
                }
            })
        case 11:
            let id = oids.randomElement(using: &g) ?? oids[0]
            let equal = Bool.random(using: &g), optional = Bool.random(using: &g)
            return ("\(optional ? "optOid" : "oid") \(equal ? "==" : "!=") oid(\(id))", { sample in
                let value = optional ? sample.optOid : sample.oid
                return (value == objectId(id)) == equal
            })
        case 12:
            let values = (0..<Int.random(in: 1...3, using: &g)).map { _ in ints.randomElement(using: &g) ?? 0 }
            return ("int IN {\(values.map(String.init).joined(separator: ", "))}", { values.contains($0.int) })
        case 13:
            let low = Int.random(in: -3...3, using: &g), high = Int.random(in: -3...3, using: &g)
            return ("small BETWEEN {\(low), \(high)}", { Int($0.small) >= low && Int($0.small) <= high })
        case 14:
            let low: Double = [-1.5, 0, 2.5].randomElement(using: &g) ?? 0
            let high: Double = [0, 40, 100].randomElement(using: &g) ?? 0
            return ("double BETWEEN {\(low), \(high)}", { $0.double >= low && $0.double <= high })
        default:
            // Not answered by the column copy (through a link, a list): the rows answer it,
            // alone or combined with columns.
            let n = ints.randomElement(using: &g) ?? 0
            if Bool.random(using: &g) {
                return ("friend.int \(op) \(n)", { ordered(op, $0.friend?.int, n) })
            }
            return ("ANY tags == 'x'", { $0.tags.contains("x") })
        }
    }

    static func predicate(_ g: inout Generator, depth: Int) -> Case {
        RandomPredicates.combination(&g, depth: depth, leaf: leaf)
    }

    /// 300 objects over 75 chunks, then a third of them deleted: gaps, empty chunks gone.
    static func populate(_ realm: Realm, _ g: inout Generator) throws {
        try realm.write {
            var made: [ColumnSample] = []
            for serial in 0..<300 {
                let sample = ColumnSample()
                sample.serial = serial
                fill(sample, &g)
                if Int.random(in: 0..<4, using: &g) == 0 { sample.tags.append("x") }
                if let friend = made.randomElement(using: &g), Bool.random(using: &g) { sample.friend = friend }
                realm.add(sample)
                made.append(sample)
            }
        }
        try realm.write {
            let doomed = realm.objects(ColumnSample.self).filter { $0.serial % 3 == 0 || ($0.serial >= 100 && $0.serial < 140) }
            realm.delete(Array(doomed))
        }
    }

    @Test(arguments: [11, 12, 13] as [UInt64])
    func randomPredicatesOverColumnsMatchASwiftFilterAndTheRows(seed: UInt64) throws {
        var g = Generator(seed: seed)
        let realm = try Realm(configuration: Self.configuration(folder, "columns\(seed).realm"))
        try Self.populate(realm, &g)
        #expect(realm._consistencyProblems().isEmpty)
        let all = realm.objects(ColumnSample.self)
        let snapshot = Array(all)
        var checked = 0
        for _ in 0..<1500 {
            let (text, test) = Self.predicate(&g, depth: 3)
            let swift = snapshot.filter(test).map(\.serial)
            realm.core.readsColumnCopies = true
            let columns = Array(all.filter(text)).map(\.serial)
            let counted = all.filter(text).count
            realm.core.readsColumnCopies = false
            let rows = Array(all.filter(text)).map(\.serial)
            #expect(columns == swift, "\(text)")
            #expect(rows == swift, "rows: \(text)")
            #expect(counted == swift.count, "count of \(text)")
            if columns != swift || rows != swift || counted != swift.count { break }
            checked += 1
        }
        realm.core.readsColumnCopies = true
        #expect(checked == 1500)
    }
}
