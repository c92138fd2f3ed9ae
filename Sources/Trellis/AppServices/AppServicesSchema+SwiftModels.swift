import Foundation

extension AppServicesSchema {
    /// Swift model source for App Services collection schemas, in the seeds' style: one
    /// `Object` class per schema, an `EmbeddedObject` class per titled nested object, links
    /// from `relationships` (by class name: that class's `relationships.json`).
    ///
    /// `_id` becomes the primary key; a property is optional unless listed in `required`
    /// (collections never are); `long` and `int` become `Int`. A property name that is no Swift
    /// identifier (`"first name"`) gets one (`firstName`) and an entry in the class's
    /// `propertiesMapping()`, so the model keeps the stored name. What Realm models cannot express
    /// (regex, timestamp, JavaScript, type unions other than with null) is left out, with a
    /// `// warning:` line in the source saying so. With `namespace`, the classes are nested in
    /// `enum <namespace>` with a `static let objectTypes` list (their Realm class names stay the
    /// titles).
    public static func swiftModels(schemas: [Data], relationships: [String: Data] = [:],
                                   namespace: String? = nil) throws -> String
    {
        var generator = SwiftModelGenerator()
        for (index, data) in schemas.enumerated() {
            guard let document = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
                throw Realm.Error(.invalidValue, "An App Services schema must be a JSON object; schema \(index + 1) "
                    + "of \(schemas.count) is not valid JSON or not an object. Pass the schema.json files App Services exports.")
            }
            guard let title = document["title"] as? String else {
                throw Realm.Error(.invalidValue, "An App Services collection schema needs a \"title\" (the class name).")
            }
            guard SwiftName.isTypeName(title) else {
                throw Realm.Error(.invalidValue, "The collection schema title \(title.debugDescription) is not a Swift "
                    + "identifier, so no model class can have it. Rename the collection (its \"title\") to letters, "
                    + "digits and underscores.")
            }
            var links = [String: (target: String, isList: Bool)]()
            if let data = relationships[title] {
                guard let entries = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
                    throw Realm.Error(.invalidValue, "The relationships of '\(title)' must be a JSON object.")
                }
                for (path, value) in entries {
                    guard let entry = value as? [String: Any], let ref = entry["ref"] as? String,
                          let target = ref.split(separator: "/").last.map(String.init), SwiftName.isTypeName(target)
                    else { continue }
                    links[path] = (target, entry["is_list"] as? Bool ?? false)
                }
            }
            generator.addClass(title, document: document, isEmbedded: false, links: links, path: "")
        }
        return generator.source(namespace: namespace)
    }
}

/// Builds model source from schema documents (see ``AppServicesSchema/swiftModels(schemas:relationships:namespace:)``).
struct SwiftModelGenerator {
    private var classes: [(name: String, source: String)] = []
    private var warnings: [String] = []

