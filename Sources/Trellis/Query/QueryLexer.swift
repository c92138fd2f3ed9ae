import Foundation

/// A token of Realm's predicate language, with the UTF-8 offset where it starts.
struct QueryToken {
    enum Kind: Equatable {
        /// A name, keyword or `@operation`: keywords are recognised by the parser, case-insensitively.
        case identifier(String)
        /// `$x` (a subquery variable).
        case variable(String)
        /// `%@`, `%K`, or `$0`-style positional argument (index given).
        case argument(format: Character, index: Int?)
        case number(String)
        case string(String)
        /// `oid(…)` or `uuid(…)`: the name and the text between the parentheses.
        case typedLiteral(name: String, body: String)
        /// `2023-01-01`, `2023-01-01@10:30:00[:nanos]`, `2023-01-01T10:30:00` (UTC) or `T<seconds>:<nanos>`.
        case date(Date)
        /// Punctuation and operators: `( ) { } [ ] , . == = != <> < <= > >= && || !`.
        case symbol(String)
        case end
    }

    let kind: Kind
    let offset: Int

    /// Whether the identifier `name` is `keyword` (`AND`, `SUBQUERY`, …) in any case of its ASCII
    /// letters, as realm-core's grammar matches keywords: byte by byte, no Unicode case folding
    /// (which would also let non-ASCII names such as `ſubquery` pass, and costs a Foundation
    /// string comparison per keyword tried).
    static func spells(_ name: String, _ keyword: String) -> Bool {
        @inline(__always) func lower(_ byte: UInt8) -> UInt8 { byte &- 65 < 26 ? byte | 0x20 : byte }
        let name = name.utf8, keyword = keyword.utf8
        guard name.count == keyword.count else { return false }
        return zip(name, keyword).allSatisfy { lower($0) == lower($1) }
    }
}

/// A query that does not parse or does not fit the class: what, and where.
struct QueryError: Error, CustomStringConvertible {
    let message: String
    /// The UTF-8 offset the problem was found at, when it is a syntax problem.
    let offset: Int?

    var description: String { message }
}

/// Splits predicate text into tokens.
struct QueryLexer {
    private let text: [UInt8]
    private var position = 0

    init(_ text: String) { self.text = Array(text.utf8) }

    static func tokens(_ text: String) throws(QueryError) -> [QueryToken] {
        var lexer = QueryLexer(text)
        var out = [QueryToken]()
        while true {
            let token = try lexer.next()
            out.append(token)
            if token.kind == .end { return out }
        }
    }

    private func peek(_ ahead: Int = 0) -> UInt8? {
        position + ahead < text.count ? text[position + ahead] : nil
    }

