import Foundation
import Trellis

// Random documents and subscription predicates for SubscriptionSQLTests: values of every
// kind a document may hold (canonical Extended JSON, plain JSON from SQL writers, and odd
// shapes), and predicates over them of every operator the SQL translation knows.

private func json(_ text: String) -> String {
    (try? String(decoding: JSONEncoder().encode(text), as: UTF8.self)) ?? "\"\""
}

/// Draws for the randomized tests: an element, and a percent chance.
extension RandomNumberGenerator {
    mutating func pick<T>(_ items: [T]) -> T { items[Int(next() % UInt64(items.count))] }
    mutating func chance(_ percent: UInt64) -> Bool { next() % 100 < percent }
}

enum RandomDocuments {
    static let asciiStrings = ["", "a", "A", "ab", "Abc", "abc", "b", "ba", "rex", "Rex", "REX", "re", "x%y", "x_y",
                               "a*b", "z", "k", "Rexa", "xrex"]
    static let otherStrings = ["é", "e\u{301}", "ß", "SS", "Ω", "日本", "a\r\nb", "\u{212A}", "rÉx", "Ex\u{301}"]
    static let objectIds = ["000000000000000000000001", "65a1b2c3d4e5f60718293a4b", "ffffffffffffffffffffffff"]

    /// Values of the usual shapes (SQL decides every translated comparison on them).
    static let usual: [String] = [
        "null", "true", "false", "0", "1", "2", "3", "-1", "10", "9007199254740993", "-9223372036854775808",
        "9223372036854775807", "2.5", "-0.5", "3.0", "0.1",
        #"{"$numberLong": "3"}"#, #"{"$numberLong": "-1"}"#, #"{"$numberLong": "9007199254740993"}"#,
        #"{"$numberInt": "2"}"#, #"{"$numberInt": "10"}"#,
        #"{"$numberDouble": "2.5"}"#, #"{"$numberDouble": "3"}"#, #"{"$numberDouble": "-0.5"}"#,
        #"{"$numberDouble": "1e3"}"#,
        #"{"street": "Main", "city": null}"#, "{}",
    ] + asciiStrings.map(json) + objectIds.map { #"{"$oid": "\#($0)"}"# }

    /// Odd shapes: collections, Extended JSON the SQL does not read, malformed wrappers, huge
    /// numbers, strings beyond printable ASCII or not in NFC.
    static let odd: [String] = [
        "[]", "[1, 2]", #"["a", "rex"]"#, "[[1]]", "1e20", "123456789012345678901234567890", "1.0000000000000001",
        #"{"$numberLong": "abc"}"#, #"{"$numberLong": 3}"#, #"{"$numberLong": "+3"}"#,
        #"{"$numberLong": "9223372036854775807"}"#, #"{"$numberDouble": "NaN"}"#,
        #"{"$numberDouble": "Infinity"}"#, #"{"$numberDecimal": "2.5"}"#, #"{"$date": {"$numberLong": "0"}}"#,
        #"{"$binary": {"base64": "AAE=", "subType": "00"}}"#, #"{"$oid": "65A1B2C3D4E5F60718293A4B"}"#,
        #"{"$oid": "xyz"}"#, #"{"$numberLong": "3", "$oid": "000000000000000000000001"}"#,
    ] + otherStrings.map(json)

    /// A document over p0…p3 and an embedded object e (p0, p1) (a property may be missing);
    /// whether every value is usual.
    static func make<R: RandomNumberGenerator>(_ random: inout R) -> (String, Bool) {
        var fields = [String]()
        var usualOnly = true
        for property in ["p0", "p1", "p2", "p3"] {
            if random.chance(10) { continue }
            if random.chance(15) {
                fields.append("\"\(property)\": \(random.pick(odd))")
                usualOnly = false
            } else {
                fields.append("\"\(property)\": \(random.pick(usual))")
            }
        }
        // An embedded object `e` with the same properties (or a value of another shape there).
        if !random.chance(10) {
            if random.chance(15) {
                fields.append("\"e\": \(random.pick(["null", "[]", #"[{"p0": 1}]"#, #"{"$oid": "000000000000000000000001"}"#, "3"]))")
                usualOnly = false
            } else {
                var inner = [String]()
                for property in ["p0", "p1"] where !random.chance(10) {
                    inner.append("\"\(property)\": \(random.pick(usual))")
                }
                fields.append("\"e\": {" + inner.joined(separator: ", ") + "}")
            }
        }
        return ("{" + fields.joined(separator: ", ") + "}", usualOnly)
    }
}

enum RandomPredicates {
    static func literal<R: RandomNumberGenerator>(_ random: inout R) -> Any {
        switch random.next() % 6 {
        case 0: return random.pick([0, 1, 2, 3, -1, 10, 9_007_199_254_740_993, Int.max, Int.min])
        case 1: return random.pick([2.5, -0.5, 3.0, 0.1, 1e20, 1000.0])
        case 2: return random.chance(80) ? random.pick(RandomDocuments.asciiStrings + ["r*", "?e*", "*x", "R?x", "%"])
            : random.pick(RandomDocuments.otherStrings)
        case 3: return random.chance(50)
        case 4: return (try? ObjectId(string: random.pick(RandomDocuments.objectIds))) ?? ObjectId.generate()
        default: return random.pick(RandomDocuments.asciiStrings)
        }
    }

