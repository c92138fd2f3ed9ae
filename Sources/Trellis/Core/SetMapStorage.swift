/// Set and map storage, and the raw access to the `collections` database they share with lists.
extension RealmCore {
    // MARK: - Raw entries

    func collectionValue(_ key: [UInt8]) -> UnsafeRawBufferPointer? {
        key.withUnsafeBytes { transaction.get(file.collections, nearKey: $0) }
    }

    /// A collection's header (a list's count and chunks; a set's or map's count), read with its
    /// key built on the stack: every collection read starts here.
    func collectionHeader(_ location: CollectionLocation) -> UnsafeRawBufferPointer? {
        location.withHeaderKey { transaction.get(file.collections, nearKey: $0) }
    }

    func putCollectionValue(_ key: [UInt8], _ value: [UInt8]) {
        key.withUnsafeBytes { putCollectionValue(at: $0, value) }
    }

    /// ``putCollectionValue(_:_:)`` with the key built by the caller (on the stack).
    func putCollectionValue(at key: UnsafeRawBufferPointer, _ value: [UInt8]) {
        guard let txn = writeTransaction else { throwRealmException(Realm.writeRequiredMessage) }
        recordCollectionChange(key)
        do {
            _ = try value.withUnsafeBytes { (v) in try txn.put(file.collections, key: key, value: v) }
        } catch {
            throwRealmException("Trellis could not write to '\(environmentPath)': \(error)")
        }
    }

    func deleteCollectionValue(_ key: [UInt8]) {
        guard let txn = writeTransaction else { throwRealmException(Realm.writeRequiredMessage) }
        key.withUnsafeBytes { recordCollectionChange($0) }
        do {
            _ = try key.withUnsafeBytes { try txn.delete(file.collections, key: $0) }
        } catch {
            throwRealmException("Trellis could not write to '\(environmentPath)': \(error)")
        }
    }

    /// The entries whose keys start with `prefix`, in key order (pointers valid until a change).
    func collectionEntries(prefix: [UInt8]) -> [(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)] {
        do {
            return try transaction.cursor(file.collections).entries(withPrefix: prefix)
        } catch {
            throwRealmException("Trellis could not read the collections of '\(environmentPath)': \(error)")
        }
    }

    private func storedCount(_ location: CollectionLocation) -> Int {
        collectionHeader(location).map { Int($0.load(orZeroAt: 0, as: UInt32.self)) } ?? 0
    }

    private func setStoredCount(_ location: CollectionLocation, _ count: Int) {
        if count == 0 {
            deleteCollectionValue(location.headerKey)
        } else {
            putCollectionValue(location.headerKey, withUnsafeBytes(of: UInt32(count)) { Array($0) })
        }
    }

    // MARK: - Sets

    /// The number of members: the count stored beside them (one read), believed up to what a
    /// file of this size can hold (``isPlausibleLinkCount(_:)``: a larger one, only a damaged
    /// file has it, is replaced by counting the members). The set hands out exactly this many
    /// members (``setElements(_:conformingTo:)``), so a count a damaged file changed never
    /// disagrees with what the set iterates (an array built from the set would trap).
    func setCount(_ location: CollectionLocation) -> Int {
        let stored = storedCount(location)
        return isPlausibleLinkCount(stored) ? stored : collectionEntries(prefix: location.setElementsPrefix).count
    }

    /// The number of members stored beside them, as the file holds it (for the consistency checker).
    func storedSetOrMapCount(_ location: CollectionLocation) -> Int { storedCount(location) }

    func setContains(_ location: CollectionLocation, _ element: [UInt8]) -> Bool {
        collectionValue(location.setElementKey(element)) != nil
    }

    /// The members, in storage order.
    func setElements(_ location: CollectionLocation) -> [UnsafeRawBufferPointer] {
        collectionEntries(prefix: location.setElementsPrefix).map(\.value)
    }

    /// The members as the set hands them out: exactly `count` (``setCount(_:)``) of them. Only a
    /// damaged file's members disagree with its stored count: members past the count are left
    /// out, and missing ones read as empty elements (the type's default, as a list chunk's
    /// missing elements do). `count` is plausible, so the padding is never larger than the file.
    func setElements(_ location: CollectionLocation, conformingTo count: Int) -> [UnsafeRawBufferPointer] {
        var members = setElements(location)
        if members.count > count {
            members.removeLast(members.count - count)
        } else if members.count < count {
            members.append(contentsOf: repeatElement(UnsafeRawBufferPointer(start: nil, count: 0),
                                                     count: count - members.count))
        }
        return members
    }

