import Foundation

/// Parses Realm's predicate text (NSPredicate syntax plus Realm Query Language's `@links`,
/// `@size`, `ALL`, `$0` arguments and `oid()`/`uuid()`/timestamp literals) into a
/// ``QueryPredicate``, substituting the arguments.
///
/// ```
/// predicate  := or
/// or         := and (("OR" | "||") and)*
/// and        := not (("AND" | "&&") not)*
/// not        := ("NOT" | "!") not | "(" predicate ")" | TRUEPREDICATE | FALSEPREDICATE | comparison
/// comparison := [ANY | SOME | ALL | NONE] expression operator expression
/// expression := keypath | literal | %@ | $0 | "{" expression, … "}" | SUBQUERY(keypath, $x, predicate).@count
/// ```
struct QueryParser {
    private let tokens: [QueryToken]
    private var index = 0
    /// How deeply parentheses, NOT, lists and SUBQUERY are nested at the current token. Bounded
    /// so that hostile text fails with a message instead of overflowing the stack (found by the
    /// query fuzzer with 800 nested braces).
    private var depth = 0
    static let maximumDepth = 100
    private let arguments: [QueryValue]
    private var nextArgument = 0

    static func parse(_ text: String, arguments: [QueryValue] = []) throws(QueryError) -> QueryPredicate {
        var parser = QueryParser(tokens: try QueryLexer.tokens(text), arguments: arguments)
        let predicate = try parser.orExpression()
        guard case .end = parser.current.kind else {
            throw parser.error("unexpected \(parser.describe(parser.current)) after the end of the predicate")
        }
        return predicate
    }

    private init(tokens: [QueryToken], arguments: [QueryValue]) {
        self.tokens = tokens
        self.arguments = arguments
    }

    // MARK: - Tokens

    private var current: QueryToken { tokens[index] }
    private mutating func advance() { if index < tokens.count - 1 { index += 1 } }

    /// Enters one more level of nesting; throws past ``maximumDepth``.
    private mutating func enterNesting() throws(QueryError) {
        depth += 1
        if depth > Self.maximumDepth {
            throw error("the predicate is nested more than \(Self.maximumDepth) levels deep")
        }
    }

    private func error(_ message: String, at token: QueryToken? = nil) -> QueryError {
        QueryError(message: message, offset: (token ?? current).offset)
    }

    private func describe(_ token: QueryToken) -> String {
        switch token.kind {
        case .identifier(let name): "'\(name)'"
        case .variable(let name): "'$\(name)'"
        case .argument(let format, let index): format == "$" ? "'$\(index ?? 0)'" : "'%\(format)'"
        case .number(let text): "'\(text)'"
        case .string(let text): "'\"\(text)\"'"
        case .date: "a date"
        case .typedLiteral(let name, let body): "'\(name)(\(body))'"
        case .symbol(let symbol): "'\(symbol)'"
        case .end: "the end of the text"
        }
    }

    private func isKeyword(_ keyword: String, _ token: QueryToken? = nil) -> Bool {
        if case .identifier(let name) = (token ?? current).kind {
            return QueryToken.spells(name, keyword)
        }
        return false
    }

    private func isSymbol(_ symbol: String) -> Bool {
        if case .symbol(let s) = current.kind { return s == symbol }
        return false
    }

    private mutating func expect(_ symbol: String, _ what: String) throws(QueryError) {
        guard isSymbol(symbol) else { throw error("expected \(what) but found \(describe(current))") }
        advance()
    }

    // MARK: - Predicates

    private mutating func orExpression() throws(QueryError) -> QueryPredicate {
        var lhs = try andExpression()
        while isKeyword("OR") || isSymbol("||") {
            advance()
            lhs = .disjunction(lhs, try andExpression())
        }
        return lhs
    }

    private mutating func andExpression() throws(QueryError) -> QueryPredicate {
        var lhs = try notExpression()
        while isKeyword("AND") || isSymbol("&&") {
            advance()
            lhs = .conjunction(lhs, try notExpression())
        }
        return lhs
    }

    private mutating func notExpression() throws(QueryError) -> QueryPredicate {
        if isKeyword("NOT") || isSymbol("!") {
            try enterNesting()
            advance()
            let inner = try notExpression()
            depth -= 1
            return .not(inner)
        }
        if isSymbol("(") {
            try enterNesting()
            advance()
            let inner = try orExpression()
            try expect(")", "')'")
            depth -= 1
            return inner
        }
        if isKeyword("TRUEPREDICATE") { advance(); return .constant(true) }
        if isKeyword("FALSEPREDICATE") { advance(); return .constant(false) }
        return try comparison()
    }

