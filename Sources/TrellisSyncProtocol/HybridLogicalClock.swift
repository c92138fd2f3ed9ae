import Foundation

/// A hybrid logical clock timestamp: wall-clock milliseconds, a counter for events in the same
/// millisecond (or after seeing a later remote clock), and the client id breaking ties. Its
/// text form sorts as the timestamps order (fixed-width fields), so the server compares and
/// stores it as text: `"0001732512345678-00000-<clientId>"`.
public struct HybridTimestamp: Comparable, Sendable, Hashable, CustomStringConvertible {
    public var milliseconds: Int64
    public var counter: Int
    public var clientId: String

    public init(milliseconds: Int64, counter: Int, clientId: String) {
        self.milliseconds = milliseconds
        self.counter = counter
        self.clientId = clientId
    }

    public var description: String {
        let millis = String(milliseconds)
        let count = String(counter)
        return String(repeating: "0", count: max(0, 16 - millis.count)) + millis + "-"
            + String(repeating: "0", count: max(0, 5 - count.count)) + count + "-" + clientId
    }

    public init?(_ text: String) {
        let parts = text.split(separator: "-", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, let millis = Int64(parts[0]), let count = Int(parts[1]) else { return nil }
        self.init(milliseconds: millis, counter: count, clientId: String(parts[2]))
    }

    public static func < (a: HybridTimestamp, b: HybridTimestamp) -> Bool {
        (a.milliseconds, a.counter, a.clientId) < (b.milliseconds, b.counter, b.clientId)
    }
}

/// A client's clock: never goes backwards, and moves past every timestamp it has seen.
public struct HybridLogicalClock: Sendable {
    public private(set) var last: HybridTimestamp

    public init(clientId: String, last: HybridTimestamp? = nil) {
        self.last = last ?? HybridTimestamp(milliseconds: 0, counter: 0, clientId: clientId)
    }

    /// The timestamp of a new local event.
    public mutating func tick(now: Date = Date()) -> HybridTimestamp {
        let wall = Int64(now.timeIntervalSince1970 * 1000)
        if wall > last.milliseconds {
            last = HybridTimestamp(milliseconds: wall, counter: 0, clientId: last.clientId)
        } else {
            last = HybridTimestamp(milliseconds: last.milliseconds, counter: last.counter + 1, clientId: last.clientId)
        }
        return last
    }

    /// Moves past a timestamp seen from elsewhere.
    public mutating func observe(_ remote: HybridTimestamp) {
        if remote.milliseconds > last.milliseconds
            || (remote.milliseconds == last.milliseconds && remote.counter > last.counter)
        {
            last = HybridTimestamp(milliseconds: remote.milliseconds, counter: remote.counter, clientId: last.clientId)
        }
    }
}
