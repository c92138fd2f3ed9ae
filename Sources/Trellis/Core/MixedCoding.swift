import Foundation

/// The byte form of a mixed value: a tag byte, then the payload.
///
/// Nested collections (tags 12 and 13) hold their elements inline: a list is `count u32`, then
/// per element `length u32` and the element's own encoding (length 0 for `.none`); a dictionary
/// is `count u32`, then per entry `keyLength u32`, the UTF-8 key, `length u32` and the value.
/// Entries are kept in UTF-8 key order, the order a stored `Map` iterates in.
enum MixedCoding {
    /// The deepest nesting read or written: deeper input (only a damaged file has it) reads as
    /// nil instead of exhausting the stack.
    static let maximumDepth = 1_000

    static func encode(_ value: MixedValue) -> [UInt8] {
        var out = [UInt8]()
        append(value, to: &out, depth: 0)
        return out
    }

    private static func append(_ value: MixedValue, to out: inout [UInt8], depth: Int) {
        func put<T>(_ v: T) { withUnsafeBytes(of: v) { out.append(contentsOf: $0) } }
        switch value {
        case .int(let v): out.append(1); put(v)
        case .bool(let v): out += [2, v ? 1 : 0]
        case .float(let v): out.append(3); put(v.bitPattern)
        case .double(let v): out.append(4); put(v.bitPattern)
        case .string(let v): out.append(5); out += Array(v.utf8)
        case .data(let v): out.append(6); out += [UInt8](v)
        case .date(let v): out.append(7); put(v.timeIntervalSinceReferenceDate.bitPattern)
        case .objectId(let v): out.append(8); out += v.byteArray
        case .decimal(let v): out.append(9); out += Array(v.storedText.utf8)
        case .uuid(let v): out.append(10); put(v.uuid)
        case .link(let tableId, let key): out.append(11); put(tableId); put(key)
        case .list(let elements):
            checkDepth(depth)
            out.append(12)
            put(UInt32(elements.count))
            for element in elements { appendElement(element, to: &out, depth: depth + 1) }
        case .dictionary(let entries):
            checkDepth(depth)
            out.append(13)
            put(UInt32(entries.count))
            for entry in entries {
                let key = Array(entry.key.utf8)
                put(UInt32(key.count))
                out += key
                appendElement(entry.value, to: &out, depth: depth + 1)
            }
        }
    }

    /// A length-prefixed element (length 0: `.none`).
    private static func appendElement(_ element: MixedValue?, to out: inout [UInt8], depth: Int) {
        let lengthAt = out.count
        out += [0, 0, 0, 0]
        guard let element else { return }
        append(element, to: &out, depth: depth)
        let length = UInt32(out.count - lengthAt - 4)
        withUnsafeBytes(of: length) { out.replaceSubrange(lengthAt ..< lengthAt + 4, with: $0) }
    }

    private static func checkDepth(_ depth: Int) {
        if depth >= maximumDepth {
            throwRealmException("Cannot store an AnyRealmValue nested more than \(maximumDepth) collections deep.")
        }
    }

    static func decode(_ raw: UnsafeRawBufferPointer) -> MixedValue? { decode(raw, depth: 0) }

    private static func decode(_ raw: UnsafeRawBufferPointer, depth: Int) -> MixedValue? {
        guard let tag = raw.first else { return nil }
        let body = UnsafeRawBufferPointer(rebasing: raw[1...])
        func load<T: FixedWidthInteger>(_: T.Type, at offset: Int = 0) -> T? {
            body.count >= offset + MemoryLayout<T>.size ? body.loadUnaligned(fromByteOffset: offset, as: T.self) : nil
        }
        switch tag {
        case 1: return load(Int64.self).map { .int($0) }
        case 2: return .bool(body.first == 1)
        case 3: return load(UInt32.self).map { .float(Float(bitPattern: $0)) }
        case 4: return load(UInt64.self).map { .double(Double(bitPattern: $0)) }
        case 5: return .string(String(decoding: body, as: UTF8.self))
        case 6: return .data(Data(body))
        case 7: return load(UInt64.self).map { .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: $0))) }
        case 8: return ObjectId(bytes: body).map { .objectId($0) }
        case 9: return Decimal(string: String(decoding: body, as: UTF8.self)).map { .decimal(Decimal128($0)) }
        case 10:
            guard body.count == 16 else { return nil }
            var raw: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            withUnsafeMutableBytes(of: &raw) { $0.copyMemory(from: body) }
            return .uuid(UUID(uuid: raw))
        case 11:
            guard let tableId = load(UInt32.self), let key = load(UInt64.self, at: 4) else { return nil }
            return .link(tableId: tableId, key: key)
        case 12, 13:
            guard depth < maximumDepth, let count = load(UInt32.self) else { return nil }
            var reader = ElementReader(bytes: body, offset: 4)
            if tag == 12 {
                var elements = [MixedValue?]()
                for _ in 0..<count {
                    guard let element = reader.next() else { return nil }
                    elements.append(element.isEmpty ? nil : decode(element, depth: depth + 1))
                }
                return .list(elements)
            }
            var entries = [(key: String, value: MixedValue?)]()
            for _ in 0..<count {
                guard let key = reader.next(), let element = reader.next() else { return nil }
                entries.append((String(decoding: key, as: UTF8.self),
                                element.isEmpty ? nil : decode(element, depth: depth + 1)))
            }
            return .dictionary(entries)
        default: return nil
        }
    }

    /// Reads length-prefixed pieces one after another.
    private struct ElementReader {
        let bytes: UnsafeRawBufferPointer
        var offset: Int

        mutating func next() -> UnsafeRawBufferPointer? {
            guard offset + 4 <= bytes.count else { return nil }
            let length = Int(bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
            offset += 4
            guard length <= bytes.count - offset else { return nil }
            defer { offset += length }
            return UnsafeRawBufferPointer(rebasing: bytes[offset ..< offset + length])
        }
    }
}
