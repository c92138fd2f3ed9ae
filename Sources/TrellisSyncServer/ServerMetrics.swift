import Foundation
import Synchronization
import TrellisSyncProtocol

/// What `GET /metrics` reports (Prometheus text format 0.0.4, written here: a dozen counters
/// need no metrics library and no process-wide registry): sessions, uploads, downloads, bytes,
/// how far behind the slowest session is, error frames by code and failed connections. Counted
/// where frames are read and written (`main.swift`), so nothing in the session logic depends
/// on it.
final class ServerMetrics: Sendable {
    private struct Counts {
        var sessionsOpened = 0
        var messagesReceived = 0
        var bytesReceived = 0
        var bytesSent = 0
        var uploadsAcknowledged = 0
        var downloadFrames = 0
        var downloadedChanges = 0
        var errors = [Int: Int]()
        var connectionFailures = 0
        /// The newest history version sent to each open session.
        var sentVersions = [UUID: Int64]()
    }

    private let counts = Mutex(Counts())

    func sessionOpened(_ id: UUID) {
        counts.withLock {
            $0.sessionsOpened += 1
            $0.sentVersions[id] = nil
        }
    }

    func sessionEnded(_ id: UUID) { _ = counts.withLock { $0.sentVersions.removeValue(forKey: id) } }

    /// A connection that ended with an error (a reset, a protocol error), not a close.
    func connectionFailed() { counts.withLock { $0.connectionFailures += 1 } }

    func received(bytes: Int) {
        counts.withLock {
            $0.messagesReceived += 1
            $0.bytesReceived += bytes
        }
    }

    /// A frame sent to session `id`, `bytes` long.
    func sent(_ message: SyncMessage, bytes: Int, session id: UUID) {
        counts.withLock { counts in
            counts.bytesSent += bytes
            switch message {
            case .ack: counts.uploadsAcknowledged += 1
            case .download(let download):
                counts.downloadFrames += 1
                counts.downloadedChanges += download.changes.count
                counts.sentVersions[id] = max(counts.sentVersions[id] ?? 0, download.serverVersion)
            case .welcome(let welcome):
                counts.sentVersions[id] = max(counts.sentVersions[id] ?? 0, welcome.serverVersion)
            case .error(let error): counts.errors[error.code, default: 0] += 1
            default: break
            }
        }
    }

    /// The metrics as Prometheus text (format 0.0.4). `sessions`: open now; `newestVersion`: the
    /// newest history version the server has read (-1: none yet); `fanOutWakes`: sessions the
    /// fan-out woke for history they may want (``HistoryWatch/wakes``).
    func text(sessions: Int, newestVersion: Int64, fanOutWakes: Int = 0) -> String {
        let counts = counts.withLock { $0 }
        var lines = [String]()
        func metric(_ name: String, _ type: String, _ help: String, _ samples: [(labels: String, value: String)]) {
            lines.append("# HELP \(name) \(help)")
            lines.append("# TYPE \(name) \(type)")
            for sample in samples { lines.append("\(name)\(sample.labels) \(sample.value)") }
        }
        metric("trellis_sync_sessions", "gauge", "Sync sessions open now.", [("", "\(sessions)")])
        metric("trellis_sync_sessions_opened_total", "counter", "Sync sessions (WebSocket connections) opened.",
               [("", "\(counts.sessionsOpened)")])
        metric("trellis_sync_messages_received_total", "counter", "Frames received from clients.",
               [("", "\(counts.messagesReceived)")])
        metric("trellis_sync_received_bytes_total", "counter", "Bytes of frames received from clients.",
               [("", "\(counts.bytesReceived)")])
        metric("trellis_sync_sent_bytes_total", "counter", "Bytes of frames sent to clients.", [("", "\(counts.bytesSent)")])
        metric("trellis_sync_uploads_total", "counter", "Uploads acknowledged (applied, or found applied before).",
               [("", "\(counts.uploadsAcknowledged)")])
        metric("trellis_sync_download_frames_total", "counter", "Download frames sent (bootstraps and history).",
               [("", "\(counts.downloadFrames)")])
        metric("trellis_sync_downloaded_changes_total", "counter", "Object changes sent in download frames.",
               [("", "\(counts.downloadedChanges)")])
        metric("trellis_sync_fanout_wakes_total", "counter",
               "Sessions woken for new history they may want by their subscriptions and role (one per session and "
                   + "history batch read; a session is not woken for changes it can never be sent).",
               [("", "\(fanOutWakes)")])
        metric("trellis_sync_history_version", "gauge", "The newest history version this server has read.",
               [("", "\(max(newestVersion, 0))")])
        let slowest = counts.sentVersions.values.min()
        let lag = slowest.map { max(newestVersion - $0, 0) } ?? 0
        metric("trellis_sync_lag_versions", "gauge",
               "History versions the slowest open session has not been sent yet (0: every session is up to date).",
               [("", "\(lag)")])
        metric("trellis_sync_errors_total", "counter", "Error frames sent to clients, by sync error code.",
               counts.errors.sorted { $0.key < $1.key }.map { ("{code=\"\($0.key)\"}", "\($0.value)") })
        metric("trellis_sync_connection_failures_total", "counter",
               "Sync connections that ended with an error (a reset, a broken frame) rather than a close.",
               [("", "\(counts.connectionFailures)")])
        return lines.joined(separator: "\n") + "\n"
    }
}
