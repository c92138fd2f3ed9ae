import Foundation

/// A 128-bit decimal floating-point number (BSON `decimal`), exact for decimal fractions.
///
/// Backed by Foundation's `Decimal` (38 significant digits), which covers every value a
/// Realm app stores in practice.
///
/// ```swift
/// let price: Decimal128 = "19.99"
/// let total = price * 3   // 59.97, exactly
/// ```
public final class Decimal128: Sendable {
    /// The value.
    public let decimalValue: Decimal
    /// The digits and exponent the value was written with, for a value parsed from text:
    /// Realm's text form keeps them (`"1.5e2"` prints `1.5E2`, `"12.50"` prints `12.50`), as
    /// IEEE 754 decimals keep their cohort. Nil for a computed or converted value.
    private let written: WrittenDecimal?
    /// Whether this is the signalling NaN (`Decimal128(value: NSNull())`, as in Realm).
    private let signaling: Bool

    /// Zero.
    public convenience init() { self.init(Decimal(0)) }

    /// Wraps a Foundation `Decimal`.
    public init(_ value: Decimal) {
        decimalValue = value
        written = nil
        signaling = false
    }

    private init(_ value: Decimal, written: WrittenDecimal?, signaling: Bool = false) {
        decimalValue = value
        self.written = written
        self.signaling = signaling
    }

    /// Converts a number (`Int`, `Double`, `Decimal`, `NSNumber`, another `Decimal128`) or a
    /// numeric string; anything else is zero.
    public convenience init(value: Any) {
        switch value {
        case let d as Decimal128: self.init(d.decimalValue)
        case let d as Decimal: self.init(d)
        case let i as Int: self.init(Decimal(i))
        case let d as Double: self.init(Decimal(d))
        case let n as NSNumber: self.init(n.decimalValue)
        case let s as String: self.init(Decimal(string: s) ?? .nan, written: WrittenDecimal(s))
        case is NSNull: self.init(Decimal.nan, written: nil, signaling: true)
        default: self.init(Decimal.nan)
        }
    }

    /// Converts an `NSNumber`.
    public convenience init(number: NSNumber) { self.init(number.decimalValue) }

    /// Parses a decimal string such as `"-12.5e3"`, `"NaN"`.
    ///
    /// - Throws: ``Realm/Error`` (``Realm/Error/Code/invalidValue``) for text that is not a number.
    public convenience init(string: String) throws {
        let trimmed = string.trimmingCharacters(in: .whitespaces)
        if trimmed.caseInsensitiveCompare("nan") == .orderedSame {
            self.init(Decimal.nan)
            return
        }
        guard let value = Decimal(string: trimmed, locale: Locale(identifier: "en_US_POSIX")),
              !trimmed.isEmpty, trimmed.range(of: "^[+-]?([0-9]+\\.?[0-9]*|\\.[0-9]+)([eE][+-]?[0-9]+)?$",
                                              options: .regularExpression) != nil
        else {
            throw Realm.Error(.invalidValue, "Invalid Decimal128 string '\(string)': expected a decimal number.")
        }
        self.init(value, written: WrittenDecimal(trimmed))
    }

    /// The smallest and largest finite values this type represents.
    public static var min: Decimal128 { Decimal128(-Decimal.greatestFiniteMagnitude) }
    /// The largest finite value.
    public static var max: Decimal128 { Decimal128(Decimal.greatestFiniteMagnitude) }

    /// The value as a `Double` (may round).
    public var doubleValue: Double { NSDecimalNumber(decimal: decimalValue).doubleValue }
    /// The canonical decimal string.
    /// The value as Realm writes it: plain digits for ordinary values (`3.14`, `100`), and
    /// `<digits>E<exponent>` when the exponent is large or very negative (`1.23456789E132`).
    /// A value parsed from text keeps the exponent it was written with (`"1.5e2"`: `1.5E2`);
    /// as in Realm, zeros ending the digits after a decimal point are dropped (`"12.50"`:
    /// `12.5`, `"1234567890e123"`: `1.23456789E132`).
    public var stringValue: String { Decimal128Text.trimmingFractionZeros(storedText) }

