import Foundation
import TrellisSyncProtocol

/// One role of an App Services rules document (`rules.json` / `default_rule.json`): when it
/// applies, which documents it may read and write, and which fields.
struct SyncRole: Sendable, Equatable {
    var name: String
    var applyWhen: RuleExpression
    var readFilter: RuleExpression
    var writeFilter: RuleExpression
    /// Top-level `read` / `write`: every field of a document the filters let through.
    var read: Bool
    var write: Bool
    /// `insert` / `delete`; when absent, as `write`.
    var insert: Bool
    var delete: Bool
    /// Field-level permissions (`fields`), and `additional_fields` for the others.
    var fields: [String: FieldPermission]
    var additionalFields: FieldPermission

    struct FieldPermission: Sendable, Equatable {
        var read = false
        var write = false
    }

    init(_ json: JSONValue, at place: String) throws(RulesError) {
        guard case .object(let object) = json else { throw RulesError("\(place): a role must be a JSON object.") }
        name = object["name"]?.stringValue ?? "(unnamed)"
        let place = "\(place), role '\(name)'"
        applyWhen = try RuleExpression(object["apply_when"] ?? .object([:]), at: "\(place), apply_when")
        if applyWhen.readsDocument {
            throw RulesError("\(place): apply_when names document fields; Device Sync assigns roles when a session "
                + "starts, so it may use only expansions such as %%user.id or %%user.custom_data.<field>.")
        }
        guard let filters = object["document_filters"]?.objectValue,
              let readFilter = filters["read"], let writeFilter = filters["write"] else {
            throw RulesError("\(place): document_filters.read and document_filters.write are required for Device "
                + "Sync (use true to allow every document, false for none).")
        }
        self.readFilter = try RuleExpression(readFilter, at: "\(place), document_filters.read")
        self.writeFilter = try RuleExpression(writeFilter, at: "\(place), document_filters.write")
        read = try Self.flag(object["read"], "read", at: place) ?? false
        write = try Self.flag(object["write"], "write", at: place) ?? false
        insert = try Self.flag(object["insert"], "insert", at: place) ?? write
        delete = try Self.flag(object["delete"], "delete", at: place) ?? write
        fields = [:]
        for (field, permission) in object["fields"]?.objectValue ?? [:] {
            if field == "_id" {
                throw RulesError("\(place): Device Sync does not allow field-level permissions on _id.")
            }
            fields[field] = try Self.permission(permission, at: "\(place), fields.\(field)")
        }
        additionalFields = try Self.permission(object["additional_fields"] ?? .object([:]),
                                               at: "\(place), additional_fields")
    }

    private static func flag(_ value: JSONValue?, _ name: String, at place: String) throws(RulesError) -> Bool? {
        switch value {
        case nil, .null?: return nil
        case .bool(let flag)?: return flag
        default:
            throw RulesError("\(place): '\(name)' must be true or false with Device Sync (an expression is not "
                + "Sync compatible; put conditions in document_filters).")
        }
    }

    private static func permission(_ json: JSONValue, at place: String) throws(RulesError) -> FieldPermission {
        guard case .object(let object) = json else { throw RulesError("\(place): must be {\"read\": …, \"write\": …}.") }
        let write = try flag(object["write"], "write", at: place) ?? false
        // Write permission includes read, as in App Services.
        let read = try flag(object["read"], "read", at: place) ?? false
        return FieldPermission(read: read || write, write: write)
    }

    /// Whether the role lets the user read the field `name` of a document it may read.
    func canRead(field name: String) -> Bool {
        if read || write || name == "_id" { return true }
        return (fields[topLevel(name)] ?? additionalFields).read
    }

    /// Whether the role lets the user write the field `name` of a document it may write.
    func canWrite(field name: String) -> Bool {
        if write { return true }
        return (fields[topLevel(name)] ?? additionalFields).write
    }

    /// Whether some field can be read at all (else the role reads no document).
    var readsAnything: Bool {
        read || write || additionalFields.read || fields.values.contains(where: \.read)
    }

    private func topLevel(_ name: String) -> String { String(name.split(separator: ".").first ?? Substring(name)) }

