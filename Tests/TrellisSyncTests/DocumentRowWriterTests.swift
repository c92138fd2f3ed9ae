import Foundation
import Testing
import Trellis
@testable import TrellisSync
import TrellisSyncProtocol
import TrellisTestSupport

// Issue 39 (session 27): downloaded documents are written straight into their objects' rows
// (`DocumentRowWriter`) instead of through `Realm.create(_:value:update: .modified)`. These
// tests hold the new path to the old one on random objects of every property kind (fixed
// seeds), created and then updated in place.

@Suite struct DocumentRowWriterTests {
    /// 150 random documents written into rows, then 150 others with the same primary keys over
    /// them, make the same objects as `create(…, update: .modified)` of the decoded values does
    /// when it writes a document (`createWritingDocument`: the document's sets and maps replace
    /// the object's, where an app's `.modified` inserts into them, as realm-core does); and
    /// each object reads back as the document it was last written from.
    @Test(arguments: [UInt64(41), 4_141])
    func aDocumentWrittenIntoItsRowMakesTheSameObjectAsCreate(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let first = try withRealm { source in
            try DocumentConversionTests.makeSubjects(source, count: 150, random: &random).map { try SyncEngine.document(of: $0) }
        }
        let second = try withRealm { source in
            try DocumentConversionTests.makeSubjects(source, count: 150, random: &random).map { try SyncEngine.document(of: $0) }
        }.enumerated().map { index, document in
            var document = document
            document["_id"] = first[index]["_id"]
            return document
        }
        let made = try [true, false].map { typed in
            try withRealm { realm -> [[[String: JSONValue]]] in
                try realm.write {
                    for id in 0..<DocumentConversionTests.targetCount {
                        realm.add(ConversionTarget(value: ["_id": id, "name": "target \(id)"]))
                    }
                }
                let writer = DocumentRowWriter(realm: realm)
                guard let schema = realm.schema["ConversionSubject"] else { throw ToolError(description: "no schema") }
                return try [first, second].map { documents in
                    try realm.write {
                        for document in documents {
                            if typed {
                                let outcome = try writer.write(document, className: "ConversionSubject")
                                #expect(outcome != nil, "the writer wrote it")
                            } else {
                                let values = try writer.decoder.values(document.mapValues(\.decodableObject), schema: schema)
                                realm.createWritingDocument(ConversionSubject.self, value: values)
                            }
                        }
                    }
                    return try documents.map { document in
                        let id = try ObjectId(string: document["_id"]?["$oid"]?.stringValue ?? "")
                        let object = try realm.object(ofType: ConversionSubject.self, forPrimaryKey: id).unwrapped("object")
                        return try SyncEngine.document(of: object)
                    }
                }
            }
        }
        #expect(made[0] == made[1], "seed \(seed): written into rows, the objects differ from create's")
        #expect(made[0] == [first, second], "seed \(seed): an object does not read as the document it was written from")
    }

    /// The writer's outcomes: a new object is created, one that holds the document already is
    /// not written (no change recorded), an embedded object is updated in place, and a link to
    /// an object not in the Realm is left out and named.
    @Test func theWriterSkipsWhatAnObjectHoldsAlreadyAndNamesMissingTargets() throws {
        try withRealm([SyncDog.self, SyncPerson.self, SyncAddress.self]) { realm in
            let writer = DocumentRowWriter(realm: realm)
            let rex = ObjectId.generate(), bo = ObjectId.generate(), ana = ObjectId.generate()
            func dog(_ id: ObjectId, _ name: String) -> [String: JSONValue] {
                ["_id": .object(["$oid": .string(id.stringValue)]), "name": .string(name),
                 "age": .object(["$numberLong": .string("3")])]
            }
            var person: [String: JSONValue] = [
                "_id": .object(["$oid": .string(ana.stringValue)]), "name": .string("Ana"),
                "dog": .object(["$oid": .string(rex.stringValue)]),
                "dogs": .array([.object(["$oid": .string(rex.stringValue)]), .object(["$oid": .string(bo.stringValue)])]),
                "address": .object(["street": .null, "city": .string("Oslo")]),
                "previousAddresses": .array([.object(["street": .string("Old"), "city": .null])]),
            ]
            try realm.write {
                let created = try writer.write(dog(rex, "Rex"), className: "SyncDog")
                #expect(created?.created == true && created?.changed == true)
                #expect(created?.identity == ExtendedJSONBatchDecoder.linkTargetIdentity(className: "SyncDog", primaryKey: rex))
                let withoutBo = try writer.write(person, className: "SyncPerson")
                #expect(withoutBo?.created == true)
                #expect(writer.missingTargets == [ExtendedJSONBatchDecoder.linkTargetIdentity(className: "SyncDog",
                                                                                             primaryKey: bo)])
                _ = try writer.write(dog(bo, "Bo"), className: "SyncDog")
                let linked = try writer.write(person, className: "SyncPerson")
                #expect(linked?.created == false && linked?.changed == true, "Bo is in the list now")
                #expect(writer.missingTargets.isEmpty)
            }
            let stored = try realm.object(ofType: SyncPerson.self, forPrimaryKey: ana).unwrapped("Ana")
            #expect(try SyncEngine.document(of: stored) == person)
            let address = try stored.address.unwrapped("address")
            try realm.write {
                let again = try writer.write(person, className: "SyncPerson")
                #expect(again?.changed == false, "nothing to write")
                person["address"] = .object(["street": .null, "city": .string("Bergen")])
                let moved = try writer.write(person, className: "SyncPerson")
                #expect(moved?.changed == true)
            }
            #expect(stored.address?.city == "Bergen")
            #expect(address.isInvalidated == false && address.city == "Bergen", "the embedded object was updated in place")
            #expect(try SyncEngine.document(of: stored) == person)
            // A document the model cannot hold throws, and nothing of it is written.
            var bad = person
            bad["name"] = .object(["$numberLong": .string("1")])
            try realm.write {
                #expect(throws: Realm.Error.self) { try writer.write(bad, className: "SyncPerson") }
            }
            #expect(stored.name == "Ana")
        }
    }
}
