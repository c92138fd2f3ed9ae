import Foundation
import Testing
import Trellis
import TrellisSync
import TrellisSyncProtocol

/// An upload sent again after its acknowledgement was lost, when the outbox grew in between,
/// has other boundaries than the first sending: it starts at the same entry and ends later
/// (`uploadId` is its last entry). The server used to apply such an upload whole, since its
/// `uploadId` is newer than the last one applied: the entries it had applied were applied twice,
/// and a list insertion replayed on a list that holds it already is inserted again. Nothing is
/// lost either way (an upload is skipped only when its last entry was applied, and uploads are
/// applied in order); applying twice is what must not happen.
@Suite(.serialized)
struct UploadResendTests {
    static let task = JSONValue.object(["$oid": .string("0123456789abcdef01234567")])

    static func change(_ kind: SyncObjectChange.Kind, _ stamp: Int, _ fields: [FieldChange]) -> SyncObjectChange {
        SyncObjectChange(className: "SyncTask", primaryKey: task, kind: kind,
                         timestamp: String(format: "%016d-00000-resend", stamp), fields: fields)
    }

    /// Entry 1 creates a task with steps [a]; entry 2 appends b (sent, applied, its ack lost);
    /// entry 3 renames it. Sent again as one upload of entries 2-3, only entry 3 is applied.
    @Test func aResentUploadWithOtherBoundariesAppliesOnlyTheEntriesNotAppliedBefore() async throws {
        let fixture = try SyncFixture()
        let user = try await testApp(fixture.server.baseURL).login(credentials: .anonymous)
        let hello = RawSyncClient.hello(token: user.accessToken ?? "")
        let insert = Self.change(.insert, 1, [.set(name: "_id", value: Self.task), .set(name: "title", value: .string("t")),
                                              .list(name: "steps", base: [], value: [.string("a")])])
        let append = Self.change(.update, 2, [.list(name: "steps", base: [.string("a")], value: [.string("a"), .string("b")])])
        let rename = Self.change(.update, 3, [.set(name: "title", value: .string("renamed"))])
        let uploads = [
            SyncMessage.Upload(uploadId: 1, firstChangeId: 1, changes: [insert]),
            SyncMessage.Upload(uploadId: 2, firstChangeId: 2, changes: [append]),
            // The acknowledgement of 2 never reached the device; it sends 2 again with 3.
            SyncMessage.Upload(uploadId: 3, firstChangeId: 2, changes: [append, rename]),
        ]
        let acks = try await RawSyncClient.connect(port: fixture.server.port) { channel in
            try await channel.send(hello)
            var acks = [Int64]()
            for upload in uploads {
                try await channel.send(.upload(upload))
                let frames = try await channel.collect { if case .ack = $0 { true } else { false } }
                for case .ack(let ack) in frames { acks.append(ack.uploadId) }
            }
            try await channel.close()
            return acks
        }
        #expect(acks == [1, 2, 3])
        let row = try PostgresFixture.psql(fixture.database, "SELECT doc->>'title' || ' ' || (doc->'steps')::text FROM \"SyncTask\"")
        #expect(row == #"renamed ["a", "b"]"#, "b was appended once")
    }

    @Test func anUploadLeavesOutTheEntriesAppliedBefore() {
        let changes = (1...4).map { Self.change(.update, $0, [.set(name: "priority", value: .int(Int64($0)))]) }
        let upload = SyncMessage.Upload(uploadId: 7, firstChangeId: 4, changes: changes)
        #expect(upload.unapplied(after: 5) == SyncMessage.Upload(uploadId: 7, firstChangeId: 6, changes: Array(changes[2...])))
        #expect(upload.unapplied(after: 3) == nil, "nothing of it was applied")
        #expect(upload.unapplied(after: 7) == nil, "all of it was applied: skipped whole")
        #expect(SyncMessage.Upload(uploadId: 7, changes: changes).unapplied(after: 5) == nil, "no numbers: applied whole")
        #expect(SyncMessage.Upload(uploadId: 9, firstChangeId: 4, changes: changes).unapplied(after: 5) == nil,
                "numbers that do not match the changes: applied whole")
    }
}
