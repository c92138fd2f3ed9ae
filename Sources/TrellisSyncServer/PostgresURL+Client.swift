import PostgresNIO

extension PostgresURL {
    /// The pool's configuration for this URL: its TLS, at most 16 connections, and `jit = off`
    /// on every connection.
    ///
    /// The server's statements are short and keyed (a session's download, an upload's batch, the
    /// history's numbering); PostgreSQL's JIT compiler pays off only for long analytical scans,
    /// and a statement the planner misestimates above `jit_above_cost` is compiled again at every
    /// execution (session 35 saw the history's reads compiled after an index change: docs/SYNC.md
    /// "History index"). Off is PostgreSQL's own advice for such workloads.
    func clientConfiguration() throws -> PostgresClient.Configuration {
        var configuration = PostgresClient.Configuration(host: host, port: port, username: user, password: password,
                                                         database: database, tls: try tls())
        configuration.options.maximumConnections = 16
        configuration.options.additionalStartupParameters = [("jit", "off")]
        return configuration
    }

    /// `text` for a message when it is not a URL this server reads: the password, if the text has
    /// one (`scheme://user:password@…`, up to the last `@`), replaced by `***`, so a typo in a
    /// URL does not print its secret into logs and terminals.
    static func redacting(_ text: String) -> String {
        guard let schemeEnd = text.range(of: "://") else { return text }
        let rest = text[schemeEnd.upperBound...]
        guard let at = rest.lastIndex(of: "@") else { return text }
        let userInfo = rest[..<at]
        guard let colon = userInfo.firstIndex(of: ":") else { return text }
        return String(text[..<colon]) + ":***" + String(rest[at...])
    }
}