    /// Adds a member; false if it was already there.
    @discardableResult
    func setInsert(_ location: CollectionLocation, _ element: [UInt8]) -> Bool {
        if setContains(location, element) { return false }
        putCollectionValue(location.setElementKey(element), element)
        setStoredCount(location, storedCount(location) + 1)
        noteChange()
        if location.field.isLink { relink(location, removed: [], added: [element]) }
        return true
    }

    /// Removes a member; false if it was not there.
    @discardableResult
    func setRemove(_ location: CollectionLocation, _ element: [UInt8]) -> Bool {
        guard setContains(location, element) else { return false }
        deleteCollectionValue(location.setElementKey(element))
        setStoredCount(location, storedCount(location) - 1)
        noteChange()
        if location.field.isLink { relink(location, removed: [element], added: []) }
        return true
    }

    func setRemoveAll(_ location: CollectionLocation) {
        for element in setElements(location).map({ Array($0) }) { setRemove(location, element) }
    }

    // MARK: - Maps

    /// The number of entries, stored beside them and believed as ``setCount(_:)`` believes a
    /// set's. A map is iterated by its entries, never by position, so a count a damaged file
    /// changed reads as a wrong number but cannot make an iteration trap.
    func mapCount(_ location: CollectionLocation) -> Int {
        let stored = storedCount(location)
        return isPlausibleLinkCount(stored) ? stored : collectionEntries(prefix: location.mapEntriesPrefix).count
    }

    func mapValue(_ location: CollectionLocation, _ key: String) -> UnsafeRawBufferPointer? {
        collectionValue(location.mapEntryKey(key))
    }

    /// Every entry, ordered by key.
    func mapEntries(_ location: CollectionLocation) -> [(key: String, value: UnsafeRawBufferPointer)] {
        let prefixLength = location.mapEntriesPrefix.count
        return collectionEntries(prefix: location.mapEntriesPrefix).map { entry in
            (String(decoding: UnsafeRawBufferPointer(rebasing: entry.key[prefixLength...]), as: UTF8.self), entry.value)
        }
    }

    /// Sets the value of a key, adding the key if needed.
    func mapSet(_ location: CollectionLocation, _ key: String, _ element: [UInt8]) {
        let old = mapValue(location, key).map { Array($0) }
        putCollectionValue(location.mapEntryKey(key), element)
        if old == nil { setStoredCount(location, storedCount(location) + 1) }
        noteChange()
        if location.field.isLink { relink(location, removed: old.map { [$0] } ?? [], added: [element]) }
    }

    /// Removes a key; false if it was not there.
    @discardableResult
    func mapRemove(_ location: CollectionLocation, _ key: String) -> Bool {
        guard let old = mapValue(location, key).map({ Array($0) }) else { return false }
        deleteCollectionValue(location.mapEntryKey(key))
        setStoredCount(location, storedCount(location) - 1)
        noteChange()
        if location.field.isLink { relink(location, removed: [old], added: []) }
        return true
    }

    func mapRemoveAll(_ location: CollectionLocation) {
        for (key, _) in mapEntries(location).map({ ($0.key, 0) }) { mapRemove(location, key) }
    }

    // MARK: - Owners and targets being deleted

    /// Empties every collection of a row (before the row is deleted).
    func clearCollections(_ table: Table, key: ObjectKey) {
        for field in table.info.storedFields where field.typeInfo.collection != .none {
            let location = CollectionLocation(table: table, key: key, field: field)
            switch field.typeInfo.collection {
            case .list:
                let count = listCount(location)
                if count > 0 { listSplice(location, 0..<count, with: []) }
            case .set: setRemoveAll(location)
            case .map: mapRemoveAll(location)
            case .none: break
            }
        }
    }

    /// Removes the links to a deleted object from one origin collection: list occurrences and
    /// set members go, map entries keep their key with a nil value (as in Realm).
    func unlinkFromCollection(_ location: CollectionLocation, target: ObjectKey) {
        let link = CollectionElement.link(target)
        switch location.field.typeInfo.collection {
        case .list:
            let elements = listElements(location).map { Array($0) }
            let kept = elements.filter { CollectionElement.linkKey($0) != target }
            if kept.count != elements.count { listSplice(location, 0..<elements.count, with: kept) }
        case .set:
            setRemove(location, link)
        case .map:
            for (key, value) in mapEntries(location).map({ ($0.key, Array($0.value)) }) where value == link {
                mapSet(location, key, CollectionElement.null)
            }
        case .none:
            break
        }
    }
}
