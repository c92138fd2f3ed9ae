import Foundation

/// JSON text to and from ``JSONValue`` without `Codable`: sync moves every document through
/// JSON several times (frames, PostgreSQL's `jsonb`, the client's mirror), and Foundation's
/// coders cost a thrown error for each value whose kind they guess wrong. The text written is
/// what `JSONEncoder` writes with `.sortedKeys` and `.withoutEscapingSlashes` (compact, keys
/// sorted, integral doubles without `.0`); the values read are those `JSONDecoder` gives
/// ``JSONValue`` (a number that is an exact 64-bit integer is `.int`, also `5.0` or `1e3`).
enum JSONText {
    /// Compact text with sorted keys.
    static func write(_ value: JSONValue) -> String {
        var out = [UInt8]()
        out.reserveCapacity(256)
        write(value, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    static func write(_ value: JSONValue, into out: inout [UInt8]) {
        switch value {
        case .null: out += Self.null
        case .bool(let flag): out += flag ? Self.trueBytes : Self.falseBytes
        case .int(let number): writeDecimal(number, into: &out)
        case .double(let number):
            guard number.isFinite else {
                out += Self.null
                return
            }
            var text = number.description
            if text.hasSuffix(".0") { text.removeLast(2) }
            out += Array(text.utf8)
        case .string(let text): writeString(text, into: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                write(item, into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let fields):
            out.append(UInt8(ascii: "{"))
            // Members sorted by key as pairs: no second hash lookup per member.
            for (index, member) in fields.sorted(by: { $0.key < $1.key }).enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                writeString(member.key, into: &out)
                out.append(UInt8(ascii: ":"))
                write(member.value, into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static let null = Array("null".utf8)
    private static let trueBytes = Array("true".utf8)
    private static let falseBytes = Array("false".utf8)
    private static let hex = Array("0123456789abcdef".utf8)

    static func writeString(_ text: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { bytes in
            // Runs of bytes that need no escape are copied whole.
            var runStart = 0
            for (index, byte) in bytes.enumerated() where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                if runStart < index { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index])) }
                writeEscape(byte, into: &out)
                runStart = index + 1
            }
            if runStart < bytes.count { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...])) }
        }
        out.append(UInt8(ascii: "\""))
    }

    private static func writeEscape(_ byte: UInt8, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): out.append(byte)
        case 0x0A: out.append(UInt8(ascii: "n"))
        case 0x0D: out.append(UInt8(ascii: "r"))
        case 0x09: out.append(UInt8(ascii: "t"))
        case 0x08: out.append(UInt8(ascii: "b"))
        case 0x0C: out.append(UInt8(ascii: "f"))
        default:
            out.append(UInt8(ascii: "u"))
            out.append(UInt8(ascii: "0"))
            out.append(UInt8(ascii: "0"))
            out.append(hex[Int(byte >> 4)])
            out.append(hex[Int(byte & 0xF)])
        }
    }

    /// The decimal digits of `number`, written without a `String` in between.
    static func writeDecimal(_ number: Int64, into out: inout [UInt8]) {
        if number < 0 { out.append(UInt8(ascii: "-")) }
        var magnitude = number.magnitude
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &digits) { buffer in
            var start = buffer.count
            repeat {
                start -= 1
                buffer[start] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[start...]))
        }
    }

    /// Parses one JSON value (surrounding white space allowed).
    static func parse(_ text: String) throws -> JSONValue {
        var text = text
        return try text.withUTF8 { bytes in
            var parser = Parser(bytes: bytes)
            let value = try parser.value(depth: 0)
            parser.skipSpace()
            guard parser.position == bytes.count else { throw parser.error("text after the value") }
            return value
        }
    }

    static func parse(_ data: some Collection<UInt8>) throws -> JSONValue {
        try parse(String(decoding: data, as: UTF8.self))
    }

    /// Parses a frame's UTF-8 text, noting where each change of a download frame
    /// (`{"download": {"_0": {"changes": [{…, "document": …, "primaryKey": …}]}}}`) has its
    /// document and its primary key in `bytes`: one entry per change object, in order (the
    /// document's range nil when it is not an object: none, or null). For any other text the
    /// ranges name nothing meaningful.
    static func parseNotingDocuments(_ bytes: UnsafeBufferPointer<UInt8>) throws -> (JSONValue, [ChangeRanges]) {
        var parser = Parser(bytes: bytes)
        parser.notesDocuments = true
        let value = try parser.value(depth: 0)
        parser.skipSpace()
        guard parser.position == bytes.count else { throw parser.error("text after the value") }
        return (value, parser.documentRanges)
    }

    /// Where a download frame's change has its document (an object) and its primary key.
    struct ChangeRanges {
        var document: Range<Int>?
        var primaryKey: Range<Int>?
    }

    /// Why a text is not JSON, and where.
    struct SyntaxError: Error, CustomStringConvertible {
        let offset: Int
        let reason: String
        var description: String { "not valid JSON at byte \(offset): \(reason)" }
    }

    /// Internal, not private: the upload reader (UploadFrameReader.swift) reads with it.
    struct Parser {
        let bytes: UnsafeBufferPointer<UInt8>
        var position = 0
        /// Nesting deeper than this is refused (a stack overflow otherwise).
        static let maxDepth = 512
        /// Whether to note where the objects at ``changeDepth`` have their `document` and `primaryKey`.
        var notesDocuments = false
        /// Per object at ``changeDepth``, in order, where its `document` and `primaryKey` are.
        var documentRanges: [ChangeRanges] = []
        /// The depth of a download frame's change objects (frame, `download`, `_0`, `changes`, change).
        static let changeDepth = 4
        /// The members of the objects being read, innermost last: an object's members gather
        /// here and go into a dictionary made at its end with room for all of them, so no
        /// dictionary grows (each growth hashed every key again) while a document is read.
        var members: [(key: String, value: JSONValue)] = []

        init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

        func error(_ reason: String) -> SyntaxError { SyntaxError(offset: position, reason: reason) }

        mutating func skipSpace() {
            while position < bytes.count {
                switch bytes[position] {
                case 0x20, 0x0A, 0x0D, 0x09: position += 1
                default: return
                }
            }
        }

        mutating func value(depth: Int) throws -> JSONValue {
            guard depth < Self.maxDepth else { throw error("nested more than \(Self.maxDepth) deep") }
            skipSpace()
            guard position < bytes.count else { throw error("unexpected end") }
            switch bytes[position] {
            case UInt8(ascii: "{"): return try object(depth: depth)
            case UInt8(ascii: "["): return try array(depth: depth)
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"): try literal(JSONText.trueBytes); return .bool(true)
            case UInt8(ascii: "f"): try literal(JSONText.falseBytes); return .bool(false)
            case UInt8(ascii: "n"): try literal(JSONText.null); return .null
            default: return try number()
            }
        }

        mutating func literal(_ word: [UInt8]) throws {
            guard position + word.count <= bytes.count else { throw error("unexpected end") }
            for index in 0..<word.count where bytes[position + index] != word[index] {
                throw error("unexpected character")
            }
            position += word.count
        }

        mutating func object(depth: Int) throws -> JSONValue {
            position += 1
            skipSpace()
            if position < bytes.count, bytes[position] == UInt8(ascii: "}") {
                position += 1
                if notesDocuments, depth == Self.changeDepth { documentRanges.append(ChangeRanges()) }
                return .object([:])
            }
            let first = members.count
            let notes = notesDocuments && depth == Self.changeDepth
            var ranges = ChangeRanges()
            while true {
                skipSpace()
                guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else { throw error("expected a key") }
                let key = try string()
                skipSpace()
                guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else { throw error("expected ':'") }
                position += 1
                skipSpace()
                let start = position
                let parsed = try value(depth: depth + 1)
                if notes, key == "document" {
                    if case .object = parsed { ranges.document = start..<position } else { ranges.document = nil }
                } else if notes, key == "primaryKey" {
                    ranges.primaryKey = start..<position
                }
                members.append((key, parsed))
                skipSpace()
                guard position < bytes.count else { throw error("unexpected end") }
                if bytes[position] == UInt8(ascii: ",") { position += 1; continue }
                guard bytes[position] == UInt8(ascii: "}") else { throw error("expected ',' or '}'") }
                position += 1
                if notes { documentRanges.append(ranges) }
                // A key given twice keeps its last value, as before.
                var fields = [String: JSONValue](minimumCapacity: members.count - first)
                for member in members[first...] { fields[member.key] = member.value }
                members.removeSubrange(first...)
                return .object(fields)
            }
        }

        mutating func array(depth: Int) throws -> JSONValue {
            position += 1
            var items = [JSONValue]()
            skipSpace()
            if position < bytes.count, bytes[position] == UInt8(ascii: "]") {
                position += 1
                return .array(items)
            }
            while true {
                items.append(try value(depth: depth + 1))
                skipSpace()
                guard position < bytes.count else { throw error("unexpected end") }
                if bytes[position] == UInt8(ascii: ",") { position += 1; continue }
                guard bytes[position] == UInt8(ascii: "]") else { throw error("expected ',' or ']'") }
                position += 1
                return .array(items)
            }
        }

        mutating func string() throws -> String {
            position += 1
            let start = position
            // The common case: no escapes.
            while position < bytes.count {
                let byte = bytes[position]
                if byte == UInt8(ascii: "\"") {
                    let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
                    position += 1
                    return text
                }
                if byte == UInt8(ascii: "\\") { break }
                if byte < 0x20 { throw error("control character in a string") }
                position += 1
            }
            var out = Array(bytes[start..<position])
            while position < bytes.count {
                let byte = bytes[position]
                switch byte {
                case UInt8(ascii: "\""):
                    position += 1
                    return String(decoding: out, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    position += 1
                    guard position < bytes.count else { throw error("unexpected end") }
                    let escaped = bytes[position]
                    position += 1
                    switch escaped {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escaped)
                    case UInt8(ascii: "n"): out.append(0x0A)
                    case UInt8(ascii: "r"): out.append(0x0D)
                    case UInt8(ascii: "t"): out.append(0x09)
                    case UInt8(ascii: "b"): out.append(0x08)
                    case UInt8(ascii: "f"): out.append(0x0C)
                    case UInt8(ascii: "u"):
                        var scalar = try hex4()
                        if (0xD800..<0xDC00).contains(scalar) {
                            guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"),
                                  bytes[position + 1] == UInt8(ascii: "u") else { throw error("lone surrogate") }
                            position += 2
                            let low = try hex4()
                            guard (0xDC00..<0xE000).contains(low) else { throw error("bad surrogate pair") }
                            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        } else if (0xDC00..<0xE000).contains(scalar) {
                            throw error("lone surrogate")
                        }
                        guard let unicode = Unicode.Scalar(scalar) else { throw error("bad \\u escape") }
                        out += Array(String(Character(unicode)).utf8)
                    default: throw error("bad escape")
                    }
                default:
                    if byte < 0x20 { throw error("control character in a string") }
                    out.append(byte)
                    position += 1
                }
            }
            throw error("unterminated string")
        }

        mutating func hex4() throws -> UInt32 {
            guard position + 4 <= bytes.count else { throw error("unexpected end") }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let byte = bytes[position]
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: throw error("bad \\u escape")
                }
                value = value << 4 | UInt32(digit)
                position += 1
            }
            return value
        }

        mutating func number() throws -> JSONValue {
            let start = position
            var isInteger = true
            if position < bytes.count, bytes[position] == UInt8(ascii: "-") { position += 1 }
            let digitsStart = position
            while position < bytes.count, bytes[position] >= UInt8(ascii: "0"), bytes[position] <= UInt8(ascii: "9") {
                position += 1
            }
            guard position > digitsStart else { throw error("unexpected character") }
            guard bytes[digitsStart] != UInt8(ascii: "0") || position - digitsStart == 1 else {
                throw error("leading zero")
            }
            if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
                isInteger = false
                position += 1
                let fraction = position
                while position < bytes.count, bytes[position] >= UInt8(ascii: "0"), bytes[position] <= UInt8(ascii: "9") {
                    position += 1
                }
                guard position > fraction else { throw error("digits expected after '.'") }
            }
            if position < bytes.count, bytes[position] == UInt8(ascii: "e") || bytes[position] == UInt8(ascii: "E") {
                isInteger = false
                position += 1
                if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") {
                    position += 1
                }
                let exponent = position
                while position < bytes.count, bytes[position] >= UInt8(ascii: "0"), bytes[position] <= UInt8(ascii: "9") {
                    position += 1
                }
                guard position > exponent else { throw error("digits expected in the exponent") }
            }
            let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
            if isInteger, let integer = Int64(text) { return .int(integer) }
            guard let double = Double(text), double.isFinite else { throw error("number out of range") }
            // As JSONDecoder gives Int64 for any number that is exactly one.
            if let integer = Int64(exactly: double) { return .int(integer) }
            return .double(double)
        }
    }
}
