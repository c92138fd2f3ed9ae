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
        /// The largest upload id the client began to send.
        let attempted = Atomic<Int64>(0)
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

        // A raw client sends 40 one-object uploads at once, then 40 a second, twice as fast as
        // the first server reads them, and goes on until the server closes the session; after
        // the 10th acknowledgement the server gets SIGTERM. However late a loaded machine
        // delivers the signal, uploads are still waiting when the server drains: some are
        // acknowledged, the rest are left for the second server.
        let limit: Int64 = 4_000
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
                    for id in 1...limit {
                        seen.attempted.store(id, ordering: .relaxed)
                        try await outbound.write(.text(SyncCoding.encode(Self.dogUpload(id))))
                        if id >= 40 { try await Task.sleep(for: .milliseconds(25)) }
                    }
                }
                for try await message in inbound.messages(maxSize: 1 << 24) {
                    guard case .text(let text) = message, case .ack(let ack) = try? SyncCoding.decode(text) else { continue }
                    let acked = seen.acked.withLock { $0.append(ack.uploadId); return $0.count }
                    if acked == 10, !seen.signalled.exchange(true, ordering: .relaxed) { kill(firstPid, SIGTERM) }
                }
                sender.cancel()
                _ = await sender.result
            }
        }
        #expect(close?.closeCode == .goingAway, "close frame: \(String(describing: close))")
        // Its bound: 2 × --shutdown-timeout + 5 s after the signal (here 25 s).
        let exited = try await eventually(.seconds(40)) { first.hasExited }
        #expect(exited, "the first server did not exit: \(first.log.suffix(2_000))")
        #expect(first.log.contains("draining"), "\(first.log.suffix(2_000))")

        // Every acknowledged upload is in PostgreSQL; some were left for the second server (the
        // client was still sending when the session closed).
        let acked = seen.acked.withLock { $0 }
        let count = seen.attempted.load(ordering: .relaxed)
        #expect(count < limit, "the client sent all \(limit) uploads before the session closed")
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

    /// The processes of a PostgreSQL cluster: its postmaster (from `DIR/data/postmaster.pid`)
    /// and the backends and workers it started.
    static func clusterProcesses(_ folder: URL) throws -> [pid_t] {
        let pidFile = try String(contentsOf: folder.appendingPathComponent("data/postmaster.pid"), encoding: .utf8)
        let postmaster = try pid_t(pidFile.split(separator: "\n").first.map(String.init) ?? "").unwrapped("the postmaster's pid")
        var processes = [postmaster]
        for entry in try FileManager.default.contentsOfDirectory(atPath: "/proc") {
            guard let pid = pid_t(entry),
                  let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { continue }
            // "pid (command) state ppid ...": the parent follows the state.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 1, pid_t(fields[1]) == postmaster { processes.append(pid) }
        }
        return processes
    }

    /// A throwaway PostgreSQL whose processes `body` may stop (`stop()` sends SIGSTOP to the
    /// postmaster and its backends: it keeps every connection open and answers nothing, as a
    /// database host that hangs does); continued and removed when `body` returns.
    private func withHangingPostgres(_ body: (_ databaseURL: String, _ stop: () throws -> Void) async throws -> Void)
        async throws
    {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("trellis-hung-pg-\(UUID().uuidString)")
        var stopped = [pid_t]()
        defer {
            for pid in stopped { kill(pid, SIGCONT) }
            _ = try? runTool("/bin/bash", [PostgresFixture.scriptPath, "stop", folder.path])
            try? FileManager.default.removeItem(at: folder)
        }
        let base = try runTool("/bin/bash", [PostgresFixture.scriptPath, "start", folder.path])
            .split(separator: "\n").last.map(String.init).unwrapped("the PostgreSQL's URL")
        try PostgresFixture.psql(base, "CREATE DATABASE hung")
        let slash = try base.lastIndex(of: "/").unwrapped("a slash in \(base)")
        try await body(String(base[...slash]) + "hung") {
            stopped = try Self.clusterProcesses(folder)
            for pid in stopped { kill(pid, SIGSTOP) }
        }
    }

    /// Waits for `pid` to end, at most `limit`; how long it took (nil: it did not end).
    static func waitForExit(_ hasExited: () -> Bool, limit: Duration) async throws -> Duration? {
        let start = ContinuousClock.now
        let exited = try await eventually(limit, interval: .milliseconds(50)) { hasExited() }
        return exited ? ContinuousClock.now - start : nil
    }

    @Test func sigtermExitsWithinItsBoundWhenPostgreSQLStopsAnswering() async throws {
        try await withHangingPostgres { database, stopPostgres in
            let timeout = 2
            let server = try ServerProcess(database: database, schema: try makeSchemaFile(),
                                           arguments: ["--shutdown-timeout", String(timeout)])
            // A device with an open session: the server holds connections (its history watch's
            // LISTEN among them) when PostgreSQL stops.
            let device = try await Device(server: server)
            try device.write { $0.add(SyncDog(value: ["name": "Rex"])) }
            try await device.sync()
            try stopPostgres()
            // The history watch's poll (every second) now waits for PostgreSQL.
            try await Task.sleep(for: .seconds(2))
            kill(server.pid, SIGTERM)
            let bound = Duration.seconds(2 * timeout + 5)
            // Waited for longer than the bound (a loaded machine delays a process), then held to it.
            let took = try await Self.waitForExit({ server.hasExited }, limit: bound + .seconds(15))
            #expect(took.map { $0 < bound + .seconds(2) } == true,
                    "the server exited \(String(describing: took)) after SIGTERM (bound \(bound)): \(server.log.suffix(2_000))")
            #expect(server.log.contains("signal 15: draining"), "\(server.log.suffix(2_000))")
            device.quit()
        }
    }

    @Test func sigtermWhileTheDatabaseSetupWaitsForAHungPostgreSQLExitsWithinItsBound() async throws {
        try await withHangingPostgres { database, stopPostgres in
            try stopPostgres()
            // Started by hand: it never says it listens (ServerProcess waits for that).
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("hung-setup-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let timeout = 2
            let pid = try spawnBackground(ServerProcess.executable.path, [
                "--postgres", database, "--schema", try makeSchemaFile().path, "--port", "0", "--jwt-key", testJWTKey,
                "--allow-all", "--auth", "anonymous", "--parent-pid", String(getpid()), "--shutdown-timeout", String(timeout),
            ], stdout: folder.appendingPathComponent("out").path, stderr: folder.appendingPathComponent("err").path)
            var reaped = false
            defer { if !reaped { kill(pid, SIGKILL); waitpid(pid, nil, 0) } }
            let hasExited = {
                if !reaped { reaped = waitpid(pid, nil, WNOHANG) == pid }
                return reaped
            }
            // The setup waits for PostgreSQL (it gives up after 30 s by itself).
            try await Task.sleep(for: .seconds(2))
            #expect(!hasExited(), "the server ended before the signal")
            kill(pid, SIGTERM)
            let bound = Duration.seconds(2 * timeout + 5)
            let took = try await Self.waitForExit(hasExited, limit: bound + .seconds(30))
            let log = (try? String(contentsOf: folder.appendingPathComponent("err"), encoding: .utf8)) ?? ""
            #expect(took.map { $0 < bound + .seconds(2) } == true,
                    "the server exited \(String(describing: took)) after SIGTERM (bound \(bound)): \(log.suffix(2_000))")
            #expect(log.contains("signal 15"), "\(log.suffix(2_000))")
        }
    }
}
