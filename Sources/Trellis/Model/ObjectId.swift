import Foundation
import Synchronization

/// A 12-byte MongoDB ObjectId: a 4-byte timestamp, 5 random bytes, and a 3-byte counter.
///
/// `ObjectId()` is the zero id, as in Realm; use ``generate()`` for a new unique id (a
/// `@Persisted var _id: ObjectId` with no default gets a generated one).
///
/// ```swift
/// let id = ObjectId.generate()
/// let same = try ObjectId(string: id.stringValue)
/// ```
public struct ObjectId: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The 12 bytes, big-endian as in BSON.
    public let bytes: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8)

    /// The zero ObjectId (`000000000000000000000000`).
    public init() {
        bytes = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    }

    /// Creates an ObjectId from exactly 12 bytes; returns nil for any other count.
    public init?<Bytes: Collection<UInt8>>(bytes source: Bytes) {
        guard source.count == 12 else { return nil }
        let b = Array(source)
        bytes = (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11])
    }

    /// Parses 24 hexadecimal characters.
    ///
    /// - Throws: ``Realm/Error`` with code ``Realm/Error/Code/invalidValue`` when the string is
    ///   not 24 hex characters.
    public init(string: String) throws {
        let utf8 = Array(string.utf8)
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case 48...57: c - 48
            case 65...70: c - 55
            case 97...102: c - 87
            default: nil
            }
        }
        var out = [UInt8]()
        out.reserveCapacity(12)
        if utf8.count == 24 {
            for i in stride(from: 0, to: 24, by: 2) {
                guard let hi = nibble(utf8[i]), let lo = nibble(utf8[i + 1]) else { break }
                out.append(hi << 4 | lo)
            }
        }
        guard out.count == 12, let id = ObjectId(bytes: out) else {
            throw Realm.Error(.invalidValue,
                              "Invalid ObjectId string '\(string)': an ObjectId is 24 hexadecimal characters.")
        }
        self = id
    }

    /// Parses a literal known to be valid; traps on a malformed one.
    public init(_ literal: StaticString) {
        do {
            try self.init(string: literal.description)
        } catch {
            preconditionFailure("Invalid ObjectId literal '\(literal)': an ObjectId is 24 hexadecimal characters.")
        }
    }

    /// Creates an ObjectId from its parts, as BSON lays them out.
    public init(timestamp: Date, machineId: Int, processId: Int) {
        // Any date gives an id (a far or NaN date must not trap): the seconds' low 32 bits.
        let seconds = Int64(exactly: timestamp.timeIntervalSince1970.rounded(.towardZero))
            .map { UInt32(truncatingIfNeeded: $0) } ?? 0
        let counter = ObjectId.nextCounter()
        self.init(seconds: seconds, random: ObjectId.machineBytes(machineId: machineId, processId: processId),
                  counter: counter)
    }

    private init(seconds: UInt32, random: (UInt8, UInt8, UInt8, UInt8, UInt8), counter: UInt32) {
        bytes = (UInt8(seconds >> 24), UInt8(truncatingIfNeeded: seconds >> 16),
                 UInt8(truncatingIfNeeded: seconds >> 8), UInt8(truncatingIfNeeded: seconds),
                 random.0, random.1, random.2, random.3, random.4,
                 UInt8(truncatingIfNeeded: counter >> 16), UInt8(truncatingIfNeeded: counter >> 8),
                 UInt8(truncatingIfNeeded: counter))
    }

    /// A new id, unique within this process and (with overwhelming probability) across processes.
    public static func generate() -> ObjectId {
        let seconds = UInt32(truncatingIfNeeded: Int(Date().timeIntervalSince1970))
        return ObjectId(seconds: seconds, random: processRandom, counter: nextCounter())
    }

    private static let processRandom: (UInt8, UInt8, UInt8, UInt8, UInt8) = {
        var g = SystemRandomNumberGenerator()
        return (.random(in: 0...255, using: &g), .random(in: 0...255, using: &g), .random(in: 0...255, using: &g),
                .random(in: 0...255, using: &g), .random(in: 0...255, using: &g))
    }()

    private static let counter = Atomic<UInt32>(UInt32.random(in: 0..<0xFF_FFFF))

    private static func nextCounter() -> UInt32 {
        counter.wrappingAdd(1, ordering: .relaxed).newValue & 0xFF_FFFF
    }

    private static func machineBytes(machineId: Int, processId: Int) -> (UInt8, UInt8, UInt8, UInt8, UInt8) {
        (UInt8(truncatingIfNeeded: machineId >> 16), UInt8(truncatingIfNeeded: machineId >> 8),
         UInt8(truncatingIfNeeded: machineId), UInt8(truncatingIfNeeded: processId >> 8),
         UInt8(truncatingIfNeeded: processId))
    }

    /// The bytes as an array, most significant first.
    public var byteArray: [UInt8] {
        withUnsafeBytes(of: bytes) { Array($0) }
    }

    /// The 24-character lowercase hexadecimal form.
    public var stringValue: String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(24)
        for byte in byteArray {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0xF)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The creation time encoded in the first four bytes (second precision).
    public var timestamp: Date {
        let b = byteArray
        let seconds = UInt32(b[0]) << 24 | UInt32(b[1]) << 16 | UInt32(b[2]) << 8 | UInt32(b[3])
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    public var description: String { stringValue }

    public static func == (lhs: ObjectId, rhs: ObjectId) -> Bool {
        lhs.byteArray == rhs.byteArray
    }

    public func hash(into hasher: inout Hasher) {
        withUnsafeBytes(of: bytes) { hasher.combine(bytes: $0) }
    }

    /// Byte-wise order, which is creation order for generated ids.
    public static func < (lhs: ObjectId, rhs: ObjectId) -> Bool {
        lhs.byteArray.lexicographicallyPrecedes(rhs.byteArray)
    }
}

extension ObjectId: Codable {
    /// Decodes the 24-character hex form.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        try self.init(string: container.decode(String.self))
    }

    /// Encodes the 24-character hex form.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(stringValue)
    }
}
