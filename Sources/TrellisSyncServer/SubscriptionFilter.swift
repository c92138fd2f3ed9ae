import PostgresNIO
import Trellis

/// The SQL side of a collection's subscriptions for a bootstrap (docs/SYNC.md,
/// "Subscriptions"): `(q1 OR q2 …) IS NOT FALSE` over `doc`, so PostgreSQL leaves out the rows
/// no query selects and keeps those it cannot decide; the session still checks each row it
/// sends with the Swift evaluator. Literals are bound parameters.
struct SubscriptionFilter: Sendable {
    /// A boolean SQL expression over the table's `doc`.
    let condition: String
    let parameters: [SyncSQLParameter]

    init(_ queries: [SyncQuery]) {
        var parameters = [SyncSQLParameter]()
        let conditions = queries.map { $0.sqlCondition(document: "doc", parameters: &parameters) }
        condition = "(" + (conditions.isEmpty ? "FALSE" : conditions.joined(separator: " OR ")) + ") IS NOT FALSE"
        self.parameters = parameters
    }

    /// One page of a bootstrap: `SELECT _id::text, doc::text, <newest timestamp> FROM table
    /// WHERE condition AND _id > after ORDER BY table._id LIMIT limit` (without `filter`: every
    /// row; without `after`: from the first).
    static func selectDocuments(from table: String, idType: String, filter: SubscriptionFilter?, after: String?,
                                limit: Int) -> PostgresQuery
    {
        var bindings = PostgresBindings(filter?.parameters ?? [])
        var conditions = [String]()
        if let filter { conditions.append("(" + filter.condition + ")") }
        if let after {
            bindings.append(after)
            conditions.append("_id > $\((filter?.parameters.count ?? 0) + 1)::\(idType)")
        }
        let condition = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        // `ORDER BY _id` alone would name the output column `_id::text` (PostgreSQL prefers an
        // output column's name): a bigint or uuid key would be ordered as text and compared as
        // its type, so a page would skip rows and send others twice.
        return PostgresQuery(unsafeSQL: "SELECT _id::text, doc::text, \(PostgresStore.newestStamp("_meta")) FROM \(table)"
                                + condition + " ORDER BY \(table)._id LIMIT \(limit)",
                             binds: bindings)
    }
}

extension PostgresBindings {
    /// The values of a translated query's parameters (`$1`, `$2`, … in order).
    init(_ parameters: [SyncSQLParameter]) {
        self.init()
        for parameter in parameters {
            switch parameter {
            case .text(let text): append(text)
            case .int(let value): append(value)
            case .double(let value): append(value)
            }
        }
    }
}
