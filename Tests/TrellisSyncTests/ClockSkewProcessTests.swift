import Foundation
import Testing
import Trellis
import TrellisSync
import TrellisSyncProtocol

/// `faketime` (libfaketime, installed by `Scripts/install-deps.sh --tests`), found on PATH.
enum FakeTime {
    static var path: String? {
        let folders = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        return folders.map { "\($0)/faketime" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Under CI (`CI` set) a missing faketime is a failure, not a skip.
    static var isCI: Bool { !(ProcessInfo.processInfo.environment["CI"] ?? "").isEmpty }

    static var usable: Bool { path != nil || isCI }

    static func require() throws -> String {
        guard let path else {
            throw ToolError(description: "faketime is not installed but CI is set: run Scripts/install-deps.sh --tests "
                + "(Debian package faketime), which CI's Scripts/test.sh runs first")
        }
        return path
    }
}

/// Issue 36 item 5 with real clocks: a client process whose system clock is skewed by
/// `faketime` (LD_PRELOAD libfaketime; monotonic clocks left alone) syncs through the real
/// `trellis-sync` and PostgreSQL with a device in the test process whose clock is right.
@Suite(.serialized,
       .enabled(if: FakeTime.usable, "faketime is not installed (Scripts/install-deps.sh --tests installs it)"))
struct ClockSkewProcessTests {
    /// Runs `TrellisSyncClientHelper edit …` under `faketime OFFSET`; its standard output.
    private func editInSkewedProcess(_ fixture: SyncFixture, faketime: String, id: ObjectId, expecting: String,
                                     newTitle: String, offset: String, skewSeconds: Int) async throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("skewed-client-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let helper = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("TrellisSyncClientHelper").path
        let out = folder.appendingPathComponent("out").path, err = folder.appendingPathComponent("err").path
        let now = String(Int64(Date().timeIntervalSince1970 * 1000))
        let pid = try spawnBackground("/usr/bin/env",
                                      ["DONT_FAKE_MONOTONIC=1", faketime, "-f", offset, helper, "edit",
                                       fixture.server.baseURL, folder.path, id.stringValue, expecting, newTitle,
                                       String(skewSeconds), now],
                                      stdout: out, stderr: err)
        var status: Int32 = 0
        let started = ContinuousClock.now
        while waitpid(pid, &status, WNOHANG) == 0 {
            if ContinuousClock.now - started > .seconds(150) {
                kill(pid, SIGKILL)
                _ = waitpid(pid, &status, 0)
                throw ToolError(description: "the skewed client did not finish in 150 s")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        let output = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
        let errors = (try? String(contentsOfFile: err, encoding: .utf8)) ?? ""
        guard status == 0 else {
            throw ToolError(description:
                "the client under faketime \(offset) failed (status \(status)): \(output) \(errors)")
        }
        return output
    }

    private func title(_ device: Device, _ id: ObjectId) throws -> String? {
        try device.run { $0.object(ofType: SyncTask.self, forPrimaryKey: id)?.title }
    }

    private static let tasksOnly: @Sendable (SyncSubscriptionSet) -> Void = { subs in
        subs.append(QuerySubscription<SyncTask>(name: "tasks"))
    }

    @Test func editMadeInAProcessWhoseClockIsAnHourBehindAfterSeeingAnotherDevicesEditWinsEverywhere() async throws {
        let faketime = try FakeTime.require()
        let fixture = try SyncFixture(types: [SyncTask.self])
        let a = try await Device(server: fixture.server, types: [SyncTask.self], subscriptions: Self.tasksOnly)
        let id = ObjectId.generate()
        try a.write { realm in realm.add(SyncTask(value: ["_id": id, "owner": "me", "title": "from A"])) }
        try await a.sync()
        let output = try await editInSkewedProcess(fixture, faketime: faketime, id: id, expecting: "from A",
                                                   newTitle: "from B, after A", offset: "-1h", skewSeconds: -3600)
        #expect(output.contains("skew: -3"))
        #expect(output.contains("title: from B, after A"))
        try await a.sync()
        #expect(try title(a, id) == "from B, after A")
        #expect(try PostgresFixture.psql(fixture.database, "SELECT doc->>'title' FROM \"SyncTask\"")
                == "from B, after A")
        await a.close()
    }

    /// The server's bound (`--max-clock-skew`, 300 s by default): a timestamp more than that
    /// ahead of the server's clock is set to the server's clock and logged, so a later edit made
    /// on a device with a right clock wins.
    @Test func editMadeInAProcessWhoseClockIsAnHourAheadIsSetToTheServersClock() async throws {
        let faketime = try FakeTime.require()
        let fixture = try SyncFixture(types: [SyncTask.self])
        let id = ObjectId.generate()
        let output = try await editInSkewedProcess(fixture, faketime: faketime, id: id, expecting: "-",
                                                   newTitle: "from the future", offset: "+1h", skewSeconds: 3600)
        #expect(output.contains("skew: 3"))
        #expect(output.contains("title: from the future"))
        let stored = try PostgresFixture.psql(fixture.database, "SELECT _meta->>'title' FROM \"SyncTask\"")
        let bound = HybridTimestamp(milliseconds: HybridTimestamp.milliseconds(of: Date()) + 1000, counter: 0,
                                    clientId: "").description
        #expect(!stored.isEmpty && stored < bound, "stored \(stored), server's clock + 1 s \(bound)")
        #expect(fixture.server.log.contains("ahead of the server's clock"))
        try await Task.sleep(for: .milliseconds(20))
        let a = try await Device(server: fixture.server, types: [SyncTask.self], subscriptions: Self.tasksOnly)
        try await a.sync()
        #expect(try title(a, id) == "from the future")
        try a.write { realm in realm.object(ofType: SyncTask.self, forPrimaryKey: id)?.title = "now" }
        try await a.sync()
        #expect(try PostgresFixture.psql(fixture.database, "SELECT doc->>'title' FROM \"SyncTask\"") == "now")
        await a.close()
    }
}