    private static func isIdentifierStart(_ c: UInt8) -> Bool {
        (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c == 95 || c >= 0x80
    }

    private static func isIdentifierPart(_ c: UInt8) -> Bool {
        isIdentifierStart(c) || isDigit(c)
    }

    private static func isDigit(_ c: UInt8) -> Bool { c >= 48 && c <= 57 }

    private mutating func next() throws(QueryError) -> QueryToken {
        while let c = peek(), c == 32 || c == 9 || c == 10 || c == 13 { position += 1 }
        let start = position
        guard let c = peek() else { return QueryToken(kind: .end, offset: start) }
        if let date = timestamp() {
            return QueryToken(kind: .date(date), offset: start)
        }

        if Self.isIdentifierStart(c) || (c == UInt8(ascii: "@") && peek(1).map(Self.isIdentifierStart) == true) {
            position += 1
            while let d = peek(), Self.isIdentifierPart(d) { position += 1 }
            let name = string(start, position)
            if ["oid", "uuid"].contains(name.lowercased()), peek() == UInt8(ascii: "(") {
                guard let close = text[position...].firstIndex(of: UInt8(ascii: ")")) else {
                    throw QueryError(message: "expected ')' to close \(name)(", offset: start)
                }
                let body = string(position + 1, close).trimmingCharacters(in: .whitespaces)
                position = close + 1
                return QueryToken(kind: .typedLiteral(name: name.lowercased(), body: body), offset: start)
            }
            return QueryToken(kind: .identifier(name), offset: start)
        }
        if c == UInt8(ascii: "$") {
            position += 1
            if let d = peek(), Self.isDigit(d) {
                while let d = peek(), Self.isDigit(d) { position += 1 }
                let index = Int(string(start + 1, position)) ?? 0
                return QueryToken(kind: .argument(format: "$", index: index), offset: start)
            }
            guard let d = peek(), Self.isIdentifierStart(d) else {
                throw QueryError(message: "expected a variable name after '$'", offset: start)
            }
            while let d = peek(), Self.isIdentifierPart(d) { position += 1 }
            return QueryToken(kind: .variable(string(start + 1, position)), offset: start)
        }
        if c == UInt8(ascii: "%") {
            if let f = peek(1), f == UInt8(ascii: "@") || f == UInt8(ascii: "K") {
                position += 2
                return QueryToken(kind: .argument(format: Character(UnicodeScalar(f)), index: nil), offset: start)
            }
            // NSPredicate's number specifiers (`%d`, `%ld`, `%lld`, `%i`, `%u`, `%f`, `%lf`, `%g`…):
            // the argument is already a typed Swift value, so each reads as `%@`.
            var length = 1
            while let m = peek(length), "hlqL".utf8.contains(m), length < 3 { length += 1 }
            guard let f = peek(length), "diouxXfFeEgGc".utf8.contains(f) else {
                throw QueryError(message: "expected '%@', '%K' or a number specifier such as '%d'", offset: start)
            }
            position += length + 1
            return QueryToken(kind: .argument(format: "@", index: nil), offset: start)
        }
        if Self.isDigit(c) || ((c == UInt8(ascii: "-") || c == UInt8(ascii: "+"))
            && peek(1).map { Self.isDigit($0) || $0 == UInt8(ascii: ".") } == true)
            || (c == UInt8(ascii: ".") && peek(1).map(Self.isDigit) == true)
        {
            return QueryToken(kind: .number(number()), offset: start)
        }
        if c == UInt8(ascii: "'") || c == UInt8(ascii: "\"") {
            return QueryToken(kind: .string(try quoted(c)), offset: start)
        }
        for symbol in ["==", "!=", "<>", "<=", ">=", "=<", "=>", "&&", "||"] where matches(symbol) {
            position += 2
            let normal = symbol == "=<" ? "<=" : symbol == "=>" ? ">=" : symbol
            return QueryToken(kind: .symbol(normal), offset: start)
        }
        if "(){}[],.=<>!*".utf8.contains(c) {
            position += 1
            return QueryToken(kind: .symbol(String(UnicodeScalar(c))), offset: start)
        }
        throw QueryError(message: "unexpected character '\(String(UnicodeScalar(c)))'", offset: start)
    }

    private func matches(_ symbol: String) -> Bool {
        let bytes = Array(symbol.utf8)
        return position + bytes.count <= text.count && Array(text[position ..< position + bytes.count]) == bytes
    }

    private func string(_ from: Int, _ to: Int) -> String {
        String(decoding: text[from ..< to], as: UTF8.self)
    }

    /// Digits, an optional fraction and exponent; hex (`0x1F`) too.
    private mutating func number() -> String {
        let start = position
        if peek() == UInt8(ascii: "-") || peek() == UInt8(ascii: "+") { position += 1 }
        if peek() == UInt8(ascii: "0"), peek(1) == UInt8(ascii: "x") || peek(1) == UInt8(ascii: "X") {
            position += 2
            while let d = peek(), Self.isDigit(d) || (d | 0x20 >= 97 && d | 0x20 <= 102) { position += 1 }
            return string(start, position)
        }
        while let d = peek(), Self.isDigit(d) { position += 1 }
        if peek() == UInt8(ascii: "."), peek(1).map(Self.isDigit) == true {
            position += 1
            while let d = peek(), Self.isDigit(d) { position += 1 }
        }
        if let e = peek(), e == UInt8(ascii: "e") || e == UInt8(ascii: "E") {
            let save = position
            position += 1
            if peek() == UInt8(ascii: "-") || peek() == UInt8(ascii: "+") { position += 1 }
            if peek().map(Self.isDigit) == true {
                while let d = peek(), Self.isDigit(d) { position += 1 }
            } else {
                position = save
            }
        }
        return string(start, position)
    }

    /// Realm Query Language timestamps; nil (and nothing consumed) when the text is not one.
    private mutating func timestamp() -> Date? {
        func digits(_ from: Int) -> (value: Int, end: Int)? {
            var end = from
            while end < text.count, Self.isDigit(text[end]) { end += 1 }
            return end > from ? (Int(string(from, end)) ?? 0, end) : nil
        }
        func symbol(_ at: Int, _ c: Character) -> Bool { at < text.count && text[at] == c.asciiValue }
        if symbol(position, "T"), let seconds = digits(position + 1), symbol(seconds.end, ":"),
           let nanos = digits(seconds.end + 1)
        {
            position = nanos.end
            return Date(timeIntervalSince1970: Double(seconds.value) + Double(nanos.value) / 1e9)
        }
        guard let year = digits(position), year.end - position == 4, symbol(year.end, "-"),
              let month = digits(year.end + 1), symbol(month.end, "-"), let day = digits(month.end + 1)
        else { return nil }
        var parts = DateComponents(year: year.value, month: month.value, day: day.value)
        var end = day.end
        if symbol(end, "@") || symbol(end, "T"), let hour = digits(end + 1), symbol(hour.end, ":"),
           let minute = digits(hour.end + 1), symbol(minute.end, ":"), let second = digits(minute.end + 1)
        {
            parts.hour = hour.value
            parts.minute = minute.value
            parts.second = second.value
            end = second.end
            if symbol(end, ":"), let nanos = digits(end + 1) {
                parts.nanosecond = nanos.value
                end = nanos.end
            }
        }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        guard let date = calendar.date(from: parts) else { return nil }
        position = end
        return date
    }

    /// A quoted string with backslash escapes.
    private mutating func quoted(_ quote: UInt8) throws(QueryError) -> String {
        let start = position
        position += 1
        var bytes = [UInt8]()
        while let c = peek() {
            position += 1
            if c == quote { return String(decoding: bytes, as: UTF8.self) }
            if c == UInt8(ascii: "\\"), let escaped = peek() {
                position += 1
                switch escaped {
                case UInt8(ascii: "n"): bytes.append(10)
                case UInt8(ascii: "t"): bytes.append(9)
                default: bytes.append(escaped)
                }
                continue
            }
            bytes.append(c)
        }
        throw QueryError(message: "unterminated string", offset: start)
    }
}
