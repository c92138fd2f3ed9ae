import Foundation
import Testing
import TrellisSyncProtocol
@testable import TrellisSyncServer

/// App Services rules read and evaluated as Device Sync does (docs/SYNC.md, "Permissions"):
/// session roles, document filters with expansions, field-level permissions, and the errors
/// for rules Device Sync cannot use.
struct RulesTests {
    private func role(_ text: String) throws -> SyncRole {
        try SyncRole(try JSONValue(jsonText: text), at: "test")
    }

    private func document(_ text: String) throws -> [String: JSONValue] {
        try JSONValue(jsonText: text).objectValue ?? [:]
    }

    private func rules(_ text: String) throws -> SyncRules {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("rules-\(UUID().uuidString).json")
        try text.write(to: url, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: url) }
        return try SyncRules(contentsOf: url.path)
    }

    @Test func ownerFilterMatchesOnlyTheUsersDocuments() throws {
        let filter = try RuleExpression(try JSONValue(jsonText: #"{"owner_id": "%%user.id"}"#), at: "test")
        let ana = RuleUser(id: "ana")
        #expect(filter.matches(try document(#"{"owner_id": "ana"}"#), user: ana))
        #expect(!filter.matches(try document(#"{"owner_id": "ben"}"#), user: ana))
        #expect(!filter.matches(try document(#"{"title": "no owner"}"#), user: ana))
    }

    @Test func expansionsOperatorsAndCustomDataEvaluate() throws {
        var user = RuleUser(id: "ana")
        user.customData = ["team": .string("red"), "level": .int(3), "teams": .array([.string("red"), .string("blue")])]
        let cases: [(String, String, Bool)] = [
            (#""%%true""#, "{}", true),
            (#""%%false""#, "{}", false),
            ("true", "{}", true),
            ("{}", "{}", true),
            (#"{"team": "%%user.custom_data.team"}"#, #"{"team": "red"}"#, true),
            (#"{"team": "%%user.custom_data.team"}"#, #"{"team": "blue"}"#, false),
            (#"{"team": {"$in": "%%user.custom_data.teams"}}"#, #"{"team": "blue"}"#, true),
            (#"{"team": {"$nin": ["red"]}}"#, #"{"team": "red"}"#, false),
            (#"{"level": {"$lte": "%%user.custom_data.level"}}"#, #"{"level": {"$numberLong": "2"}}"#, true),
            (#"{"level": {"$gt": 3}}"#, #"{"level": 3.0}"#, false),
            (#"{"$or": [{"owner": "%%user.id"}, {"shared": true}]}"#, #"{"owner": "ben", "shared": true}"#, true),
            (#"{"$and": [{"owner": "%%user.id"}, {"shared": true}]}"#, #"{"owner": "ben", "shared": true}"#, false),
            (#"{"$nor": [{"owner": "ben"}]}"#, #"{"owner": "ben"}"#, false),
            (#"{"archived": {"$exists": false}}"#, #"{"owner": "ben"}"#, true),
            (#"{"%%user.custom_data.team": "red"}"#, "{}", true),
            (#"{"%%user.custom_data.missing": "red"}"#, "{}", false),
            (#"{"tags": "urgent"}"#, #"{"tags": ["urgent", "home"]}"#, true),
        ]
        for (expression, doc, expected) in cases {
            let parsed = try RuleExpression(try JSONValue(jsonText: expression), at: "test")
            #expect(parsed.matches(try document(doc), user: user) == expected, "\(expression) on \(doc)")
        }
    }

    @Test func unsupportedOperatorsAndDocumentFieldsInApplyWhenAreRefusedWithTheirPlace() throws {
        #expect { try role(#"{"name": "r", "apply_when": {"owner": "x"}, "document_filters": {"read": true, "write": true}}"#) }
            throws: { "\($0)".contains("apply_when names document fields") }
        #expect { try role(#"{"name": "r", "document_filters": {"read": {"a": {"$regex": "x"}}, "write": false}}"#) }
            throws: { "\($0)".contains("$regex") && "\($0)".contains("role 'r'") }
        #expect { try role(#"{"name": "r", "document_filters": {"read": true}}"#) }
            throws: { "\($0)".contains("document_filters.read and document_filters.write are required") }
        #expect { try role(#"{"name": "r", "document_filters": {"read": true, "write": true}, "read": {"a": 1}}"#) }
            throws: { "\($0)".contains("'read' must be true or false") }
        #expect { try role(#"{"name": "r", "document_filters": {"read": true, "write": true}, "fields": {"_id": {"read": true}}}"#) }
            throws: { "\($0)".contains("_id") }
    }

    @Test func firstRoleWhoseApplyWhenHoldsIsTheSessionRole() throws {
        let rules = try rules(#"""
            {"rules": [{"collection": "Task", "roles": [
              {"name": "admin", "apply_when": {"%%user.custom_data.isAdmin": true},
               "document_filters": {"read": true, "write": true}, "read": true, "write": true},
              {"name": "owner", "apply_when": {}, "document_filters": {"read": {"owner": "%%user.id"},
               "write": {"owner": "%%user.id"}}, "read": true, "write": true}]}],
             "default_rule": {"roles": [{"name": "reader", "apply_when": {},
               "document_filters": {"read": true, "write": false}, "read": true}]}}
            """#)
        var admin = RuleUser(id: "root")
        admin.customData = ["isAdmin": .bool(true)]
        let adminPermissions = SessionPermissions(rules: rules, user: admin, collections: ["Task", "Dog"])
        let anaPermissions = SessionPermissions(rules: rules, user: RuleUser(id: "ana"), collections: ["Task", "Dog"])
        #expect(adminPermissions.role(of: "Task")?.name == "admin")
        #expect(anaPermissions.role(of: "Task")?.name == "owner")
        #expect(anaPermissions.role(of: "Dog")?.name == "reader")
        let bens = JSONValue.object(["owner": .string("ben")])
        #expect(adminPermissions.readable("Task", bens) != nil)
        #expect(anaPermissions.readable("Task", bens) == nil)
        #expect(anaPermissions.readable("Dog", bens) == bens)
    }

    @Test func fieldLevelPermissionsHideFieldsAndRefuseTheirWrites() throws {
        let rules = try rules(#"""
            [{"collection": "Task", "roles": [{"name": "assignee", "apply_when": {},
              "document_filters": {"read": {"owner": "%%user.id"}, "write": {"owner": "%%user.id"}},
              "read": false, "write": false, "insert": false, "delete": false,
              "fields": {"secret": {"read": false}, "priority": {"write": true}},
              "additional_fields": {"read": true}}]}]
            """#)
        let permissions = SessionPermissions(rules: rules, user: RuleUser(id: "ana"), collections: ["Task"])
        let stored = try document(#"{"_id": 1, "owner": "ana", "title": "t", "priority": 1, "secret": "s"}"#)
        let visible = permissions.readable("Task", .object(stored))?.objectValue
        #expect(visible?.keys.sorted() == ["_id", "owner", "priority", "title"])
        func change(_ fields: [FieldChange], kind: SyncObjectChange.Kind = .update) -> SyncObjectChange {
            SyncObjectChange(className: "Task", primaryKey: .int(1), kind: kind, timestamp: "t", fields: fields)
        }
        var after = stored
        after["priority"] = .int(2)
        #expect(permissions.refusal(of: change([.set(name: "priority", value: .int(2))]), before: stored, after: after) == nil)
        after["title"] = .string("changed")
        let titleRefusal = permissions.refusal(of: change([.set(name: "priority", value: .int(2)),
                                                           .set(name: "title", value: .string("changed"))]),
                                               before: stored, after: after)
        #expect(titleRefusal?.contains("may not write the field 'title'") == true)
        #expect(permissions.refusal(of: change([], kind: .delete), before: stored, after: nil)?.contains("delete") == true)
        // The device never saw 'secret': the model's default it sends for it is dropped, not refused.
        let withDefault = change([.set(name: "priority", value: .int(3)), .set(name: "secret", value: .string(""))])
        #expect(permissions.withoutHiddenFields(withDefault, stored: true).fields.map(\.name) == ["priority"])
        #expect(permissions.withoutHiddenFields(withDefault, stored: false).fields.count == 2)
        #expect(permissions.refusal(of: change([], kind: .insert), before: nil, after: stored)?.contains("insert") == true)
    }

    @Test func writesMustKeepTheDocumentInsideTheWriteFilter() throws {
        let rules = try rules(#"""
            {"collection": "Note", "roles": [{"name": "owner", "apply_when": {},
              "document_filters": {"read": {"owner_id": "%%user.id"}, "write": {"owner_id": "%%user.id"}},
              "read": true, "write": true}]}
            """#)
        let permissions = SessionPermissions(rules: rules, user: RuleUser(id: "ana"), collections: ["Note"])
        let mine = try document(#"{"_id": 1, "owner_id": "ana"}"#), bens = try document(#"{"_id": 1, "owner_id": "ben"}"#)
        let update = SyncObjectChange(className: "Note", primaryKey: .int(1), kind: .update, timestamp: "t",
                                      fields: [.set(name: "owner_id", value: .string("ben"))])
        #expect(permissions.refusal(of: update, before: nil, after: mine) == nil)
        #expect(permissions.refusal(of: update, before: nil, after: bens) != nil)
        #expect(permissions.refusal(of: update, before: mine, after: bens)?.contains("take the object out") == true)
        #expect(permissions.refusal(of: update, before: bens, after: mine) != nil)
        #expect(permissions.refusal(of: update, before: bens, after: nil) != nil)
        #expect(permissions.refusal(of: update, before: mine, after: nil) == nil)
        // A collection no role covers: nothing is readable or writable.
        #expect(permissions.readable("Other", .object(mine)) == nil)
        let other = SyncObjectChange(className: "Other", primaryKey: .int(1), kind: .insert, timestamp: "t", fields: [])
        #expect(permissions.refusal(of: other, before: nil, after: mine)?.contains("no role") == true)
    }

    @Test func appServicesAppFolderIsRead() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("app-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let collection = folder.appendingPathComponent("data_sources/mongodb-atlas/todo/Item")
        try FileManager.default.createDirectory(at: collection, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("auth"), withIntermediateDirectories: true)
        try #"""
            {"collection": "Item", "database": "todo", "roles": [{"name": "owner", "apply_when": {},
             "document_filters": {"read": {"owner_id": "%%user.id"}, "write": {"owner_id": "%%user.id"}},
             "read": true, "write": true, "insert": true, "delete": true, "search": true}]}
            """#.write(to: collection.appendingPathComponent("rules.json"), atomically: true, encoding: .utf8)
        try #"""
            {"roles": [{"name": "readAll", "apply_when": {}, "document_filters": {"read": true, "write": false},
             "read": true, "write": false}]}
            """#.write(to: folder.appendingPathComponent("data_sources/mongodb-atlas/default_rule.json"),
                       atomically: true, encoding: .utf8)
        try #"""
            {"enabled": true, "mongo_service_name": "mongodb-atlas", "database_name": "todo",
             "collection_name": "Profile", "user_id_field": "user_id", "on_user_creation_function_name": ""}
            """#.write(to: folder.appendingPathComponent("auth/custom_user_data.json"), atomically: true, encoding: .utf8)
        let rules = try SyncRules(contentsOf: folder.path)
        #expect(rules.roles(of: "Item").map(\.name) == ["owner"])
        #expect(rules.roles(of: "Anything").map(\.name) == ["readAll"])
        #expect(rules.customUserData?.collection == "Profile")
        #expect(rules.customUserData?.userIdField == "user_id")
    }

    @Test func rulesWithoutRolesAreRefused() throws {
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent("empty-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: empty) }
        #expect { try SyncRules(contentsOf: empty.path) } throws: { "\($0)".contains("define no roles") }
        #expect { try SyncRules(contentsOf: empty.appendingPathComponent("missing.json").path) }
            throws: { "\($0)".contains("does not exist") }
    }
}