    private mutating func comparison() throws(QueryError) -> QueryPredicate {
        var quantifier = QueryQuantifier.single
        if isKeyword("ANY") || isKeyword("SOME") { quantifier = .any; advance() }
        else if isKeyword("ALL") { quantifier = .all; advance() }
        else if isKeyword("NONE") { quantifier = .none; advance() }

        let lhsToken = current
        let lhs = try expression()
        let opToken = current
        guard let op = try comparisonOperator() else {
            if case .end = opToken.kind {
                throw error("expected a comparison operator after \(describe(lhsToken)) but the text ended")
            }
            throw error("expected a comparison operator but found \(describe(opToken))")
        }
        let options = try stringOptions()
        let rhs = try expression()
        return .comparison(QueryComparison(quantifier: quantifier, lhs: lhs, op: op, options: options, rhs: rhs))
    }

    private mutating func comparisonOperator() throws(QueryError) -> QueryOperator? {
        if case .symbol(let symbol) = current.kind {
            let op: QueryOperator? = switch symbol {
            case "==", "=": .equal
            case "!=", "<>": .notEqual
            case "<": .less
            case "<=": .lessOrEqual
            case ">": .greater
            case ">=": .greaterOrEqual
            default: nil
            }
            if op != nil { advance() }
            return op
        }
        for op in [QueryOperator.beginsWith, .endsWith, .contains, .like, .in, .between] where isKeyword(op.rawValue) {
            advance()
            return op
        }
        if isKeyword("GEOWITHIN") {
            // Realm's keyword for `IN` with a shape (`location GEOWITHIN %@`).
            advance()
            return .in
        }
        if isKeyword("MATCHES") {
            throw error("the operator 'MATCHES' is not supported (use LIKE with '*' and '?' wildcards)")
        }
        return nil
    }

    /// `[c]`, `[d]`, `[cd]` after an operator.
    private mutating func stringOptions() throws(QueryError) -> QueryStringOptions {
        guard isSymbol("[") else { return [] }
        let start = current
        advance()
        guard case .identifier(let letters) = current.kind, !letters.isEmpty else {
            throw error("expected 'c', 'd' or 'cd' inside '[ ]' after the operator", at: start)
        }
        var options = QueryStringOptions()
        for letter in letters.lowercased() {
            switch letter {
            case "c": options.insert(.caseInsensitive)
            case "d": options.insert(.diacriticInsensitive)
            default: throw error("unknown string option '\(letter)': use [c], [d] or [cd]")
            }
        }
        advance()
        try expect("]", "']'")
        return options
    }

    // MARK: - Expressions

    private mutating func expression() throws(QueryError) -> QueryExpression {
        let token = current
        switch token.kind {
        case .number(let text):
            advance()
            return .constant(try number(text, token))
        case .string(let text):
            advance()
            return .constant(.string(text))
        case .date(let date):
            advance()
            return .constant(.date(date))
        case .typedLiteral(let name, let body):
            advance()
            if name == "oid" {
                guard let id = try? ObjectId(string: body) else {
                    throw error("'\(body)' is not a valid ObjectId: expected 24 hexadecimal digits", at: token)
                }
                return .constant(.objectId(id))
            }
            guard let uuid = UUID(uuidString: body) else { throw error("'\(body)' is not a valid UUID", at: token) }
            return .constant(.uuid(uuid))
        case .argument(let format, let position):
            advance()
            let value = try argument(position, token)
            if format == "K" {
                guard case .string(let name) = value else {
                    throw error("the argument for %K must be a property name (a String)", at: token)
                }
                return .keyPath(try keyPath(startingWith: name, variable: nil))
            }
            return .argument(value)
        case .variable(let name):
            advance()
            return .keyPath(try keyPath(startingWith: nil, variable: name))
        case .symbol("{"):
            try enterNesting()
            defer { depth -= 1 }
            advance()
            var items = [QueryExpression]()
            if !isSymbol("}") {
                items.append(try expression())
                while isSymbol(",") {
                    advance()
                    items.append(try expression())
                }
            }
            try expect("}", "'}' or ','")
            return .list(items)
        case .identifier(let name):
            if let literal = literal(name) { return .constant(literal) }
            if QueryToken.spells(name, "SUBQUERY") {
                try enterNesting()
                defer { depth -= 1 }
                return try subquery()
            }
            advance()
            return .keyPath(try keyPath(startingWith: name, variable: nil, at: token))
        case .end:
            throw error("expected a property name or a value but the text ended")
        case .symbol:
            throw error("expected a property name or a value but found \(describe(token))")
        }
    }

    private mutating func argument(_ position: Int?, _ token: QueryToken) throws(QueryError) -> QueryValue {
        let index: Int
        if let position { index = position } else {
            index = nextArgument
            nextArgument += 1
        }
        guard index < arguments.count else {
            throw error("the predicate uses argument \(index) but only \(arguments.count) "
                + "argument\(arguments.count == 1 ? " was" : "s were") given", at: token)
        }
        return arguments[index]
    }

    private func number(_ text: String, _ token: QueryToken) throws(QueryError) -> QueryValue {
        let lower = text.lowercased()
        if lower.hasPrefix("0x") || lower.hasPrefix("-0x") {
            let negative = lower.hasPrefix("-")
            guard let value = Int64(lower.dropFirst(negative ? 3 : 2), radix: 16) else {
                throw error("'\(text)' is not a valid number", at: token)
            }
            return .int(negative ? -value : value)
        }
        if let value = Int64(text) { return .int(value) }
        if let value = Double(text) { return .double(value) }
        throw error("'\(text)' is not a valid number", at: token)
    }

