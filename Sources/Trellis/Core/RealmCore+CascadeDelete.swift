extension RealmCore {
    /// Deletes an object and, through its cascading links (``DeleteRule/cascade``), the objects
    /// they point at, and theirs in turn.
    ///
    /// The targets are read before their owner's row goes, then deleted one by one from a work
    /// list (no recursion, so a chain of any length fits the stack). An object reached twice, or
    /// again through a cycle, is gone by then and skipped. Downloaded sync changes never cascade:
    /// the device that deleted the owner uploaded every object its cascade deleted.
    func deleteObject(_ table: Table, key: ObjectKey) {
        guard !table.info.cascadingFields.isEmpty, !isApplyingSyncDownload else {
            deleteRow(table, key: key)
            return
        }
        var pending = [(table: table, key: key)]
        while let next = pending.popLast() {
            guard rowView(next.table, next.key) != nil else { continue }
            let targets = cascadeTargets(of: next.table, key: next.key)
            deleteRow(next.table, key: next.key)
            // Reversed, so that targets are deleted in the order the owner holds them.
            pending.append(contentsOf: targets.reversed())
        }
    }

    /// The objects the cascading links of one object point at, in property order, each once.
    private func cascadeTargets(of table: Table, key: ObjectKey) -> [(table: Table, key: ObjectKey)] {
        var targets = [(table: Table, key: ObjectKey)]()
        for field in table.info.cascadingFields {
            guard let target = linkedTable(field) else { continue }
            var seen = Set<ObjectKey>()
            for targetKey in linkedKeys(table, key, field) where seen.insert(targetKey).inserted {
                targets.append((target, targetKey))
            }
        }
        return targets
    }

    /// The object keys a link, list, set or map of objects of one object holds.
    private func linkedKeys(_ table: Table, _ key: ObjectKey, _ field: FieldInfo) -> [ObjectKey] {
        let location = CollectionLocation(table: table, key: key, field: field)
        switch field.typeInfo.collection {
        case .none:
            guard let row = rowView(table, key), !row.isNull(field.rowColumn) else { return [] }
            return [row.slot(field.rowColumn)]
        case .list: return listElements(location).compactMap(CollectionElement.linkKey)
        case .set: return setElements(location).compactMap(CollectionElement.linkKey)
        case .map: return mapEntries(location).compactMap { CollectionElement.linkKey($0.value) }
        }
    }
}