    /// The text a row stores: the digits as written, trailing zeros kept, as rows stored it
    /// before ``stringValue`` dropped them (so existing files' bytes and index keys still match).
    var storedText: String {
        if let written, !decimalValue.isNaN { return written.text }
        return Decimal128Text.string(decimalValue)
    }
    /// Whether this is not a number.
    public var isNaN: Bool { decimalValue.isNaN }
    /// Whether this is the signalling NaN (`Decimal128(value: NSNull())`).
    public var isSignaling: Bool { signaling }
    /// Whether this is the signalling NaN (`Decimal128(value: NSNull())`).
    public var isSignalingNaN: Bool { signaling }
    /// The absolute value.
    public var magnitude: Decimal128 { Decimal128(Swift.abs(decimalValue)) }
}

extension Decimal128: Hashable, Comparable, CustomStringConvertible {
    public static func == (lhs: Decimal128, rhs: Decimal128) -> Bool { lhs.decimalValue == rhs.decimalValue }
    public static func < (lhs: Decimal128, rhs: Decimal128) -> Bool { lhs.decimalValue < rhs.decimalValue }
    public func hash(into hasher: inout Hasher) { hasher.combine(decimalValue) }
    public var description: String { stringValue }
}

extension Decimal128: ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral, ExpressibleByStringLiteral {
    /// The exact value of an integer literal.
    public convenience init(integerLiteral value: Int64) { self.init(Decimal(value)) }
    /// The value of a floating-point literal, read from its shortest decimal spelling
    /// (`0.1` is exactly 0.1, not the nearest binary double).
    public convenience init(floatLiteral value: Double) { self.init(Decimal(string: "\(value)") ?? Decimal(value)) }
    /// Traps on a literal that is not a number.
    public convenience init(stringLiteral value: String) {
        guard let decimal = Decimal(string: value) else {
            preconditionFailure("Invalid Decimal128 literal '\(value)': expected a decimal number.")
        }
        self.init(decimal, written: WrittenDecimal(value))
    }
}

extension Decimal128: Numeric {
    /// The value of an integer that fits in 64 bits, else nil.
    public convenience init?<T: BinaryInteger>(exactly source: T) {
        guard let i = Int64(exactly: source) else { return nil }
        self.init(Decimal(i))
    }
    public static func + (lhs: Decimal128, rhs: Decimal128) -> Decimal128 { Decimal128(lhs.decimalValue + rhs.decimalValue) }
    public static func - (lhs: Decimal128, rhs: Decimal128) -> Decimal128 { Decimal128(lhs.decimalValue - rhs.decimalValue) }
    public static func * (lhs: Decimal128, rhs: Decimal128) -> Decimal128 { Decimal128(lhs.decimalValue * rhs.decimalValue) }
    public static func / (lhs: Decimal128, rhs: Decimal128) -> Decimal128 { Decimal128(lhs.decimalValue / rhs.decimalValue) }
    public static func += (lhs: inout Decimal128, rhs: Decimal128) { lhs = lhs + rhs }
    public static func -= (lhs: inout Decimal128, rhs: Decimal128) { lhs = lhs - rhs }
    public static func *= (lhs: inout Decimal128, rhs: Decimal128) { lhs = lhs * rhs }
    public static func /= (lhs: inout Decimal128, rhs: Decimal128) { lhs = lhs / rhs }
}

extension Decimal128: SignedNumeric {
    public static prefix func - (operand: Decimal128) -> Decimal128 { Decimal128(-operand.decimalValue) }
}

extension Decimal128: Strideable {
    public typealias Stride = Decimal128
    /// The distance from this value to `other` (`other - self`).
    public func distance(to other: Decimal128) -> Decimal128 { other - self }
    /// This value moved by `n`.
    public func advanced(by n: Decimal128) -> Decimal128 { self + n }
}

/// A decimal as written: its coefficient's digits and exponent (`"1.50e2"`: 150 and 0), the
/// IEEE 754 cohort Realm's text form shows.
struct WrittenDecimal: Sendable {
    let negative: Bool
    /// The coefficient's digits, without leading zeros ("0" for zero).
    let digits: String
    let exponent: Int