    /// Throws when one of the role's expressions names a value the app does not have.
    func checkNamedValues(_ app: AppValues, at place: String) throws(RulesError) {
        for (part, expression) in [("apply_when", applyWhen), ("document_filters.read", readFilter),
                                   ("document_filters.write", writeFilter)] {
            try app.checkNamed(in: expression, at: "\(place), role '\(name)', \(part)")
        }
    }
}

/// One of the Custom JWT provider's `metadata_fields`: the claim at `name` (a dotted path in
/// the login token) becomes `%%user.data.<fieldName>`; a `required` one must be there.
struct JWTMetadataField: Sendable, Equatable {
    var name: String
    var fieldName: String
    var required: Bool

    static func list(_ json: JSONValue?, at place: String) throws(RulesError) -> [JWTMetadataField] {
        guard let json, json != .null else { return [] }
        guard let items = json.arrayValue else { throw RulesError("\(place): metadata_fields must be an array.") }
        var fields = [JWTMetadataField]()
        for item in items {
            guard let name = item["name"]?.stringValue, !name.isEmpty else {
                throw RulesError("\(place): each of metadata_fields needs a \"name\" (the claim's path in the token).")
            }
            fields.append(JWTMetadataField(name: name, fieldName: item["field_name"]?.stringValue ?? name,
                                           required: item["required"] == .bool(true)))
        }
        return fields
    }

    /// The user data of a login token's claims; throws naming a required claim it lacks.
    static func userData(_ fields: [JWTMetadataField], claims: [String: JSONValue]) throws(RulesError) -> [String: JSONValue] {
        var data = [String: JSONValue]()
        for field in fields {
            if let value = RuleExpression.value(at: field.name, in: claims) {
                data[field.fieldName] = value
            } else if field.required {
                throw RulesError("The login token has no '\(field.name)' claim, which the Custom JWT provider's "
                    + "metadata_fields require.")
            }
        }
        return data
    }
}

/// The rules of an app: per collection its roles (`rules.json`), and the default roles
/// (`default_rule.json`) for collections without their own. Read from an App Services app
/// folder (`data_sources/<service>/<database>/<collection>/rules.json`) or one JSON file.
struct SyncRules: Sendable {
    var collections: [String: [SyncRole]] = [:]
    var defaultRoles: [SyncRole] = []
    /// Where custom user data lives (App Services' `auth/custom_user_data.json`): the
    /// collection and the field holding the user id.
    var customUserData: (collection: String, userIdField: String)?
    /// Started with `--allow-all`: no rules; every user reads and writes everything.
    var allowsAll = false
    /// The app's `%%values` and `%%environment`.
    var app = AppValues()
    /// The Custom JWT provider's `metadata_fields` (`auth/providers.json`): which claims of a
    /// login token become the user's `%%user.data`.
    var jwtMetadataFields: [JWTMetadataField] = []

    /// Every user may read and write everything (`--allow-all`).
    static var allowAll: SyncRules {
        var rules = SyncRules()
        // A role written as a rules document would be; it cannot fail to parse.
        let role = try? SyncRole(.object(["name": .string("allow-all"), "apply_when": .object([:]),
                                          "document_filters": .object(["read": .bool(true), "write": .bool(true)]),
                                          "read": .bool(true), "write": .bool(true)]), at: "--allow-all")
        rules.defaultRoles = role.map { [$0] } ?? []
        rules.allowsAll = true
        return rules
    }

    /// The `%%user…` expansions the roles use (apply_when and document filters).
    var userExpansions: Set<String> {
        var found = Set<String>()
        for role in collections.values.flatMap({ $0 }) + defaultRoles {
            for expression in [role.applyWhen, role.readFilter, role.writeFilter] {
                found.formUnion(expression.expansions.filter { $0.hasPrefix("%%user") })
            }
        }
        return found
    }

    /// The roles of a collection, in the order they are tried.
    func roles(of collection: String) -> [SyncRole] { collections[collection] ?? defaultRoles }

    /// Reads rules from an App Services app folder or one JSON file (see docs/SYNC.md,
    /// "Permissions"). The file holds a rules document, an array of them, or
    /// `{"default_rule": …, "rules": [ … ], "custom_user_data": …}`.
    init() {}

