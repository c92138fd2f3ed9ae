import Foundation
import Synchronization

/// The round trips a program makes to PostgreSQL, seen by a proxy in front of the database: a
/// round trip ends each time the client waits for the server, at a `Sync` message (extended
/// query protocol) or a `Query` message (simple protocol). Each is logged with the text of the
/// statement it ran (the last `Parse` before the `Sync`).
final class PostgresRoundTrips: Sendable {
    let proxy: ResettingProxy
    private let log = RoundTripLog()

    /// A proxy in front of the PostgreSQL at `url` (postgres://…:PORT/…); `url(of:)` gives a
    /// database's URL through it.
    init(postgres url: String) throws {
        guard let port = URLComponents(string: url)?.port else { throw ToolError(description: "no port in \(url)") }
        let log = self.log
        proxy = try ResettingProxy(targetPort: port) { FrontendMessageReader(log: log) }
    }

    /// `database` (a URL of the proxied PostgreSQL) reached through the proxy.
    func url(of database: String) throws -> String {
        guard var components = URLComponents(string: database) else { throw ToolError(description: "bad URL \(database)") }
        components.port = proxy.port
        return try components.string.unwrapped("the proxied URL")
    }

    /// The statements of the round trips so far, oldest first.
    var statements: [String] { log.entries.withLock { $0 } }

    func stop() { proxy.stop() }
}

private final class RoundTripLog: Sendable {
    let entries = Mutex<[String]>([])
}

/// Splits one connection's frontend byte stream into PostgreSQL protocol messages: the first is
/// the startup message (length first, no type byte), then a type byte and a length each.
private final class FrontendMessageReader: ProxyTap {
    private let log: RoundTripLog
    private var pending = [UInt8]()
    private var startedUp = false
    private var lastParse = ""

    init(log: RoundTripLog) { self.log = log }

    func clientSent(_ bytes: ArraySlice<UInt8>) {
        pending += bytes
        while true {
            let header = startedUp ? 5 : 4
            guard pending.count >= header else { return }
            let lengthAt = startedUp ? 1 : 0
            let length = pending[lengthAt..<lengthAt + 4].reduce(0) { $0 << 8 | Int($1) }
            let total = lengthAt + length
            guard length >= 4, pending.count >= total else { return }
            if startedUp { read(type: pending[0], body: pending[5..<total]) }
            startedUp = true
            pending.removeFirst(total)
        }
    }

    private func read(type: UInt8, body: ArraySlice<UInt8>) {
        switch type {
        case UInt8(ascii: "P"):
            // Parse: statement name, NUL, query text, NUL, …
            let fields = body.split(separator: 0, maxSplits: 2, omittingEmptySubsequences: false)
            lastParse = fields.count > 1 ? String(decoding: fields[1], as: UTF8.self) : ""
        case UInt8(ascii: "S"):
            let text = lastParse
            log.entries.withLock { $0.append(text) }
            lastParse = ""
        case UInt8(ascii: "Q"):
            let text = String(decoding: body.prefix { $0 != 0 }, as: UTF8.self)
            log.entries.withLock { $0.append(text) }
        default: break
        }
    }
}
