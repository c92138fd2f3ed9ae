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

    /// `SELECT doc::text, <newest timestamp> FROM table WHERE condition ORDER BY _id`.
    func selectDocuments(from table: String) -> PostgresQuery {
        PostgresQuery(unsafeSQL: "SELECT doc::text, \(PostgresStore.newestStamp("_meta")) FROM \(table) WHERE \(condition) "
                        + "ORDER BY _id",
                      binds: PostgresBindings(parameters))
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