    mutating func addClass(_ name: String, document: [String: Any], isEmbedded: Bool,
                           links: [String: (target: String, isList: Bool)], path: String)
    {
        if classes.contains(where: { $0.name == name }) { return }
        classes.append((name, "")) // reserve the position (nested classes follow their parent)
        let index = classes.count - 1
        let properties = document["properties"] as? [String: Any] ?? [:]
        let required = Set(document["required"] as? [String] ?? [])
        var lines = ["class \(name): \(isEmbedded ? "EmbeddedObject" : "Object") {"]
        // A stored name that is no Swift identifier gets a Swift name and a propertiesMapping()
        // entry, so the model still reads and writes it.
        var mapping = [(swiftName: String, storedName: String)]()
        var usedNames = Set(properties.keys.filter(SwiftName.isIdentifier))
        for storedName in properties.keys.sorted(by: { Self.order($0, $1) }) {
            guard let schema = properties[storedName] as? [String: Any] else {
                warnings.append("'\(name).\(storedName)' has no schema object; skipped.")
                continue
            }
            var propertyName = storedName
            if !SwiftName.isIdentifier(storedName) {
                propertyName = SwiftName.identifier(for: storedName, avoiding: usedNames)
                usedNames.insert(propertyName)
                mapping.append((propertyName, storedName))
            }
            let fieldPath = path + storedName
            if let link = links[fieldPath] {
                let type = link.isList ? "List<\(link.target)>" : "\(link.target)?"
                lines.append("    @Persisted var \(SwiftName.declared(propertyName)): \(type)")
                continue
            }
            guard let type = swiftType(schema, owner: name, property: storedName, links: links, path: fieldPath)
            else { continue }
            let isCollection = type.hasPrefix("List<") || type.hasPrefix("MutableSet<") || type.hasPrefix("Map<")
            let optional = !isCollection && (!required.contains(storedName) || type.hasSuffix("?"))
                && type != "AnyRealmValue"
            let declared = optional && !type.hasSuffix("?") ? type + "?" : type
            let wrapper = propertyName == "_id" && !isEmbedded ? "@Persisted(primaryKey: true)" : "@Persisted"
            lines.append("    \(wrapper) var \(SwiftName.declared(propertyName)): \(propertyName == "_id" ? type : declared)")
        }
        if !mapping.isEmpty {
            // debugDescription writes a Swift string literal: quotes, backslashes and line
            // breaks in a stored name stay inside it.
            let entries = mapping.map { "\($0.swiftName.debugDescription): \($0.storedName.debugDescription)" }
            lines.append("")
            lines.append("    override class func propertiesMapping() -> [String: String] {")
            lines.append("        [\(entries.joined(separator: ", "))]")
            lines.append("    }")
        }
        lines.append("}")
        classes[index].source = lines.joined(separator: "\n")
    }

    /// `_id` first, then by name.
    private static func order(_ a: String, _ b: String) -> Bool {
        if a == "_id" { return b != "_id" }
        if b == "_id" { return false }
        return a < b
    }

    private mutating func swiftType(_ schema: [String: Any], owner: String, property: String,
                                    links: [String: (target: String, isList: Bool)], path: String) -> String?
    {
        var bsonType = schema["bsonType"]
        var nullable = false
        if let union = bsonType as? [String] {
            let others = union.filter { $0 != "null" }
            nullable = others.count < union.count
            if others.count == 1 {
                bsonType = others[0]
            } else {
                warnings.append("'\(owner).\(property)' has the type union \(union), which a Realm model cannot "
                    + "express; it becomes AnyRealmValue.")
                return "AnyRealmValue"
            }
        }
        guard let type = bsonType as? String else {
            warnings.append("'\(owner).\(property)' has no bsonType; skipped.")
            return nil
        }
        let scalar: String?
        switch type {
        case "long", "int": scalar = "Int"
        case "bool": scalar = "Bool"
        case "float": scalar = "Float"
        case "double": scalar = "Double"
        case "string": scalar = "String"
        case "binData": scalar = "Data"
        case "date": scalar = "Date"
        case "decimal": scalar = "Decimal128"
        case "objectId": scalar = "ObjectId"
        case "uuid": scalar = "UUID"
        case "mixed": scalar = "AnyRealmValue"
        case "array":
            guard let items = schema["items"] as? [String: Any],
                  let element = swiftType(items, owner: owner, property: property, links: links, path: path + ".[]")
            else { return nil }
            return (schema["uniqueItems"] as? Bool == true ? "MutableSet<" : "List<") + element.dropLastQuestionMark + ">"
        case "object":
            if let title = schema["title"] as? String {
                guard SwiftName.isTypeName(title) else {
                    warnings.append("'\(owner).\(property)' is an object titled \(title.debugDescription), which is not "
                        + "a Swift identifier; skipped.")
                    return nil
                }
                addClass(title, document: schema, isEmbedded: true, links: links, path: path + ".")
                return path.hasSuffix(".[]") ? title : title + "?"
            }
            if let values = schema["additionalProperties"] as? [String: Any],
               let element = swiftType(values, owner: owner, property: property, links: links, path: path)
            {
                return "Map<String, \(element)>"
            }
            warnings.append("'\(owner).\(property)' is an untitled object without additionalProperties; skipped.")
            return nil
        default:
            warnings.append("'\(owner).\(property)' has bsonType '\(type)', which Realm models cannot express; skipped.")
            return nil
        }
        guard let scalar else { return nil }
        return nullable && scalar != "AnyRealmValue" ? scalar + "?" : scalar
    }