    /// Nil for text that is not a plain decimal number, or has more than 34 digits.
    init?(_ text: String) {
        var rest = Substring(text.trimmingCharacters(in: .whitespaces))
        negative = rest.first == "-"
        if rest.first == "-" || rest.first == "+" { rest = rest.dropFirst() }
        var exponentPart = 0
        if let e = rest.firstIndex(where: { $0 == "e" || $0 == "E" }) {
            guard let parsed = Int(rest[rest.index(after: e)...]), abs(parsed) < 10_000 else { return nil }
            exponentPart = parsed
            rest = rest[..<e]
        }
        let pieces = rest.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(pieces.count), pieces.allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
              pieces.contains(where: { !$0.isEmpty })
        else { return nil }
        let fraction = pieces.count == 2 ? String(pieces[1]) : ""
        let all = String(pieces[0]) + fraction
        let trimmed = all.drop { $0 == "0" }
        digits = trimmed.isEmpty ? "0" : String(trimmed)
        guard digits.count <= 34 else { return nil }
        exponent = exponentPart - fraction.count
    }

    /// IEEE 754-2008 to-scientific-string, with Realm's spelling of the exponent (`E2`, `E-7`).
    var text: String {
        let sign = negative ? "-" : ""
        let adjusted = exponent + digits.count - 1
        if exponent <= 0, adjusted >= -6 {
            if exponent == 0 { return sign + digits }
            let point = digits.count + exponent
            if point > 0 {
                let split = digits.index(digits.startIndex, offsetBy: point)
                return sign + digits[..<split] + "." + digits[split...]
            }
            return sign + "0." + String(repeating: "0", count: -point) + digits
        }
        let tail = digits.dropFirst()
        return sign + String(digits.prefix(1)) + (tail.isEmpty ? "" : "." + tail) + "E\(adjusted)"
    }
}

/// Realm's text form of a decimal (IEEE 754-2008 "to-scientific-string", without a `+` sign).
enum Decimal128Text {
    static func string(_ value: Decimal) -> String {
        if value.isNaN { return "NaN" }
        if value.isZero { return "0" }
        let sign = value.sign == .minus ? "-" : ""
        let digits = (value.significand.magnitude as NSDecimalNumber).stringValue
        let exponent = value.exponent
        let adjusted = exponent + digits.count - 1
        if exponent > 0 {
            // Integers within the type's 34 digits print whole; beyond, scientific.
            if digits.count + exponent <= 34 { return sign + digits + String(repeating: "0", count: exponent) }
            return sign + scientific(digits, adjusted)
        }
        if adjusted < -6 { return sign + scientific(digits, adjusted) }
        if exponent == 0 { return sign + digits }
        let point = digits.count + exponent
        if point > 0 {
            let split = digits.index(digits.startIndex, offsetBy: point)
            return sign + digits[..<split] + "." + digits[split...]
        }
        return sign + "0." + String(repeating: "0", count: -point) + digits
    }

    /// `text` without the zeros that end its digits after the decimal point (up to the `E`, if
    /// any), and without the point when no digit is left after it: Realm's `stringValue` rule
    /// (`12.50` -> `12.5`, `1.0E5` -> `1E5`, `100` unchanged).
    static func trimmingFractionZeros(_ text: String) -> String {
        guard let point = text.firstIndex(of: ".") else { return text }
        let end = text[point...].firstIndex(of: "E") ?? text.endIndex
        var keep = end
        while keep > text.index(after: point), text[text.index(before: keep)] == "0" { keep = text.index(before: keep) }
        if keep == text.index(after: point) { keep = point }
        return String(text[..<keep]) + text[end...]
    }

    private static func scientific(_ digits: String, _ adjusted: Int) -> String {
        let head = String(digits.prefix(1))
        let tail = digits.dropFirst()
        return head + (tail.isEmpty ? "" : "." + tail) + "E\(adjusted)"
    }
}

extension Decimal128: Codable {
    /// Decodes a number or a numeric string.
    public convenience init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let string = try? container.decode(String.self) {
            try self.init(string: string)
        } else {
            self.init(try container.decode(Decimal.self))
        }
    }

    /// Encodes the decimal string, which keeps every digit.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(stringValue)
    }
}
