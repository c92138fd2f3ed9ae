import Foundation

/// A hybrid logical clock timestamp: wall-clock milliseconds, a counter for events in the same
/// millisecond (or after seeing a later remote clock), and the client id breaking ties. Its
/// text form sorts as the timestamps order (fixed-width fields), so the server compares and
/// stores it as text: `"0001732512345678-00000-<clientId>"`.
public struct HybridTimestamp: Comparable, Sendable, Hashable, CustomStringConvertible {
    public var milliseconds: Int64
    public var counter: Int
    public var clientId: String

    /// The largest counter the text form holds (five digits); the clock moves to the next
    /// millisecond instead of going past it, so the text still sorts as the timestamps do.
    public static let maxCounter = 99_999
    /// The largest milliseconds the text form holds (sixteen digits).
    public static let maxMilliseconds: Int64 = 9_999_999_999_999_999

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

    /// Reads the text form: exactly sixteen digits, `-`, five digits, `-`, and a client id of
    /// 1-64 printable ASCII characters. Anything else (`"~~~~"`, a sign, a short field, which
    /// would sort out of order) is nil.
    public init?(_ text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count >= 24, bytes.count <= 23 + 64, bytes[16] == UInt8(ascii: "-"), bytes[22] == UInt8(ascii: "-"),
              bytes[0..<16].allSatisfy(Self.isDigit), bytes[17..<22].allSatisfy(Self.isDigit),
              bytes[23...].allSatisfy({ $0 > 0x20 && $0 < 0x7f }),
              let millis = Int64(String(decoding: bytes[0..<16], as: UTF8.self)),
              let count = Int(String(decoding: bytes[17..<22], as: UTF8.self))
        else { return nil }
        self.init(milliseconds: millis, counter: count, clientId: String(decoding: bytes[23...], as: UTF8.self))
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    public static func < (a: HybridTimestamp, b: HybridTimestamp) -> Bool {
        (a.milliseconds, a.counter, a.clientId) < (b.milliseconds, b.counter, b.clientId)
    }

    /// The wall-clock milliseconds of a date, as the clocks count them.
    public static func milliseconds(of date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    }
}

/// A client's clock: never goes backwards, and moves past every timestamp it has seen, so an
/// edit made after seeing another device's edit is later than it whatever the two devices'
/// wall clocks say (a device an hour behind still wins with the edit it made after).
public struct HybridLogicalClock: Sendable {
    public private(set) var last: HybridTimestamp

    public init(clientId: String, last: HybridTimestamp? = nil) {
        self.last = last ?? HybridTimestamp(milliseconds: 0, counter: 0, clientId: clientId)
        self.last.clientId = clientId
    }

    /// The timestamp of a new local event at wall-clock time `now`.
    public mutating func tick(now: Date = Date()) -> HybridTimestamp {
        let wall = HybridTimestamp.milliseconds(of: now)
        if wall > last.milliseconds {
            last = HybridTimestamp(milliseconds: wall, counter: 0, clientId: last.clientId)
        } else {
            last = Self.next(after: last.milliseconds, last.counter, clientId: last.clientId)
        }
        return last
    }

    /// Moves past a timestamp seen from elsewhere (a download, another device's edit).
    public mutating func observe(_ remote: HybridTimestamp) {
        if remote.milliseconds > last.milliseconds
            || (remote.milliseconds == last.milliseconds && remote.counter > last.counter)
        {
            last = HybridTimestamp(milliseconds: remote.milliseconds, counter: remote.counter, clientId: last.clientId)
        }
    }

    /// Observes a timestamp in text form; text that is not a timestamp is ignored.
    public mutating func observe(_ text: String) {
        if let remote = HybridTimestamp(text) { observe(remote) }
    }

    /// The timestamp right after (`milliseconds`, `counter`): the counter plus one, or the next
    /// millisecond when the counter is full.
    static func next(after milliseconds: Int64, _ counter: Int, clientId: String) -> HybridTimestamp {
        counter >= HybridTimestamp.maxCounter
            ? HybridTimestamp(milliseconds: milliseconds + 1, counter: 0, clientId: clientId)
            : HybridTimestamp(milliseconds: milliseconds, counter: counter + 1, clientId: clientId)
    }
}

/// How the server bounds the timestamps of uploads (`--max-clock-skew`): text that is not a
/// timestamp is refused, a timestamp further ahead of the server's clock than the allowed skew
/// is brought back to the server's clock (so a device whose clock runs days ahead cannot make
/// its edits win over every later edit), and the client id part is the uploading client's.
public struct TimestampBounds: Sendable {
    /// How far ahead of the server's clock a timestamp may be, in milliseconds.
    public var maxSkewMilliseconds: Int64

    public init(maxSkewMilliseconds: Int64) { self.maxSkewMilliseconds = maxSkewMilliseconds }

    /// The outcome of checking one timestamp.
    public enum Outcome: Equatable, Sendable {
        case accepted(String)
        /// Ahead of the server by more than the skew: the server's clock instead.
        case clamped(String)
        case refused(String)
    }

    public func check(_ text: String, clientId: String, now: Date) -> Outcome {
        guard var stamp = HybridTimestamp(text) else {
            return .refused("the timestamp '\(text.prefix(80))' is not a hybrid logical clock timestamp "
                + "(16 digits, '-', 5 digits, '-', client id)")
        }
        if !clientId.isEmpty, HybridTimestamp(HybridTimestamp(milliseconds: 0, counter: 0, clientId: clientId).description) != nil {
            stamp.clientId = clientId
        }
        let serverNow = HybridTimestamp.milliseconds(of: now)
        if stamp.milliseconds > serverNow + maxSkewMilliseconds {
            stamp.milliseconds = serverNow
            return .clamped(stamp.description)
        }
        return .accepted(stamp.description)
    }
}