    /// `true`, `false`, `nil`, `NULL`; nil for anything else.
    private mutating func literal(_ name: String) -> QueryValue? {
        switch name.lowercased() {
        case "true", "yes": advance(); return .bool(true)
        case "false", "no": advance(); return .bool(false)
        case "nil", "null": advance(); return .null
        default:
            return nil
        }
    }

    private mutating func subquery() throws(QueryError) -> QueryExpression {
        let start = current
        advance()
        try expect("(", "'(' after SUBQUERY")
        let collectionToken = current
        guard case .keyPath(let collection) = try expression() else {
            throw error("the first argument of SUBQUERY must be a key path to a collection", at: collectionToken)
        }
        try expect(",", "',' after the SUBQUERY collection")
        guard case .variable(let variable) = current.kind else {
            throw error("expected a variable such as '$x' as the second argument of SUBQUERY")
        }
        advance()
        try expect(",", "',' after the SUBQUERY variable")
        let predicate = try orExpression()
        try expect(")", "')' to close SUBQUERY")
        guard isSymbol("."), case .identifier(let op) = tokens[min(index + 1, tokens.count - 1)].kind,
              op == "@count" || op == "@size"
        else {
            throw error("SUBQUERY is only supported when immediately followed by .@count", at: start)
        }
        advance()
        advance()
        return .subqueryCount(collection: collection, variable: variable, predicate: predicate)
    }

    /// The rest of a key path after its first name (or variable): `.name`, `['key']`, `@ops`.
    private mutating func keyPath(startingWith first: String?, variable: String?,
                                  at token: QueryToken? = nil) throws(QueryError) -> QueryKeyPath
    {
        var components = [QueryKeyPathComponent]()
        if first == "@links" {
            components.append(try links(token ?? current))
        } else if let first {
            // A %K argument may hold a dotted path.
            for part in first.split(separator: ".", omittingEmptySubsequences: false) {
                components.append(try component(String(part), token ?? current))
            }
        }
        while true {
            if isSymbol("[") {
                advance()
                if isSymbol("*") {
                    // `anyCol[*]`: every element of a collection nested in an AnyRealmValue.
                    advance()
                    try expect("]", "']' after '[*'")
                    components.append(.allElements)
                    continue
                }
                // A key may itself be a key path with subscripts: count the nesting.
                try enterNesting()
                let key = try expression()
                depth -= 1
                try expect("]", "']' after a map key")
                components.append(.mapKey(key))
            } else if isSymbol(".") {
                advance()
                guard case .identifier(let name) = current.kind else {
                    throw error("expected a property name after '.' but found \(describe(current))")
                }
                let token = current
                advance()
                if name == "@links" {
                    components.append(try links(token))
                } else {
                    components.append(try component(name, token))
                }
            } else {
                break
            }
        }
        return QueryKeyPath(variable: variable, components)
    }

    private func component(_ name: String, _ token: QueryToken) throws(QueryError) -> QueryKeyPathComponent {
        guard name.hasPrefix("@") else { return .property(name) }
        // `@keys` and `@values` are the Realm Query Language's names (realm-core, sync
        // subscriptions) for what NSPredicate text calls `@allKeys` and `@allValues`.
        let spelling = name == "@keys" ? "@allKeys" : name == "@values" ? "@allValues" : name
        guard let op = QueryCollectionOperation(rawValue: spelling) else {
            throw error("unsupported collection operation '\(name)' (use @count, @size, @min, @max, @sum, @avg, "
                + "@allKeys, @allValues, @keys, @values or @links)", at: token)
        }
        return .operation(op)
    }

    /// After `@links`: `.@count` or `.Class.property`.
    private mutating func links(_ token: QueryToken) throws(QueryError) -> QueryKeyPathComponent {
        try expect(".", "'.' after @links")
        guard case .identifier(let className) = current.kind else {
            throw error("expected a class name or @count after '@links.'")
        }
        advance()
        if className == "@count" { return .linksCount }
        try expect(".", "'.' and a property name after '@links.\(className)'")
        guard case .identifier(let property) = current.kind else {
            throw error("expected a property name after '@links.\(className).'")
        }
        advance()
        return .links(className: className, property: property)
    }
}

extension QueryParser {
    /// The message for a query that does not parse: the text, a caret under the problem, and
    /// what was expected.
    static func message(for error: QueryError, in text: String) -> String {
        guard let offset = error.offset else { return "Invalid predicate '\(text)': \(error.message)." }
        let prefix = String(decoding: Array(text.utf8).prefix(offset), as: UTF8.self)
        return "Invalid predicate '\(text)' at offset \(offset): \(error.message).\n    \(text)\n    "
            + String(repeating: " ", count: prefix.count) + "^"
    }
}