    init(contentsOf path: String) throws {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            throw RulesError("The rules path '\(path)' does not exist. Give an App Services app folder (with "
                + "data_sources/<service>/<database>/<collection>/rules.json) or a JSON file of rules documents.")
        }
        if isFolder.boolValue {
            app = try AppValues(folder: URL(fileURLWithPath: path))
            try readFolder(URL(fileURLWithPath: path))
        } else {
            try readFile(path)
        }
        for (collection, roles) in collections.sorted(by: { $0.key < $1.key }) {
            for role in roles { try role.checkNamedValues(app, at: "\(path), collection '\(collection)'") }
        }
        for role in defaultRoles { try role.checkNamedValues(app, at: "\(path), default rule") }
        if collections.isEmpty && defaultRoles.isEmpty {
            throw RulesError("The rules at '\(path)' define no roles: no rules.json or default_rule.json was found. "
                + "Every read and write would be refused; add roles, or start with --allow-all for development.")
        }
    }

    private mutating func readFolder(_ folder: URL) throws {
        let sources = folder.appendingPathComponent("data_sources")
        let files = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)?
            .compactMap { $0 as? URL }.filter { ["rules.json", "default_rule.json"].contains($0.lastPathComponent) }
            .sorted { $0.path < $1.path } ?? []
        for file in files {
            let json = try Self.json(at: file.path)
            if file.lastPathComponent == "default_rule.json" {
                defaultRoles = try Self.roles(json, at: file.path)
            } else {
                let name = json["collection"]?.stringValue ?? file.deletingLastPathComponent().lastPathComponent
                collections[name] = try Self.roles(json, at: file.path)
            }
        }
        let providers = folder.appendingPathComponent("auth/providers.json")
        if FileManager.default.fileExists(atPath: providers.path) {
            let json = try Self.json(at: providers.path)
            let jwt = json.objectValue?.values.first { $0["type"]?.stringValue == "custom-token" }
            jwtMetadataFields = try JWTMetadataField.list(jwt?["metadata_fields"], at: providers.path)
        }
        let custom = folder.appendingPathComponent("auth/custom_user_data.json")
        if FileManager.default.fileExists(atPath: custom.path) {
            try readCustomUserData(try Self.json(at: custom.path), at: custom.path)
        }
    }

    private mutating func readFile(_ path: String) throws {
        let json = try Self.json(at: path)
        var documents = [JSONValue]()
        switch json {
        case .array(let items): documents = items
        case .object(let object) where object["rules"] != nil || object["default_rule"] != nil:
            documents = object["rules"]?.arrayValue ?? []
            app = AppValues(file: json)
            jwtMetadataFields = try JWTMetadataField.list(object["metadata_fields"], at: "\(path), metadata_fields")
            if let defaultRule = object["default_rule"] { defaultRoles = try Self.roles(defaultRule, at: "\(path), default_rule") }
            if let custom = object["custom_user_data"] { try readCustomUserData(custom, at: "\(path), custom_user_data") }
        default: documents = [json]
        }
        for (index, document) in documents.enumerated() {
            let place = "\(path), rules[\(index)]"
            if let name = document["collection"]?.stringValue {
                collections[name] = try Self.roles(document, at: place)
            } else {
                defaultRoles = try Self.roles(document, at: place)
            }
        }
    }

    private mutating func readCustomUserData(_ json: JSONValue, at place: String) throws {
        guard json["enabled"] != .bool(false) else { return }
        guard let collection = json["collection_name"]?.stringValue, let field = json["user_id_field"]?.stringValue else {
            throw RulesError("\(place): custom user data needs \"collection_name\" and \"user_id_field\".")
        }
        customUserData = (collection, field)
    }

    private static func roles(_ document: JSONValue, at place: String) throws(RulesError) -> [SyncRole] {
        guard let roles = document["roles"]?.arrayValue else {
            throw RulesError("\(place): a rules document needs \"roles\": [ … ].")
        }
        var parsed = [SyncRole]()
        for role in roles { parsed.append(try SyncRole(role, at: place)) }
        return parsed
    }

    private static func json(at path: String) throws -> JSONValue {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw RulesError("Cannot read the rules file '\(path)'.")
        }
        do {
            return try JSONValue(jsonText: String(decoding: data, as: UTF8.self))
        } catch {
            throw RulesError("The rules file '\(path)' is not valid JSON: \(error).")
        }
    }
}
