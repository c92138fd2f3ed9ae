import Foundation
import Testing
import TrellisSyncProtocol

/// `SchemaShape.problem(inDocument:)`: the check a bootstrap makes on every stored document
/// before sending it (docs/SYNC.md, "Bad rows"). It reports the first property that does not
/// fit in key order, whatever the dictionary's order.
struct SchemaShapeTests {
    static let schema = """
        {"title": "Dog", "bsonType": "object", "required": ["_id"], "properties": {
          "_id": {"bsonType": "objectId"}, "age": {"bsonType": "long"}, "name": {"bsonType": "string"},
          "tags": {"bsonType": "array", "items": {"bsonType": "string"}},
          "scores": {"bsonType": "object", "additionalProperties": {"bsonType": "double"}},
          "address": {"bsonType": "object", "properties": {"city": {"bsonType": "string"}, "zip": {"bsonType": "long"}}}}}
        """

    static func shape() throws -> SchemaShape { try SchemaShape(document: try JSONValue(jsonText: schema)) }

    static func document(_ text: String) throws -> [String: JSONValue] {
        try #require(try JSONValue(jsonText: text).objectValue)
    }

    @Test func aDocumentThatFitsHasNoProblem() throws {
        let document = try Self.document("""
            {"_id": {"$oid": "0123456789abcdefABCDEF01"}, "age": 3, "name": "Rex", "tags": ["a", "b"],
             "scores": {"x": 1.5, "y": 2}, "address": {"city": "Oslo", "zip": {"$numberLong": "150"}}, "extra": true}
            """)
        #expect(try Self.shape().problem(inDocument: document) == nil)
    }

    @Test func anObjectIdWithAFullwidthDigitDoesNotFit() throws {
        // 21 ASCII digits and one fullwidth zero (3 bytes in UTF-8): 24 bytes, not an ObjectId.
        let id = String(repeating: "1", count: 21) + "\u{FF10}"
        let document = try Self.document(#"{"_id": {"$oid": "\#(id)"}}"#)
        #expect(try Self.shape().problem(inDocument: document)?.hasPrefix("'Dog._id' is objectId") == true)
    }

    @Test func theProblemReportedIsTheFirstBadPropertyInKeyOrderWhateverTheOrder() throws {
        let shape = try Self.shape()
        // Every property wrong; each document built in another insertion order.
        let fields = [#""_id": 1"#, #""age": "x""#, #""name": 2"#, #""tags": [3]"#, #""scores": {"b": "s", "a": "t"}"#,
                      #""address": {"zip": "z", "city": 4}"#]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20 {
            let document = try Self.document("{" + fields.shuffled(using: &generator).joined(separator: ",") + "}")
            #expect(shape.problem(inDocument: document) == "'Dog._id' is objectId, not 1")
            var withoutId = document
            withoutId["_id"] = nil
            withoutId["address"] = nil
            #expect(shape.problem(inDocument: withoutId) == "'Dog.age' is long, not \"x\"")
            #expect(shape.problem(inDocument: try Self.document(#"{"scores": {"b": "s", "a": "t", "c": 1}}"#))
                == "'Dog.scores.{}' is double, not \"t\" (key 'a')")
            #expect(shape.problem(inDocument: try Self.document(#"{"address": {"zip": "z", "city": 4}}"#))
                == "'Dog.address.city' is string, not 4")
        }
    }
}
