/// The per-connection rate limits (`--max-messages-per-second`, `--max-bytes-per-second`):
/// two token buckets, each holding one second of its rate (the byte bucket at least one
/// message of `--max-message-bytes`, so the largest allowed message always goes through).
///
/// A connection over its budget is slowed, not disconnected: the server stops reading its
/// socket until the budget has refilled (TCP then holds back the client), and handles the
/// message after that wait. An honest client coming back after days offline sends its backlog
/// in a burst and only takes longer; an error would make it reconnect and send the same again.
/// A hostile client gains nothing: what it sends is handled at the configured rate at most.
struct ConnectionRateLimit: Sendable {
    let messagesPerSecond: Double
    let bytesPerSecond: Double
    private let messageCapacity: Double
    private let byteCapacity: Double
    private var messageTokens: Double
    private var byteTokens: Double
    private var last: ContinuousClock.Instant?

    init(messagesPerSecond: Int, bytesPerSecond: Int, maxMessageBytes: Int) {
        self.messagesPerSecond = Double(messagesPerSecond)
        self.bytesPerSecond = Double(bytesPerSecond)
        messageCapacity = Double(messagesPerSecond)
        byteCapacity = Double(max(bytesPerSecond, maxMessageBytes))
        messageTokens = messageCapacity
        byteTokens = byteCapacity
    }

    /// Spends one message of `bytes` received at `now`; how long to wait before handling it
    /// (zero within the budget).
    mutating func delay(forMessageOf bytes: Int, at now: ContinuousClock.Instant) -> Duration {
        if let last {
            let elapsed = Self.seconds(now - last)
            messageTokens = min(messageCapacity, messageTokens + elapsed * messagesPerSecond)
            byteTokens = min(byteCapacity, byteTokens + elapsed * bytesPerSecond)
        }
        last = now
        messageTokens -= 1
        byteTokens -= Double(bytes)
        let wait = max(0, -messageTokens / messagesPerSecond, -byteTokens / bytesPerSecond)
        return .nanoseconds(Int64((wait * 1e9).rounded(.up)))
    }

    private static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
