import Foundation
import Testing
import Trellis
import TrellisSync

/// Connections that break with a TCP reset (a dropped network path) rather than an orderly
/// close: the client reconnects and syncs on, the server ends the session, and SIGTERM still
/// stops the server. Before these were handled, a reset left the client's session "connected"
/// but deaf, and the server's session waiting forever, so the server never exited.
///
/// Each test starts a bystander process while the connection is open, as the suites running in
/// parallel start servers and tools all the time: a socket it inherited once kept the
/// connection alive through the reset (see ``ResettingProxy``).
@Suite(.serialized)
struct ConnectionFailureTests {
    /// A process started now that lives until `stop` (a `sleep`); stopped and reaped there.
    struct Bystander {
        let pid: pid_t
        init() throws { pid = try spawnBackground("/bin/sleep", ["120"], stdout: "/dev/null", stderr: "/dev/null") }
        func stop() {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        }
    }

    @Test func aClientWhoseConnectionIsResetReconnectsAndKeepsSyncing() async throws {
        let fixture = try SyncFixture()
        let proxy = try ResettingProxy(targetPort: fixture.server.port)
        let a = try await Device(baseURL: proxy.baseURL)
        let b = try await Device(server: fixture.server)
        try a.write { realm in realm.add(SyncTask(value: ["title": "before the reset"])) }
        try await a.sync()
        try await b.sync()
        #expect(try b.run { $0.objects(SyncTask.self).count } == 1)

        let bystander = try Bystander()
        defer { bystander.stop() }
        proxy.resetAll()
        try b.write { realm in realm.add(SyncTask(value: ["title": "written on b after the reset"])) }
        try await b.sync()
        #expect(try await eventually(.seconds(30)) {
            try a.run { $0.objects(SyncTask.self).where { $0.title == "written on b after the reset" }.count } == 1
        }, "a did not get b's write after the reset: \(fixture.server.log.suffix(3_000))")
        try a.write { realm in realm.add(SyncTask(value: ["title": "written on a after the reset"])) }
        #expect(try await eventually(.seconds(30)) {
            try b.run { $0.objects(SyncTask.self).where { $0.title == "written on a after the reset" }.count } == 1
        })
        await a.close()
        await b.close()
    }

    @Test func serverEndsASessionWhoseConnectionIsResetAndStillStopsOnSIGTERM() async throws {
        let fixture = try SyncFixture()
        let proxy = try ResettingProxy(targetPort: fixture.server.port)
        let device = try await Device(baseURL: proxy.baseURL)
        try device.write { realm in realm.add(SyncTask(value: ["title": "synced"])) }
        try await device.sync()

        // However the reset reaches the server (an error in its read loop or the end of the
        // stream, depending on timing), the session must end: its end is logged either way.
        let endedBefore = fixture.server.log.components(separatedBy: "a sync session ended").count
        let bystander = try Bystander()
        defer { bystander.stop() }
        proxy.resetAll()
        #expect(try await eventually(.seconds(30)) {
            fixture.server.log.components(separatedBy: "a sync session ended").count > endedBefore
        }, "the server did not end the session whose connection was reset: \(fixture.server.log.suffix(2_000))")
        // The client is connected again (through the proxy) when the server is told to stop:
        // its session is closed, and the process ends.
        try await device.sync()
        Foundation.kill(fixture.server.pid, SIGTERM)
        let stopped = try await eventually(.seconds(20)) { fixture.server.hasExited }
        #expect(stopped, "trellis-sync was still running 20 s after SIGTERM: \(fixture.server.log.suffix(2_000))")
        await device.close()
    }
}
