import Foundation
import Testing
@testable import Trellis
@testable import TrellisSync
import TrellisSyncProtocol
import TrellisTestSupport

// Issue 39 (session 37): the download's row writer (`DocumentRowWriter`) made cheaper per
// object. Each step keeps what it produces: the identities the unresolved-link records are keyed
// by, the ObjectIds it reads, the lists it stores.

@Suite struct DocumentRowWriterPathTests {
    /// An object's identity, written without `String(describing:)` of an `Any`, is the text
    /// `ExtendedJSONBatchDecoder.linkTargetIdentity` gives for its primary key: the records of
    /// unresolved links in a file are keyed by it, whichever version wrote them.
    @Test func anObjectsIdentityIsTheLinkTargetIdentityOfItsPrimaryKey() {
        var random = SplitMix64(seed: 37)
        for _ in 0..<200 {
            let id = ObjectId.generate()
            #expect(id.hexDigits == id.stringValue)
            #expect(DocumentRowWriter.identity("SyncDog", .objectId(id))
                == ExtendedJSONBatchDecoder.linkTargetIdentity(className: "SyncDog", primaryKey: id))
            let int = Int(bitPattern: UInt(random.next()))
            #expect(DocumentRowWriter.identity("SyncTask", .int(Int64(int)))
                == ExtendedJSONBatchDecoder.linkTargetIdentity(className: "SyncTask", primaryKey: int))
            let uuid = UUID()
            #expect(DocumentRowWriter.identity("U", .uuid(uuid))
                == ExtendedJSONBatchDecoder.linkTargetIdentity(className: "U", primaryKey: uuid))
        }
        for int in [0, 1, -1, Int.min, Int.max] {
            #expect(DocumentRowWriter.identity("T", .int(Int64(int)))
                == ExtendedJSONBatchDecoder.linkTargetIdentity(className: "T", primaryKey: int))
        }
        for string in ["", "a", "späť", "\u{0}x", String(repeating: "long ", count: 40), "🐕"] {
            #expect(DocumentRowWriter.identity("S", .string(string))
                == ExtendedJSONBatchDecoder.linkTargetIdentity(className: "S", primaryKey: string))
        }
        #expect(ObjectId().hexDigits == "000000000000000000000000")
        #expect(ObjectId("ffffffffffffffffffffffff").hexDigits == "ffffffffffffffffffffffff")
    }

    /// The writer reads an `$oid` from its text's bytes (`ObjectId(hexDigits:)`): the same
    /// ObjectId as `ObjectId(string:)`, either case, and nothing where that throws.
    @Test func anObjectIdReadFromItsDigitsIsTheOneObjectIdStringReads() throws {
        for _ in 0..<200 {
            let id = ObjectId.generate()
            #expect(ObjectId(hexDigits: id.stringValue) == id)
            #expect(ObjectId(hexDigits: id.stringValue.uppercased()) == id)
        }
        let texts = ["", "0", String(repeating: "a", count: 23), String(repeating: "a", count: 25),
                     "00000000000000000000000g", "0000000000000000000000 0", "0x0000000000000000000000",
                     "00000000000000000000000\u{FF10}", "é00000000000000000000000", "ABCDEFabcdef012345678900",
                     "ffffffffffffffffffffffff", "000000000000000000000000", "GGGGGGGGGGGGGGGGGGGGGGGG"]
        for text in texts {
            #expect(ObjectId(hexDigits: text) == (try? ObjectId(string: text)), "\(text)")
        }
        // Text not stored as native UTF-8 (bridged from Foundation) reads the same.
        let bridged = NSString(string: "0123456789abcdefABCDEF01") as String
        #expect(ObjectId(hexDigits: bridged) == (try ObjectId(string: "0123456789abcdefABCDEF01")))
    }

    /// A wrapper's text as the download reads it (a one-member document's member compared by
    /// name, not hashed) is what the document's member `key` holds, for every shape of node.
    @Test func aWrappersTextIsItsMembersText() {
        let nodes: [JSONValue] = [
            .object(["$oid": .string("abc")]), .object(["$numberLong": .string("5")]), .object(["$oid": .int(5)]),
            .object(["$oid": .null]), .object([:]), .object(["$oid": .string("a"), "other": .string("b")]),
            .object(["other": .string("b"), "x": .null]), .string("$oid"), .null, .array([.string("abc")]),
            .object(["$oid": .object(["$oid": .string("nested")])]),
        ]
        for node in nodes {
            for key in ["$oid", "$numberLong", "other", ""] {
                #expect(node.wrapped(key) == node.objectValue?[key]?.stringValue, "\(node) \(key)")
            }
        }
    }

    /// A new object's list of embedded objects (stored from its children's keys, as a new
    /// owner's list of links) is stored as an existing object's list written through
    /// `listSplice`: the same header and chunk entries (lengths around a chunk's 256 elements),
    /// each child linked once from its owner; the file stays consistent when the list later
    /// shrinks (surplus children deleted) and grows.
    @Test func aNewObjectsEmbeddedListIsStoredAsAnExistingObjectsListIs() throws {
        try withRealm([SyncDog.self, SyncPerson.self, SyncAddress.self]) { realm in
            let writer = DocumentRowWriter(realm: realm)
            func person(_ id: ObjectId, _ addresses: Int) -> [String: JSONValue] {
                ["_id": .object(["$oid": .string(id.stringValue)]), "name": .string("P"), "dog": .null, "dogs": .array([]),
                 "address": .null,
                 "previousAddresses": .array((0..<addresses).map { .object(["street": .string("s\($0)"), "city": .null]) })]
            }
            func entries(_ id: ObjectId) throws -> [[UInt8]: [UInt8]] {
                let stored = try #require(realm.object(ofType: SyncPerson.self, forPrimaryKey: id))
                let location = try #require(stored.previousAddresses.storage.binding).location
                var entries: [[UInt8]: [UInt8]] = [:]
                for entry in realm.core.collectionEntries(prefix: location.ownerPrefix) {
                    entries[Array(entry.key.dropFirst(CollectionKey.ownerSize))] = Array(entry.value)
                }
                return entries
            }
            for length in [0, 1, 2, 255, 256, 257, 600] {
                let new = ObjectId.generate(), existing = ObjectId.generate()
                try realm.write {
                    #expect(try writer.write(person(new, length), className: "SyncPerson")?.created == true)
                    _ = try writer.write(person(existing, 0), className: "SyncPerson")
                    #expect(try writer.write(person(existing, length), className: "SyncPerson")?.changed == (length > 0))
                }
                let made = try entries(new), spliced = try entries(existing)
                #expect(made.count == (length + 255) / 256 + (length > 0 ? 1 : 0), "length \(length)")
                #expect(Set(made.keys) == Set(spliced.keys), "length \(length)")
                for (key, bytes) in made {
                    // A chunk holds other children's keys than its twin's, in as many bytes.
                    #expect(bytes.count == spliced[key]?.count, "length \(length)")
                }
                let stored = try #require(realm.object(ofType: SyncPerson.self, forPrimaryKey: new))
                #expect(stored.previousAddresses.map(\.street) == (0..<length).map { "s\($0)" })
                #expect(try SyncEngine.document(of: stored) == person(new, length))
                for address in stored.previousAddresses {
                    let managed = try #require(address._managed)
                    let backlinks = realm.core.backlinks(to: managed.table, key: managed.key)
                    #expect(backlinks.map(\.count) == [1] && backlinks.first?.key.originKey == stored._managed?.key)
                }
                #expect(realm._consistencyProblems().isEmpty, "length \(length)")
                try realm.write {
                    _ = try writer.write(person(new, length / 2), className: "SyncPerson")
                    _ = try writer.write(person(existing, length + 3), className: "SyncPerson")
                }
                #expect(stored.previousAddresses.count == length / 2)
                #expect(realm._consistencyProblems().isEmpty, "length \(length), resized")
            }
        }
    }
}
