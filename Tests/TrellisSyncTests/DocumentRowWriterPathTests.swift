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
}
