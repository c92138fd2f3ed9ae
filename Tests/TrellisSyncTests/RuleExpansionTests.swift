import Foundation
import Testing
import TrellisSyncProtocol
@testable import TrellisSyncServer

/// The expansions App Services allows in Device Sync rules (`%%user.data`, `%%values`,
/// `%%environment`) evaluate as there, and the others stop the server at start with the rule
/// and the expansion named, instead of being read as plain values.
struct RuleExpansionTests {
    private func role(_ text: String) throws -> SyncRole {
        try SyncRole(try JSONValue(jsonText: text), at: "rules.json")
    }

    private func write(_ text: String, to url: URL) throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try text.write(to: url, atomically: true, encoding: .utf8)
    }

    @Test func unsupportedExpansionsAreRefusedNamingTheRoleAndTheExpansion() throws {
        let cases: [(String, String)] = [
            (#"{"owner_id": {"%function": {"name": "isOwner"}}}"#, "%function"),
            (#"{"owner_id": {"%stringToOid": "%%user.id"}}"#, "%stringToOid"),
            (#"{"owner_id": "%%root.owner_id"}"#, "%%root.owner_id"),
            (#"{"owner_id": "%%prevRoot.owner_id"}"#, "%%prevRoot.owner_id"),
            (#"{"ip": {"$in": ["%%request.remoteIPAddress"]}}"#, "%%request.remoteIPAddress"),
            (#"{"owner_id": "%%partition"}"#, "%%partition"),
            (#"{"owner_id": "%%user.name"}"#, "%%user.name"),
            (#"{"owner_id": "%%usr.id"}"#, "%%usr.id"),
            (#"{"%%root.owner_id": "%%user.id"}"#, "%%root.owner_id"),
            (#"{"%function": {"name": "check"}}"#, "%function"),
            (#"{"team": "%%environment.name"}"#, "%%environment.name"),
        ]
        for (filter, expansion) in cases {
            let text = #"{"name": "owner", "document_filters": {"read": "# + filter + #", "write": false}}"#
            #expect("\(filter)") {
                try role(text)
            } throws: { error in
                let message = "\(error)"
                return message.contains("role 'owner'") && message.contains("document_filters.read")
                    && message.contains(expansion)
            }
        }
        // In apply_when too.
        #expect {
            try role(#"{"name": "admin", "apply_when": {"%%user.custom_data.isAdmin": {"%function": {"name": "f"}}},"#
                + #" "document_filters": {"read": true, "write": true}}"#)
        } throws: { "\($0)".contains("role 'admin', apply_when") && "\($0)".contains("%function") }
        // The supported ones parse.
        for filter in [#"{"owner_id": "%%user.id"}"#, #"{"team": "%%user.custom_data.team"}"#,
                       #"{"email": "%%user.data.email"}"#, #"{"team": {"$in": "%%values.teams"}}"#,
                       #"{"region": "%%environment.values.region"}"#, #"{"env": "%%environment.tag"}"#,
                       #"{"%%user.custom_data.isAdmin": true}"#, #"{"shared": "%%true"}"#] {
            _ = try role(#"{"name": "ok", "document_filters": {"read": "# + filter + #", "write": false}}"#)
        }
    }

    @Test func userDataValuesAndEnvironmentExpand() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("app-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try write(#"""
            {"collection": "Item", "roles": [
              {"name": "admin", "apply_when": {"%%user.id": {"$in": "%%values.admins"}},
               "document_filters": {"read": true, "write": true}, "read": true, "write": true},
              {"name": "team", "apply_when": {},
               "document_filters": {"read": {"team": "%%user.data.team", "region": "%%environment.values.region"},
                                    "write": false}, "read": true}]}
            """#, to: folder.appendingPathComponent("data_sources/mongodb-atlas/todo/Item/rules.json"))
        try write(#"{"name": "admins", "value": ["root", "ops"], "from_secret": false}"#,
                  to: folder.appendingPathComponent("values/admins.json"))
        try write(#"{"app_id": "x", "environment": "production"}"#, to: folder.appendingPathComponent("root_config.json"))
        try write(#"{"values": {"region": "eu"}}"#, to: folder.appendingPathComponent("environments/production.json"))
        let rules = try SyncRules(contentsOf: folder.path)
        #expect(rules.app.values["admins"] == .array([.string("root"), .string("ops")]))
        #expect(rules.app.environmentTag == "production")

        let root = SessionPermissions(rules: rules, user: RuleUser(id: "root"), collections: ["Item"])
        #expect(root.role(of: "Item")?.name == "admin")
        var ana = RuleUser(id: "ana")
        ana.data = ["team": .string("blue")]
        let anas = SessionPermissions(rules: rules, user: ana, collections: ["Item"])
        #expect(anas.role(of: "Item")?.name == "team")
        #expect(anas.readable("Item", .object(["_id": .int(1), "team": .string("blue"), "region": .string("eu")])) != nil)
        #expect(anas.readable("Item", .object(["_id": .int(2), "team": .string("red"), "region": .string("eu")])) == nil)
        #expect(anas.readable("Item", .object(["_id": .int(3), "team": .string("blue"), "region": .string("us")])) == nil)
        // What the session's expansions gave, to tell a role change at the next session.
        #expect(anas.expandedUserValues == ["%%user.id": .string("ana"), "%%user.data.team": .string("blue")])

        // A value the app does not have, and a secret, are refused at start.
        try write(#"{"name": "admins", "value": "x", "from_secret": true}"#, to: folder.appendingPathComponent("values/admins.json"))
        #expect { try SyncRules(contentsOf: folder.path) } throws: { "\($0)".contains("comes from a secret") }
        try FileManager.default.removeItem(at: folder.appendingPathComponent("values/admins.json"))
        #expect { try SyncRules(contentsOf: folder.path) } throws: { error in
            "\(error)".contains("%%values.admins names no value") && "\(error)".contains("role 'admin', apply_when")
        }
    }

    @Test func jwtMetadataFieldsBecomeUserDataAndRequiredOnesMustBeThere() throws {
        let fields = try JWTMetadataField.list(try JSONValue(jsonText: #"""
            [{"required": true, "name": "email"}, {"name": "user_data.team", "field_name": "team"},
             {"name": "missing.optional"}]
            """#), at: "providers.json")
        let claims = try JSONValue(jsonText: #"{"sub": "ana", "email": "ana@example.com", "user_data": {"team": "blue"}}"#)
        #expect(try JWTMetadataField.userData(fields, claims: claims.objectValue ?? [:])
            == ["email": .string("ana@example.com"), "team": .string("blue")])
        #expect { try JWTMetadataField.userData(fields, claims: ["sub": .string("ben")]) }
            throws: { "\($0)".contains("no 'email' claim") }
        // The claims of a token as the login route reads them.
        let payload = Data(#"{"sub":"ana","email":"a@b.c"}"#.utf8).base64EncodedString()
            .replacingOccurrences(of: "=", with: "").replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        #expect(Authenticator.claims(of: "e30.\(payload).sig")["email"] == .string("a@b.c"))
    }
}

extension RuleExpansionTests {
    @Test func serverWithARuleUsingAnUnsupportedExpansionDoesNotStartAndSaysWhichRule() throws {
        let rulesFile = FileManager.default.temporaryDirectory.appendingPathComponent("rules-\(UUID().uuidString).json")
        try #"""
            {"rules": [{"collection": "SyncTask", "roles": [{"name": "checked", "apply_when": {},
              "document_filters": {"read": {"%function": {"name": "canRead", "arguments": ["%%root"]}}, "write": false},
              "read": true}]}]}
            """#.write(to: rulesFile, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: rulesFile) }
        // The rules are read before the database: no PostgreSQL is needed to see the refusal.
        #expect {
            try ServerProcess(database: "postgres://nobody@127.0.0.1:1/none", schema: try makeSchemaFile(),
                              arguments: ["--rules", rulesFile.path])
        } throws: { error in
            let message = "\(error)"
            return message.contains("role 'checked'") && message.contains("%function")
                && message.contains(rulesFile.path)
        }
    }
}
