import Foundation
import Logging
import Synchronization
import Testing
import Trellis
import TrellisSync
import TrellisSyncProtocol
import WSClient

/// SIGTERM drains a server (issue 39, docs/SYNC.md "Operations"): it stops accepting, applies
/// and acknowledges what its sessions received, closes them with 1001 (going away) and exits
/// within its bound; nothing acknowledged is lost, and clients go on with a second server of
/// the same database.
@Suite(.serialized)
struct GracefulShutdownTests {
    /// What the raw client saw of the first server.
    final class Seen: Sendable {
        let acked = Mutex<[Int64]>([])
        let signalled = Atomic<Bool>(false)
    }

    static func dogUpload(_ id: Int64) -> SyncMessage {
        let key = JSONValue.object(["$oid": .string(String(format: "%024llx", id))])
        return .upload(.init(uploadId: id, changes: [
            SyncObjectChange(className: "SyncDog", primaryKey: key, kind: .insert,
                             timestamp: String(format: "%016lld-00000-drain", id),
                             fields: [.set(name: "_id", value: key), .set(name: "name", value: .string("dog \(id)"))]),
        ]))
    }

    static func storedDogIds(_ database: String) throws -> Set<String> {
        Set(try PostgresFixture.psql(database, "SELECT _id FROM \"SyncDog\"").split(separator: "\n").map(String.init))
    }

    @Test func sigtermMidUploadLosesNothingAcknowledgedClosesWith1001AndClientsGoOnWithASecondServer() async throws {
        let database = try PostgresFixture.makeDatabase()
        let schema = try makeSchemaFile()
        // Slowed to 20 messages a second (the default is 100 since session 28), so uploads are
        // still arriving when the signal comes.
        let first = try ServerProcess(database: database, schema: schema,
                                      arguments: ["--shutdown-timeout", "10", "--max-messages-per-second", "20"])
        let second = try ServerProcess(database: database, schema: schema,
                                       arguments: ["--max-messages-per-second", "1000"])
        defer { second.kill() }
        // A device on the first server through a proxy (its address stays when the server changes).
        let proxy = try ResettingProxy(targetPort: first.port)
        let device = try await Device(baseURL: proxy.baseURL)
        try device.write { $0.add(SyncTask(value: ["title": "before the shutdown"])) }
        try await device.sync(timeout: .seconds(90))

        // A raw client streams 120 one-object uploads (the first server reads 20 a second);
        // after the 10th acknowledgement the server gets SIGTERM.
        let count: Int64 = 120
        let user = try await testApp(first.baseURL).login(credentials: .anonymous)
        let hello = RawSyncClient.hello(token: user.accessToken ?? "", clientId: "drain-client")
        let seen = Seen()
        let firstPid = first.pid
        let close = try await withTimeout(.seconds(120)) {
            try await WebSocketClient.connect(url: "ws://127.0.0.1:\(first.port)/api/client/v2.0/app/trellis/realm-sync",
                                              configuration: .init(maxFrameSize: 1 << 24),
                                              logger: Logger(label: "drain")) { inbound, outbound, _ in
                try await outbound.write(.text(SyncCoding.encode(hello)))
                let sender = Task {
                    for id in 1...count { try await outbound.write(.text(SyncCoding.encode(Self.dogUpload(id)))) }
                }
                defer { sender.cancel() }
                for try await message in inbound.messages(maxSize: 1 << 24) {
                    guard case .text(let text) = message, case .ack(let ack) = try? SyncCoding.decode(text) else { continue }
                    let acked = seen.acked.withLock { $0.append(ack.uploadId); return $0.count }
                    if acked == 10, !seen.signalled.exchange(true, ordering: .relaxed) { kill(firstPid, SIGTERM) }
                }
            }
        }
        #expect(close?.closeCode == .goingAway, "close frame: \(String(describing: close))")
        // Its bound: 2 × --shutdown-timeout + 5 s after the signal (here 25 s).
        let exited = try await eventually(.seconds(40)) { first.hasExited }
        #expect(exited, "the first server did not exit: \(first.log.suffix(2_000))")
        #expect(first.log.contains("draining"), "\(first.log.suffix(2_000))")

        // Every acknowledged upload is in PostgreSQL; some were left for the second server.
        let acked = seen.acked.withLock { $0 }
        #expect(acked.count >= 10 && acked.count < Int(count), "acknowledged \(acked.count) of \(count)")
        let stored = try Self.storedDogIds(database)
        let lost = acked.filter { !stored.contains(String(format: "%024llx", $0)) }
        #expect(lost.isEmpty, "acknowledged but not stored: \(lost)")

        // The same client file goes on with the second server: it sends what was not acknowledged.
        let ackedSet = Set(acked)
        let unacknowledged = (1...count).filter { !ackedSet.contains($0) }
        let secondAcks = try await RawSyncClient.connect(port: second.port, timeout: .seconds(120)) { channel in
            try await channel.send(hello)
            for id in unacknowledged { try await channel.send(Self.dogUpload(id)) }
            var acks = 0
            while acks < unacknowledged.count, let frame = try await channel.next() {
                if case .ack = frame { acks += 1 }
            }
            try await channel.close()
            return acks
        }
        #expect(secondAcks == unacknowledged.count)
        #expect(try Self.storedDogIds(database).count == Int(count))

        // The device's session was closed too; it reconnects, now to the second server.
        proxy.retarget(to: second.port)
        try device.write { $0.add(SyncTask(value: ["title": "after the shutdown"])) }
        try await device.sync(timeout: .seconds(90))
        #expect(try PostgresFixture.psql(database, "SELECT count(*) FROM \"SyncTask\"") == "2")
        let other = try await Device(server: second)
        try await other.sync(timeout: .seconds(90))
        #expect(try other.run { Set($0.objects(SyncTask.self).map(\.title)) } == ["before the shutdown", "after the shutdown"])
        await device.close()
        await other.close()
    }
}
