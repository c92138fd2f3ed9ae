import Foundation
import TrellisSyncProtocol

/// The expansions Device Sync allows in rules (App Services, "Sync-compatible permissions"):
/// `%%true`, `%%false`, `%%user` (`.id`, `.custom_data.<path>`, `.data.<path>`), `%%values.<name>`
/// and `%%environment` (`.tag`, `.values.<name>`). The others refer to a document or a request
/// (`%%root`, `%%prevRoot`, `%%this`, `%%prev`, `%%request`, `%%partition`), or are operators
/// (`%function`, `%stringToOid`, …) that do not run per document: a rule using one is refused
/// when the server starts, naming the rule and the expansion, rather than read as a plain value.
enum RuleExpansions {
    /// Why `text` (a string value or key starting with `%`) cannot be used in a Device Sync
    /// rule; nil when it can.
    static func problem(with text: String) -> String? {
        guard text.hasPrefix("%") else { return nil }
        guard text.hasPrefix("%%") else {
            return "the operator \(text) is not supported with Device Sync (App Services evaluates expansions once "
                + "when a session starts, so functions and conversion operators do not run per document)"
        }
        let parts = text.dropFirst(2).split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        let hasPath = parts.count > 2 && !parts.dropFirst(2).contains("")
        switch parts.first ?? "" {
        case "true" where parts.count == 1, "false" where parts.count == 1: return nil
        case "user":
            if parts.count == 1 { return nil }
            switch parts[1] {
            case "id" where parts.count == 2: return nil
            case "custom_data" where parts.count == 2 || hasPath, "data" where parts.count == 2 || hasPath: return nil
            default:
                return "the expansion \(text) names no user field (supported: %%user.id, %%user.custom_data.<field>, "
                    + "%%user.data.<field>)"
            }
        case "values" where parts.count >= 2 && !parts.dropFirst().contains(""): return nil
        case "environment":
            if parts.count == 2, parts[1] == "tag" { return nil }
            if parts.count >= 3, parts[1] == "values", hasPath { return nil }
            return "the expansion \(text) is not one of %%environment.tag and %%environment.values.<name>"
        case "root", "prevRoot", "this", "prev":
            return "the expansion \(text) refers to a document, which Device Sync rules cannot: roles are assigned "
                + "when a session starts and filters run as queries (use field names in document_filters)"
        case "request":
            return "the expansion \(text) is not available to Device Sync rules (a sync session has no request)"
        case "partition":
            return "the expansion \(text) belongs to Partition-Based Sync; Trellis Sync is Flexible Sync"
        default:
            return "the expansion \(text) is not supported (supported with Device Sync: %%true, %%false, %%user, "
                + "%%user.id, %%user.custom_data.<field>, %%user.data.<field>, %%values.<name>, %%environment.tag, "
                + "%%environment.values.<name>)"
        }
    }

    /// Throws for the first unsupported expansion among `value`'s strings and keys.
    static func check(_ value: JSONValue, at place: String) throws(RulesError) {
        switch value {
        case .string(let text):
            if let problem = problem(with: text) { throw RulesError("\(place): \(problem).") }
        case .array(let items):
            for item in items { try check(item, at: place) }
        case .object(let object):
            for (key, item) in object.sorted(by: { $0.key < $1.key }) {
                if let problem = problem(with: key) { throw RulesError("\(place): \(problem).") }
                try check(item, at: place)
            }
        default: break
        }
    }
}

/// The app's values (`%%values.<name>`: App Services' `values/<name>.json`) and environment
/// (`%%environment.tag`, `%%environment.values.<name>`: `environments/<tag>.json`, the tag
/// from `root_config.json`'s `environment`), fixed when the server starts.
struct AppValues: Sendable, Equatable {
    var values: [String: JSONValue] = [:]
    var environmentTag = ""
    var environmentValues: [String: JSONValue] = [:]

    /// The value of a `%%values.…` or `%%environment.…` expansion; nil when it names nothing.
    func expand(_ expansion: String) -> JSONValue? {
        if expansion.hasPrefix("%%values.") {
            return RuleExpression.value(at: String(expansion.dropFirst("%%values.".count)), in: values)
        }
        if expansion == "%%environment.tag" { return .string(environmentTag) }
        if expansion.hasPrefix("%%environment.values.") {
            return RuleExpression.value(at: String(expansion.dropFirst("%%environment.values.".count)), in: environmentValues)
        }
        return nil
    }

    /// Reads `values/*.json`, `root_config.json` and `environments/<tag>.json` of an App
    /// Services app folder (each optional).
    init(folder: URL) throws(RulesError) {
        let files = (try? FileManager.default.contentsOfDirectory(at: folder.appendingPathComponent("values"),
                                                                 includingPropertiesForKeys: nil)) ?? []
        for file in files.filter({ $0.pathExtension == "json" }).sorted(by: { $0.path < $1.path }) {
            let json = try Self.json(at: file.path)
            guard let name = json["name"]?.stringValue, let value = json["value"] else {
                throw RulesError("\(file.path): a value file needs \"name\" and \"value\".")
            }
            if json["from_secret"] == .bool(true) {
                throw RulesError("\(file.path): the value '\(name)' comes from a secret; Trellis Sync has no secret "
                    + "store: write the value itself in the file (\"from_secret\": false).")
            }
            values[name] = value
        }
        let rootConfig = folder.appendingPathComponent("root_config.json")
        if FileManager.default.fileExists(atPath: rootConfig.path) {
            environmentTag = try Self.json(at: rootConfig.path)["environment"]?.stringValue ?? ""
        }
        let environmentFile = folder.appendingPathComponent("environments")
            .appendingPathComponent((environmentTag.isEmpty ? "no-environment" : environmentTag) + ".json")
        if FileManager.default.fileExists(atPath: environmentFile.path) {
            environmentValues = try Self.json(at: environmentFile.path)["values"]?.objectValue ?? [:]
        } else if !environmentTag.isEmpty {
            throw RulesError("\(rootConfig.path) names the environment '\(environmentTag)' but \(environmentFile.path) "
                + "does not exist.")
        }
    }

    /// Reads `"values": {name: value}` and `"environment": {"tag": …, "values": {…}}` of a
    /// single rules file.
    init(file json: JSONValue) {
        values = json["values"]?.objectValue ?? [:]
        environmentTag = json["environment"]?["tag"]?.stringValue ?? ""
        environmentValues = json["environment"]?["values"]?.objectValue ?? [:]
    }

    init() {}

    /// Throws when a rule names a value or environment value the app does not have.
    func checkNamed(in expression: RuleExpression, at place: String) throws(RulesError) {
        for expansion in expression.expansions
        where expansion.hasPrefix("%%values.") || expansion.hasPrefix("%%environment.values.") {
            guard expand(expansion) == nil else { continue }
            let known = expansion.hasPrefix("%%values.") ? values.keys.sorted() : environmentValues.keys.sorted()
            throw RulesError("\(place): \(expansion) names no value of the app (known: "
                + (known.isEmpty ? "none" : known.joined(separator: ", ")) + "); add it to "
                + (expansion.hasPrefix("%%values.") ? "values/<name>.json" : "environments/<tag>.json") + ".")
        }
    }

    private static func json(at path: String) throws(RulesError) -> JSONValue {
        guard let data = FileManager.default.contents(atPath: path) else { throw RulesError("Cannot read '\(path)'.") }
        do {
            return try JSONValue(jsonText: String(decoding: data, as: UTF8.self))
        } catch {
            throw RulesError("'\(path)' is not valid JSON: \(error).")
        }
    }
}
