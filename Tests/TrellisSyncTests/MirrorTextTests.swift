import Foundation
import Testing
import Trellis
@testable import TrellisSync
import TrellisSyncProtocol
import TrellisTestSupport

/// Session 36 (issue 39): a downloaded document's mirror entry is made from the frame's own text
/// of the document (``FrameDocumentText``), not written again from the parsed document (that
/// writing was ~10 % of the client's CPU in an initial download). The entry's form stays JSON,
/// so entries written by earlier versions read as before.
@Suite(.serialized)
struct MirrorTextTests {
    /// Random download frames, written compact (as the server writes them) and pretty-printed
    /// (other spacing, other key order than the parsed document would be written in): each
    /// change's document text is the frame's bytes of it and parses to the change's document;
    /// a change whose document is not an object (none, null, another value) has none; other
    /// frames have no document text.
    @Test(arguments: [UInt64(3), 36, 2026])
    func aDownloadFramesDocumentTextIsTheFramesBytesOfEachDocument(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let pretty = JSONEncoder()
        pretty.outputFormatting = [.prettyPrinted]
        for _ in 0..<40 {
            let changes = (0..<Int.random(in: 0...6, using: &random)).map { index in
                ServerChange(className: "C\(index)", primaryKey: .int(Int64(index)),
                             document: Bool.random(using: &random) ? nil : SyncCodingTests.value(&random, depth: 1),
                             serverVersion: Int64(index), timestamp: nil)
            }
            let download = SyncMessage.Download(changes: changes, serverVersion: 7, completesSubscriptionVersion: nil,
                                                hasMore: false)
            let compact = SyncCoding.encode(.download(download))
            let spaced = String(decoding: try pretty.encode(SyncMessage.download(download)), as: UTF8.self)
            for text in [compact, spaced] {
                let frame = try SyncCoding.decodeNotingDocumentText(text)
                guard case .download(let decoded) = frame.message else {
                    Issue.record("not a download")
                    continue
                }
                let documents = try #require(frame.documents)
                for (index, change) in decoded.changes.enumerated() {
                    let documentText = documents.change(at: index)?.document
                    guard let document = change.document, case .object = document else {
                        #expect(documentText == nil)
                        continue
                    }
                    let bytes = try #require(documentText)
                    #expect(try JSONValue(jsonBytes: bytes) == document)
                    let keyText = try #require(documents.change(at: index)?.primaryKey)
                    #expect(try JSONValue(jsonBytes: keyText) == change.primaryKey)
                    // The frame's own bytes: found as they are in the frame's text.
                    #expect(text.utf8.count >= bytes.count && Array(text.utf8)[bytes.startIndex..<bytes.endIndex] == bytes)
                }
                #expect(documents.change(at: decoded.changes.count) == nil)
            }
        }
        let ack = try SyncCoding.decodeNotingDocumentText(SyncCoding.encode(.ack(.init(uploadId: 3, serverVersion: 4))))
        #expect(ack.documents == nil)
    }

    /// A document applied from a frame whose text spaces and orders it unlike the client's
    /// writer: its mirror entry holds the frame's text of it and of its primary key; a local edit then uploads only the
    /// field edited (the mirror is what conflicts are measured against). A mirror entry as
    /// earlier versions wrote it (the document written again, keys sorted) is read the same way.
    @Test func aDownloadedMirrorEntryIsTheFramesTextAndEntriesOfEarlierVersionsStillRead() async throws {
        let fixture = try SyncFixture()
        let device = try await Device(server: fixture.server)
        try await device.sync()
        let session = try device.session
        session.suspend()
        let (framed, old) = (ObjectId.generate(), ObjectId.generate())
        let framedText = #"{ "name" : "Rex \/ \u00e9",  "age" : { "$numberLong" : "3" }, "_id" : { "$oid" : "\#(framed.stringValue)" } }"#
        let oldText = #"{"_id":{"$oid":"\#(old.stringValue)"},"age":{"$numberLong":"5"},"name":"Old"}"#
        let frame = #"{"download":{"_0":{"changes":["#
            + #"{"className":"SyncDog","document":\#(framedText),"primaryKey": { "$oid" : "\#(framed.stringValue)" },"serverVersion":0},"#
            + #"{"className":"SyncDog","document":\#(oldText),"primaryKey":{"$oid":"\#(old.stringValue)"},"serverVersion":0}"#
            + #"],"hasMore":false,"serverVersion":0}}}"#
        let decoded = try SyncCoding.decodeNotingDocumentText(frame)
        guard case .download(let download) = decoded.message else {
            Issue.record("not a download")
            return
        }
        let engine = session.engine
        let documents = decoded.documents
        try await engine.onQueue { try engine.apply(download, documentText: documents) }

        let oldEntry = #"{"document":\#(oldText),"primaryKey":{"$oid":"\#(old.stringValue)"}}"#
        let keys = try device.run { realm -> (UInt64, UInt64) in
            let framedDog = try #require(realm.object(ofType: SyncDog.self, forPrimaryKey: framed))
            let oldDog = try #require(realm.object(ofType: SyncDog.self, forPrimaryKey: old))
            #expect(framedDog.name == "Rex / é" && framedDog.age == 3 && oldDog.name == "Old" && oldDog.age == 5)
            return (try #require(realm.syncObjectKey(framedDog)), try #require(realm.syncObjectKey(oldDog)))
        }
        try device.run { realm in
            let stored = realm.syncStoreGet(SyncStoreLayout.mirror("SyncDog", keys.0)).map { String(decoding: $0, as: UTF8.self) }
            #expect(stored == #"{"document":\#(framedText),"primaryKey":{ "$oid" : "\#(framed.stringValue)" }}"#)
            // The second object's entry as an earlier version wrote it.
            try realm.write { try realm.syncStorePut(SyncStoreLayout.mirror("SyncDog", keys.1), Array(oldEntry.utf8)) }
            #expect(MirrorEntry(jsonBytes: Array(oldEntry.utf8))?.document == (try JSONValue(jsonText: oldText)).objectValue)
        }
        try device.write { realm in
            realm.object(ofType: SyncDog.self, forPrimaryKey: framed)?.name = "Max"
            realm.object(ofType: SyncDog.self, forPrimaryKey: old)?.name = "Older"
        }
        let queued = try device.run { realm in
            realm.syncStoreEntries(prefix: SyncStoreLayout.outboxPrefix).compactMap { SyncStoreLayout.outboxChange($0.value) }
        }
        let edits = Dictionary(queued.map { ($0.primaryKey, $0) }, uniquingKeysWith: { $1 })
        for (id, name) in [(framed, "Max"), (old, "Older")] {
            let edit = edits[.object(["$oid": .string(id.stringValue)])]
            #expect(edit?.kind == .update && edit?.fields == [.set(name: "name", value: .string(name))],
                    "\(name): \(String(describing: edit))")
        }
        #expect(queued.count == 2)
        session.resume()
        await device.close()
    }
}
