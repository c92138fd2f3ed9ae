import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Trellis
import TrellisSync
import TrellisSyncProtocol

/// `GET /health` and `GET /metrics` (issue 39, operations), against a real server and
/// PostgreSQL.
@Suite(.serialized)
struct OperationsTests {
    private func get(_ url: String) async throws -> (status: Int, contentType: String, body: String) {
        var request = URLRequest(url: try URL(string: url).unwrapped("URL"))
        request.timeoutInterval = 30
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = response as? HTTPURLResponse
        return (http?.statusCode ?? 0, http?.value(forHTTPHeaderField: "Content-Type") ?? "",
                String(decoding: data, as: UTF8.self))
    }

    /// The samples of a Prometheus text exposition, by metric name and labels.
    private func samples(_ text: String) -> [String: Double] {
        var values = [String: Double]()
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: " ")
            if parts.count == 2, let value = Double(parts[1]) { values[String(parts[0])] = value }
        }
        return values
    }

    @Test func metricsCountSessionsUploadsDownloadsBytesAndErrorsInPrometheusText() async throws {
        let fixture = try SyncFixture()
        let base = fixture.server.baseURL
        let before = try await get("\(base)/metrics")
        #expect(before.status == 200)
        #expect(before.contentType.hasPrefix("text/plain; version=0.0.4"))
        #expect(samples(before.body)["trellis_sync_sessions"] == 0)

        let a = try await Device(server: fixture.server)
        let b = try await Device(server: fixture.server)
        try a.write { realm in
            for index in 0..<3 { realm.add(SyncDog(value: ["name": "dog \(index)"])) }
        }
        try await a.sync()
        try await b.sync()
        #expect(try b.run { $0.objects(SyncDog.self).count } == 3)
        // A refused subscription: an error frame (226) the metrics count by code.
        let subscriptions = try b.run { $0.subscriptions }
        await #expect(throws: Realm.Error.self) {
            try await withTimeout(.seconds(20)) {
                try await subscriptions.update {
                    $0.append(QuerySubscription<SyncPerson>(name: "link", query: "dog.name == 'Rex'"))
                }
            }
        }

        let after = try await get("\(base)/metrics")
        let values = samples(after.body)
        #expect(values["trellis_sync_sessions"] == 2, "\(after.body)")
        #expect((values["trellis_sync_sessions_opened_total"] ?? 0) >= 2)
        #expect((values["trellis_sync_uploads_total"] ?? 0) >= 1)
        #expect((values["trellis_sync_downloaded_changes_total"] ?? 0) >= 3)
        #expect((values["trellis_sync_download_frames_total"] ?? 0) >= 2)
        #expect((values["trellis_sync_received_bytes_total"] ?? 0) > 0)
        #expect((values["trellis_sync_sent_bytes_total"] ?? 0) > 0)
        #expect((values["trellis_sync_history_version"] ?? 0) >= 3)
        #expect(values["trellis_sync_errors_total{code=\"226\"}"] == 1, "\(after.body)")
        #expect(values["trellis_sync_connection_failures_total"] == 0)
        // Both devices have been sent everything: no session lags.
        var lag = -1.0
        for _ in 0..<100 where lag != 0 {
            lag = samples(try await get("\(base)/metrics").body)["trellis_sync_lag_versions"] ?? -1
            if lag != 0 { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(lag == 0, "a session still lags after both devices synced")
        // Every sample belongs to a metric declared with # TYPE, and names are Prometheus names.
        let declared = Set(after.body.split(separator: "\n").filter { $0.hasPrefix("# TYPE ") }
            .map { String($0.split(separator: " ")[2]) })
        for name in values.keys {
            let metric = String(name.prefix { $0 != "{" })
            #expect(declared.contains(metric), "\(name) has no # TYPE line")
            #expect(metric.allSatisfy { $0.isLetter || $0 == "_" }, "\(name)")
        }
        await a.close()
        await b.close()
        var open = -1.0
        for _ in 0..<200 where open != 0 {
            open = samples(try await get("\(base)/metrics").body)["trellis_sync_sessions"] ?? -1
            if open != 0 { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(open == 0, "sessions still counted after both devices closed")
    }

    @Test func healthIsOkWhilePostgreSQLAnswersAndUnavailableWhenItDoesNot() async throws {
        let fixture = try SyncFixture()
        let base = fixture.server.baseURL
        let healthy = try await get("\(base)/health")
        #expect(healthy.status == 200)
        let fields = try JSONValue(jsonText: healthy.body)
        #expect(fields["status"] == .string("ok") && fields["database"] == .string("reachable"), "\(healthy.body)")
        #expect(fields["sessions"] == .int(0))
        let device = try await Device(server: fixture.server)
        try await device.sync()
        #expect(try JSONValue(jsonText: try await get("\(base)/health").body)["sessions"] == .int(1))
        // The server's database stops taking connections and its connections are ended.
        let name = try #require(fixture.database.split(separator: "/").last.map(String.init))
        try PostgresFixture.psql(PostgresFixture.url, """
            ALTER DATABASE "\(name)" ALLOW_CONNECTIONS false;
            SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = '\(name)';
            """)
        let started = ContinuousClock.now
        let down = try await get("\(base)/health")
        #expect(down.status == 503, "\(down.body)")
        #expect(try JSONValue(jsonText: down.body)["status"] == .string("unavailable"), "\(down.body)")
        // Answered in time (2 s for PostgreSQL), not when a connection attempt gives up (which
        // may be never). The bound is loose: a debug server on a loaded 2-core machine took
        // 12-17 s to answer within its 2 s budget (session 28), and a timed bound must not fail
        // on load alone.
        #expect(ContinuousClock.now - started < .seconds(30))
        try PostgresFixture.psql(PostgresFixture.url, "ALTER DATABASE \"\(name)\" ALLOW_CONNECTIONS true")
        var status = 0
        for _ in 0..<100 where status != 200 {
            status = (try? await get("\(base)/health"))?.status ?? 0
            if status != 200 { try await Task.sleep(for: .milliseconds(300)) }
        }
        #expect(status == 200, "/health did not recover after PostgreSQL took connections again")
        await device.close()
    }
}