    /// One comparison's format and arguments.
    static func comparison<R: RandomNumberGenerator>(_ random: inout R) -> (String, [Any]) {
        let property = random.pick(["p0", "p1", "p2", "p3", "e.p0", "e.p1"])
        let quantifier = random.chance(80) ? "" : random.pick(["ANY ", "ALL ", "NONE "])
        let options = random.chance(75) ? "" : random.pick(["[c]", "[d]", "[cd]"])
        switch random.next() % 14 {
        case 0: return ("\(quantifier)\(property) \(random.pick(["==", "!=", "<", ">="])) nil", [])
        case 1:
            let count = Int(random.next() % 4)
            return ("\(quantifier)\(property) IN %@", [(0..<count).map { _ in literal(&random) }])
        case 2:
            let bothNumbers = random.chance(60)
            let low: Any = bothNumbers ? random.pick([-1, 0, 2, 2.5]) : literal(&random)
            let high: Any = bothNumbers ? random.pick([3, 10, 2.5, 1e20]) : literal(&random)
            return ("\(quantifier)\(property) BETWEEN {%@, %@}", [low, high])
        case 3, 4, 5:
            let op = random.pick(["BEGINSWITH", "ENDSWITH", "CONTAINS", "LIKE"])
            let pattern: Any = random.chance(85) ? random.pick(RandomDocuments.asciiStrings + ["r*", "?e*", "*x", "R?x"])
                : literal(&random)
            return ("\(quantifier)\(property) \(op)\(options) %@", [pattern])
        default:
            let op = random.pick(["==", "!=", "<", "<=", ">", ">="])
            let value = literal(&random)
            return ("\(quantifier)\(property) \(op)\(value is String ? options : "") %@", [value])
        }
    }

    /// A predicate of up to three levels of AND, OR and NOT.
    static func make<R: RandomNumberGenerator>(_ random: inout R, depth: Int = 0) -> (String, [Any]) {
        guard depth < 3, random.chance(45) else { return comparison(&random) }
        switch random.next() % 3 {
        case 0:
            let (inner, arguments) = make(&random, depth: depth + 1)
            return ("NOT (\(inner))", arguments)
        default:
            let joiner = random.chance(50) ? " AND " : " OR "
            var parts = [String](), arguments = [Any]()
            for _ in 0..<(2 + Int(random.next() % 2)) {
                let (part, more) = make(&random, depth: depth + 1)
                parts.append("(\(part))")
                arguments += more
            }
            return (parts.joined(separator: joiner), arguments)
        }
    }
}
