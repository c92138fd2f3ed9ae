import Foundation
import Logging
import PostgresNIO
import Testing
import Trellis
import TrellisSyncProtocol
@testable import TrellisSyncServer
import TrellisTestSupport

/// The SQL translation of subscription queries (docs/SYNC.md, "Subscriptions") against the
/// Swift evaluator, on a real PostgreSQL: random documents and random predicates (fixed seed).
/// For every predicate and document, SQL's TRUE means Swift selects it and SQL's FALSE means
/// Swift does not (NULL leaves the document to Swift); on documents of the usual shapes every
/// translated predicate is decided in SQL.
@Suite(.serialized)
struct SubscriptionSQLTests {
    @Test func sqlConditionsSelectExactlyWhatTheSwiftEvaluatorSelects() async throws {
        var random = SplitMix64(seed: 0x7E11_1521)
        var documents = [(id: Int, text: String, usual: Bool)]()
        for id in 0..<300 {
            let (text, usual) = RandomDocuments.make(&random)
            documents.append((id, text, usual))
        }
        try await withTable(documents) { connection, stored in
            var checked = 0, translated = 0, decided = 0, undecidedUsual = [String]()
            var selectedBySQL = 0, leftOutBySQL = 0, disagreements = [String]()
            var predicates = 0
            while predicates < 400 {
                let (format, arguments) = RandomPredicates.make(&random)
                guard let made = try? SyncQuery.parse(format, arguments: arguments),
                      made.unsupportedReason == nil else { continue }
                // As the server gets it: the text with its literals inlined.
                let query = try SyncQuery.parse(made.text)
                predicates += 1
                var parameters = [SyncSQLParameter]()
                let condition = query.sqlCondition(document: "doc", parameters: &parameters)
                let isTrue = try await ids(connection, "(\(condition)) IS TRUE", parameters)
                let isNotFalse = try await ids(connection, "(\(condition)) IS NOT FALSE", parameters)
                let fullyTranslated = query.isTranslatedToSQL
                if fullyTranslated { translated += 1 }
                for document in stored {
                    let swift = query.matches(document.object)
                    let sqlTrue = isTrue.contains(document.id), sqlNotFalse = isNotFalse.contains(document.id)
                    checked += 1
                    if sqlTrue && !swift || !sqlNotFalse && swift {
                        disagreements.append("\(query.text) on \(document.text): Swift \(swift), SQL "
                            + (sqlTrue ? "TRUE" : sqlNotFalse ? "NULL" : "FALSE"))
                    }
                    if sqlTrue { selectedBySQL += 1 }
                    if !sqlNotFalse { leftOutBySQL += 1 }
                    if sqlTrue || !sqlNotFalse { decided += 1 }
                    if fullyTranslated, document.usual, !sqlTrue, sqlNotFalse {
                        undecidedUsual.append("\(query.text) on \(document.text)")
                    }
                }
            }
            #expect(disagreements.isEmpty, "\(disagreements.count) disagreements, e.g. \(disagreements.prefix(5))")
            #expect(undecidedUsual.isEmpty,
                    "\(undecidedUsual.count) undecided on usual documents, e.g. \(undecidedUsual.prefix(5))")
            // Not vacuous: most predicates translate, and SQL decides most pairs both ways.
            #expect(translated > predicates * 3 / 4, "\(translated) of \(predicates) predicates translated")
            #expect(decided > checked * 3 / 4, "\(decided) of \(checked) decided in SQL")
            #expect(selectedBySQL > checked / 20 && leftOutBySQL > checked / 4,
                    "\(selectedBySQL) selected, \(leftOutBySQL) left out by SQL of \(checked)")
        }
    }

    @Test func literalsAndPropertyNamesAreBoundNotSpliced() async throws {
        let injection = "x'); DROP TABLE docs; --"
        let documents = [(id: 1, text: #"{"name": "x'); DROP TABLE docs; --"}"#, usual: true),
                         (id: 2, text: #"{"name": "Rex"}"#, usual: true)]
        try await withTable(documents) { connection, stored in
            for format in ["name == %@", "name BEGINSWITH %@", "name ENDSWITH %@", "name LIKE %@", "name IN %@",
                           "name CONTAINS[c] %@"] {
                let argument: Any = format.hasSuffix("IN %@") ? [injection] : injection
                let query = try SyncQuery.parse(SyncQuery.parse(format, arguments: [argument]).text)
                var parameters = [SyncSQLParameter]()
                let condition = query.sqlCondition(document: "doc", parameters: &parameters)
                #expect(!condition.contains("DROP"), "the literal is in the SQL text: \(condition)")
                #expect(!condition.contains("name"), "the property name is in the SQL text: \(condition)")
                #expect(query.isTranslatedToSQL)
                let selected = try await ids(connection, "(\(condition)) IS TRUE", parameters)
                #expect(selected == Set(stored.filter { query.matches($0.object) }.map(\.id)), "\(format)")
                #expect(selected.contains(1), "\(format)")
            }
            let count = try await connection.query("SELECT count(*)::bigint FROM docs", logger: logger)
            for try await (rows) in count.decode(Int64.self) { #expect(rows == 2) }
        }
    }

    // MARK: - Support

    private let logger = Logger(label: "subscription-sql-tests")

    struct StoredDocument {
        let id: Int
        let text: String
        /// Whether every value has one of the usual shapes.
        let usual: Bool
        /// As the server evaluates it: the `jsonb` text PostgreSQL returns, parsed.
        let object: [String: Any]
    }

    /// A table `docs (id, doc jsonb)` in a new database holding the documents; the documents as
    /// PostgreSQL gives them back.
    private func withTable(_ documents: [(id: Int, text: String, usual: Bool)],
                           _ body: (PostgresConnection, [StoredDocument]) async throws -> Void) async throws {
        let connection = try await PostgresFixture.connectToNewDatabase(logger: logger)
        do {
            try await connection.query("CREATE TABLE docs (id bigint PRIMARY KEY, doc jsonb NOT NULL)", logger: logger)
            for document in documents {
                try await connection.query("INSERT INTO docs VALUES (\(Int64(document.id)), \(document.text)::jsonb)",
                                           logger: logger)
            }
            var stored = [StoredDocument]()
            let rows = try await connection.query("SELECT id, doc::text FROM docs ORDER BY id", logger: logger)
            for try await (id, text) in rows.decode((Int64, String).self) {
                let object = try JSONValue(jsonText: text).foundationObject as? [String: Any] ?? [:]
                let usual = documents.first { $0.id == Int(id) }?.usual ?? false
                stored.append(StoredDocument(id: Int(id), text: text, usual: usual, object: object))
            }
            try await body(connection, stored)
            try await connection.close()
        } catch {
            try? await connection.close()
            throw error
        }
    }

    private func ids(_ connection: PostgresConnection, _ condition: String,
                     _ parameters: [SyncSQLParameter]) async throws -> Set<Int> {
        let rows = try await connection.query(
            PostgresQuery(unsafeSQL: "SELECT id FROM docs WHERE \(condition)", binds: PostgresBindings(parameters)),
            logger: logger)
        var ids = Set<Int>()
        for try await (id) in rows.decode(Int64.self) { ids.insert(Int(id)) }
        return ids
    }
}
