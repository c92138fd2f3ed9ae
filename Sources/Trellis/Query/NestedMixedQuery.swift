/// Key paths into collections nested in an `AnyRealmValue` property: `anyCol[0]`,
/// `anyCol['key']`, `anyCol[*]` (every element), chained to any depth, optionally ending in
/// `@count`/`@size` (the size of the collection reached).
extension QueryCompiler {
    /// One step of a path into a nested value.
    enum NestedMixedStep {
        case index(Int)
        case key(String)
        case all
    }

    func nestedMixed(_ rows: QueryRowSource, _ field: FieldInfo, _ owner: ClassInfo,
                     _ rest: [QueryKeyPathComponent], _ path: QueryKeyPath) throws(QueryError) -> QueryOperand
    {
        var steps = [NestedMixedStep]()
        var sizeOperation: QueryCollectionOperation?
        for (position, component) in rest.enumerated() {
            switch component {
            case .mapKey(.constant(.int(let index))), .mapKey(.argument(.int(let index))):
                steps.append(.index(Int(index)))
            case .mapKey(.constant(.string(let key))), .mapKey(.argument(.string(let key))):
                steps.append(.key(key))
            case .allElements:
                steps.append(.all)
            case .operation(let op) where position == rest.count - 1 && (op == .count || op == .size):
                sizeOperation = op
            default:
                throw invalid(path, "Property '\(owner.className).\(field.name)' is an AnyRealmValue: only [index], "
                    + "['key'] and [*] subscripts, and a final @count or @size, may follow it.")
            }
        }
        let column = field.rowColumn
        let leaves: (QueryRow) -> [MixedValue?] = { row in
            Self.walk(row.row.mixed(column), steps[...])
        }
        let reachesMany = rows.isMany || steps.contains { if case .all = $0 { true } else { false } }
        let values: QueryValueSource
        if !reachesMany {
            // One value per object: the value reached, or nil where the path leads nowhere (as a
            // missing map key reads).
            values = .single { scope in
                guard case .single(let rowOf) = rows, let row = rowOf(scope), let leaf = leaves(row).first else {
                    return .null
                }
                guard let sizeOperation else { return leaf.map(QueryColumnReader.mixed) ?? .null }
                _ = sizeOperation
                switch leaf {
                case .list(let elements)?: return .int(Int64(elements.count))
                case .dictionary(let entries)?: return .int(Int64(entries.count))
                default: return .null
                }
            }
        } else if sizeOperation != nil {
            values = .many { scope, visit in
                rows.visit(scope) { row in
                    leaves(row).contains { leaf in
                        switch leaf {
                        case .list(let elements)?: visit(.int(Int64(elements.count)))
                        case .dictionary(let entries)?: visit(.int(Int64(entries.count)))
                        default: false
                        }
                    }
                }
            }
        } else {
            values = .many { scope, visit in
                rows.visit(scope) { row in
                    leaves(row).contains { visit($0.map(QueryColumnReader.mixed) ?? .null) }
                }
            }
        }
        var operand = QueryOperand(values: values, type: sizeOperation == nil ? .any : .int,
                                   className: owner.className, propertyName: path.description, objectClassName: nil)
        operand.impliesAny = steps.contains { if case .all = $0 { true } else { false } }
        return operand
    }

    /// The values `steps` reach from `value`: none when a step does not apply (an index out of
    /// range, a missing key, a subscript of a scalar), every element for `[*]`.
    static func walk(_ value: MixedValue?, _ steps: ArraySlice<NestedMixedStep>) -> [MixedValue?] {
        guard let step = steps.first else { return [value] }
        let rest = steps.dropFirst()
        switch (value, step) {
        case (.list(let elements)?, .index(let index)):
            return elements.indices.contains(index) ? walk(elements[index], rest) : []
        case (.dictionary(let entries)?, .key(let key)):
            guard let entry = entries.first(where: { $0.key == key }) else { return [] }
            return walk(entry.value, rest)
        case (.list(let elements)?, .all):
            return elements.flatMap { walk($0, rest) }
        case (.dictionary(let entries)?, .all):
            return entries.flatMap { walk($0.value, rest) }
        default:
            return []
        }
    }
}

extension Query where T == AnyRealmValue {
    /// The element at `position` of a list nested in the value (`anyCol[0]` in predicate text);
    /// matches nothing where the value is not a list that long.
    public subscript(position: Int) -> Query<AnyRealmValue> {
        appending(.mapKey(.argument(.int(Int64(position)))), prefix: collectionPrefix)
    }

    /// The value under `key` of a dictionary nested in the value (`anyCol['key']`).
    public subscript(key: String) -> Query<AnyRealmValue> {
        appending(.mapKey(.argument(.string(key))), prefix: collectionPrefix)
    }

    /// Every element or value of a collection nested in the value (`anyCol[*]`): a comparison
    /// matches when any of them matches.
    public var any: Query<AnyRealmValue> {
        appending(.allElements, prefix: collectionPrefix)
    }
}
