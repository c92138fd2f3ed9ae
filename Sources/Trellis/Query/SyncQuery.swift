import Foundation

/// A subscription's query for TrellisSync (`package` level): the predicate text with every
/// argument written as a literal (what travels to the server), and an evaluator of the same
/// predicate over an object's canonical Extended JSON document (what the server runs).
package struct SyncQuery: @unchecked Sendable {
    // @unchecked Sendable: the tree holds only value cases once arguments are literals.
    /// The parsed predicate (read by the server's SQL translation, TrellisSyncServer).
    package let predicate: QueryPredicate

    /// The predicate text, arguments inlined (`(owner == "me")`).
    package let text: String

    init(_ predicate: QueryPredicate) {
        self.predicate = predicate.inliningArguments()
        text = self.predicate.description
    }

    /// Parses predicate text (`"owner == %@"` with `arguments`).
    ///
    /// - Throws: ``Realm/Error`` (`.invalidQuery`-like message) when the text does not parse.
    package static func parse(_ text: String, arguments: [Any] = []) throws -> SyncQuery {
        do {
            return SyncQuery(try QueryParser.parse(text, arguments: arguments.map(QueryArguments.value)))
        } catch {
            throw Realm.Error(.fail, "Invalid subscription query '\(text)': \(QueryParser.message(for: error, in: text))")
        }
    }

    /// The query of a typed builder (`{ $0.owner == "me" }`).
    package init<T>(_ query: Query<T>) {
        switch query.node {
        case .predicate(let predicate, _): self.init(predicate)
        default: self.init(.constant(true))
        }
    }

    /// The query a typed builder makes from the root query of `type`.
    package init<T: ObjectBase>(_ type: T.Type, _ build: (Query<T>) -> Query<Bool>) {
        self.init(build(Query<T>()))
    }

    /// `TRUEPREDICATE`: every object of the class.
    package static let all = SyncQuery(.constant(true))

    /// Whether the query selects every object (`TRUEPREDICATE`): no document needs evaluating.
    package var selectsEverything: Bool {
        if case .constant(true) = predicate { return true }
        return false
    }

    /// Whether an object, given as its canonical Extended JSON document, matches. Links are
    /// primary keys in a document, so a key path through a link does not match.
    package func matches(_ document: [String: Any]) -> Bool { Self.evaluate(predicate, document) }

    /// Whether the evaluator supports every key path of the predicate (plain and embedded
    /// properties, map keys, `@count`/`@size`); the reason when it does not.
    package var unsupportedReason: String? { Self.unsupported(predicate) }

    private static func unsupported(_ predicate: QueryPredicate) -> String? {
        switch predicate {
        case .constant: return nil
        case .and(let operands), .or(let operands): return operands.lazy.compactMap(unsupported).first
        case .not(let inner): return unsupported(inner)
        case .comparison(let comparison):
            for expression in [comparison.lhs, comparison.rhs] {
                if case .subqueryCount = expression { return "SUBQUERY is not supported in subscriptions" }
                if case .keyPath(let path) = expression {
                    for component in path.components {
                        switch component {
                        case .links, .linksCount: return "@links is not supported in subscriptions"
                        case .operation(let op) where op != .count && op != .size:
                            return "\(op.rawValue) is not supported in subscriptions"
                        default: continue
                        }
                    }
                }
            }
            return nil
        }
    }

    private static func evaluate(_ predicate: QueryPredicate, _ document: [String: Any]) -> Bool {
        predicate.holds { comparison in
            let lhs = values(comparison.lhs, document)
            let rhs = values(comparison.rhs, document)
            guard let right = rhs.first else { return false }
            let test = { (left: QueryValue) in
                QueryValueComparison.matches(left, comparison.op, right, comparison.options)
            }
            switch comparison.quantifier {
            case .all: return lhs.allSatisfy(test)
            case .none: return !lhs.contains(where: test)
            case .single, .any: return lhs.contains(where: test)
            }
        }
    }

    /// The values an expression gives for a document (several for a key path through an array).
    private static func values(_ expression: QueryExpression, _ document: [String: Any]) -> [QueryValue] {
        switch expression {
        case .constant(let value), .argument(let value): return [value]
        case .list(let items): return [.list(items.flatMap { values($0, document) })]
        case .subqueryCount: return []
        case .keyPath(let path):
            var current: [Any] = [document]
            for component in path.components {
                var next = [Any]()
                for item in current {
                    switch component {
                    case .property(let name):
                        guard let object = item as? [String: Any] else { continue }
                        let value = object[name] ?? NSNull()
                        if let array = value as? [Any] { next += array } else { next.append(value) }
                    case .mapKey(let key):
                        guard let object = item as? [String: Any], case .constant(.string(let name)) = key
                        else { continue }
                        next.append(object[name] ?? NSNull())
                    case .operation(.count), .operation(.size):
                        next.append(["$numberLong": "\((item as? [Any])?.count ?? (item as? [String: Any])?.count ?? 0)"])
                    default: continue
                    }
                }
                current = next
            }
            return current.map(queryValue)
        }
    }

    /// A canonical (or relaxed) Extended JSON value as a query value.
    static func queryValue(_ json: Any) -> QueryValue {
        switch json {
        case is NSNull: return .null
        case let string as String: return .string(string)
        case let number as NSNumber:
            if String(cString: number.objCType) == "c" { return .bool(number.boolValue) }
            if let int = json as? Int64, Double(int) == number.doubleValue { return .int(int) }
            return .double(number.doubleValue)
        case let object as [String: Any]:
            if let long = object["$numberLong"] as? String, let value = Int64(long) { return .int(value) }
            if let int = object["$numberInt"] as? String, let value = Int64(int) { return .int(value) }
            if let double = object["$numberDouble"] as? String, let value = Double(double) { return .double(value) }
            if let oid = object["$oid"] as? String, let id = try? ObjectId(string: oid) { return .objectId(id) }
            if let decimal = object["$numberDecimal"] as? String { return .decimal(Decimal128(stringLiteral: decimal)) }
            if let date = object["$date"] {
                let millis = (date as? [String: Any]).flatMap { ($0["$numberLong"] as? String).flatMap(Int64.init) }
                    ?? (date as? NSNumber)?.int64Value ?? 0
                return .date(Date(timeIntervalSince1970: Double(millis) / 1000))
            }
            if let binary = object["$binary"] as? [String: Any], let base64 = binary["base64"] as? String,
               let data = Data(base64Encoded: base64)
            {
                if binary["subType"] as? String == "04", data.count == 16 {
                    let uuid = data.withUnsafeBytes { $0.loadUnaligned(as: uuid_t.self) }
                    return .uuid(UUID(uuid: uuid))
                }
                return .data(data)
            }
            return .null
        default: return .null
        }
    }
}

extension QueryPredicate {
    /// The same predicate with every argument turned into a literal (so its text stands alone).
    func inliningArguments() -> QueryPredicate {
        switch self {
        case .constant: self
        case .and(let operands): .and(operands.map { $0.inliningArguments() })
        case .or(let operands): .or(operands.map { $0.inliningArguments() })
        case .not(let inner): .not(inner.inliningArguments())
        case .comparison(var comparison):
            {
                comparison.lhs = comparison.lhs.inliningArguments()
                comparison.rhs = comparison.rhs.inliningArguments()
                return .comparison(comparison)
            }()
        }
    }
}

extension QueryExpression {
    func inliningArguments() -> QueryExpression {
        switch self {
        case .argument(let value): .constant(value)
        case .list(let items): .list(items.map { $0.inliningArguments() })
        default: self
        }
    }
}
