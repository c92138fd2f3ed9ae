import Foundation
import Hummingbird
import HummingbirdWebSocket
import Synchronization
import TrellisSyncProtocol

/// Endpoints for operators, without authentication (they reveal counts, no data; keep them
/// from the outside at the proxy if the counts are private):
/// - `GET /health`: 200 `{"status":"ok","database":"reachable","sessions":N}` when PostgreSQL
///   answers a query within 2 s, else 503 with `"status":"unavailable"` and the reason, so a
///   load balancer takes the server out of rotation; 503 with `"status":"draining"` once a
///   SIGTERM started the shutdown (``GracefulShutdown``).
/// - `GET /metrics`: ``ServerMetrics`` in Prometheus' text format (version 0.0.4).
enum OperationsRoutes {
    /// How long `/health` waits for PostgreSQL.
    static let healthTimeout = Duration.seconds(2)

    static func add(to router: Router<BasicWebSocketRequestContext>, store: PostgresStore, watch: HistoryWatch,
                    metrics: ServerMetrics, shutdown: GracefulShutdown) {
        router.get("/health") { _, _ -> Response in
            let sessions = JSONValue.int(Int64(watch.sessionCount))
            if shutdown.isDraining {
                return json(.serviceUnavailable, ["status": .string("draining"), "sessions": sessions])
            }
            switch await databaseAnswers(store) {
            case nil:
                return json(.ok, ["status": .string("ok"), "database": .string("reachable"), "sessions": sessions])
            case let reason?:
                return json(.serviceUnavailable, ["status": .string("unavailable"), "database": .string("unreachable"),
                                                  "reason": .string(reason), "sessions": sessions])
            }
        }
        router.get("/metrics") { _, _ -> Response in
            let text = metrics.text(sessions: watch.sessionCount, newestVersion: watch.newestVersion,
                                    fanOutWakes: watch.wakes)
            return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                            body: .init(byteBuffer: ByteBuffer(string: text)))
        }
    }

    /// Nil when PostgreSQL answers a query within ``healthTimeout``, else why not. The query is
    /// not awaited past the timeout (a connection attempt to a database that is down may not
    /// end at once), so the answer comes in time whatever PostgreSQL does.
    static func databaseAnswers(_ store: PostgresStore) async -> String? {
        let outcome = Mutex<CheckedContinuation<String?, Never>?>(nil)
        return await withCheckedContinuation { continuation in
            outcome.withLock { $0 = continuation }
            let finish: @Sendable (String?) -> Void = { reason in
                outcome.withLock { pending in
                    pending?.resume(returning: reason)
                    pending = nil
                }
            }
            let query = Task {
                do {
                    _ = try await store.latestVersion()
                    finish(nil)
                } catch {
                    finish("PostgreSQL did not answer: \(error)")
                }
            }
            Task {
                try? await Task.sleep(for: healthTimeout)
                query.cancel()
                finish("PostgreSQL did not answer within \(healthTimeout)")
            }
        }
    }

    private static func json(_ status: HTTPResponse.Status, _ fields: [String: JSONValue]) -> Response {
        Response(status: status, headers: [.contentType: "application/json"],
                 body: .init(byteBuffer: ByteBuffer(string: JSONValue.object(fields).jsonText)))
    }
}