    func source(namespace: String?) -> String {
        var text = "// Generated by Trellis from App Services schemas.\nimport Foundation\nimport Trellis\n"
        for warning in warnings {
            // A name in a warning may hold a line break: it must not end the comment.
            text += "// warning: " + warning.replacingOccurrences(of: "\r", with: "\\r")
                .replacingOccurrences(of: "\n", with: "\\n") + "\n"
        }
        let body = classes.map(\.source).joined(separator: "\n\n")
        if let namespace {
            let indented = body.split(separator: "\n", omittingEmptySubsequences: false)
                .map { $0.isEmpty ? "" : "    " + $0 }.joined(separator: "\n")
            let list = classes.map { "\($0.name).self" }.joined(separator: ", ")
            text += "\nenum \(namespace) {\n\(indented)\n\n    static let objectTypes: [ObjectBase.Type] = [\(list)]\n}\n"
        } else {
            text += "\n\(body)\n"
        }
        return text
    }
}

private extension String {
    var dropLastQuestionMark: String { hasSuffix("?") ? String(dropLast()) : self }
}

/// What the generated source may call things.
enum SwiftName {
    /// Swift keywords a property may still be named, written in backticks.
    private static let keywords: Set<String> = [
        "associatedtype", "class", "deinit", "enum", "extension", "fileprivate", "func", "import", "init", "inout",
        "internal", "let", "open", "operator", "private", "protocol", "public", "rethrows", "static", "struct",
        "subscript", "typealias", "var", "break", "case", "catch", "continue", "default", "defer", "do", "else",
        "fallthrough", "for", "guard", "if", "in", "repeat", "return", "throw", "switch", "where", "while", "as",
        "false", "is", "nil", "self", "Self", "super", "throws", "true", "try", "Any", "some", "any",
    ]

    /// Letters, digits and underscores, not starting with a digit.
    static func isIdentifier(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, !("0"..."9").contains(first) else { return false }
        return name.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_") }
    }

    /// A Swift name for a stored name that is no identifier: its letters and digits in
    /// lowerCamelCase (`"first name"` → `firstName`), `_` before a leading digit, a number
    /// after a name already taken.
    static func identifier(for storedName: String, avoiding taken: Set<String>) -> String {
        let words = storedName.unicodeScalars
            .split { !($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0))) }
            .map { String(String.UnicodeScalarView($0)) }
        var name = words.enumerated().map { index, word in
            index == 0 ? word.prefix(1).lowercased() + word.dropFirst() : word.prefix(1).uppercased() + word.dropFirst()
        }.joined()
        if name.isEmpty { name = "property" }
        if let first = name.unicodeScalars.first, ("0"..."9").contains(first) { name = "_" + name }
        var candidate = name, suffix = 2
        while taken.contains(candidate) {
            candidate = "\(name)\(suffix)"
            suffix += 1
        }
        return candidate
    }

    /// An identifier that is no keyword (a class name cannot be put in backticks usefully).
    static func isTypeName(_ name: String) -> Bool { isIdentifier(name) && !keywords.contains(name) }

    /// The name as a declaration writes it: keywords in backticks.
    static func declared(_ name: String) -> String { keywords.contains(name) ? "`\(name)`" : name }
}
