import Foundation

/// A download frame's documents and their primary keys as the frame's text holds them. The
/// client keeps each downloaded document in its mirror as JSON text; copying the frame's bytes
/// costs far less than writing the parsed document as text again (session 36: that writing was
/// ~10 % of the client's CPU in an initial download).
public struct FrameDocumentText: Sendable {
    /// The frame's UTF-8 text.
    private let bytes: [UInt8]
    /// Per change of the download, in order, where its document and primary key are in `bytes`.
    private let ranges: [JSONText.ChangeRanges]

    init(bytes: [UInt8], ranges: [JSONText.ChangeRanges]) {
        self.bytes = bytes
        self.ranges = ranges
    }

    /// A change's document and primary key as the frame's text holds them.
    public struct Change: Sendable {
        /// The document's JSON text (an object); it parses to the change's `document`.
        public let document: ArraySlice<UInt8>
        /// The primary key's JSON text; it parses to the change's `primaryKey`.
        public let primaryKey: ArraySlice<UInt8>?
    }

    /// The text of change `index`'s document and primary key, exactly as the frame holds them;
    /// nil when its document is not an object (none, null).
    public func change(at index: Int) -> Change? {
        guard ranges.indices.contains(index), let document = ranges[index].document else { return nil }
        return Change(document: bytes[document], primaryKey: ranges[index].primaryKey.map { bytes[$0] })
    }
}

extension SyncCoding {
    /// ``decode(_:)``, and for a download frame also where each change's document and primary
    /// key are in the frame's text (nil for other frames).
    public static func decodeNotingDocumentText(_ text: String) throws
        -> (message: SyncMessage, documents: FrameDocumentText?)
    {
        let bytes = Array(text.utf8)
        let (json, ranges) = try bytes.withUnsafeBufferPointer { try JSONText.parseNotingDocuments($0) }
        guard let message = try SyncMessage(fastJSON: json) else {
            return (try JSONDecoder().decode(SyncMessage.self, from: Data(bytes)), nil)
        }
        // One entry per change object; when the counts differ (a change that is not an object:
        // the frame does not decode anyway) the ranges are not used.
        guard case .download(let download) = message, ranges.count == download.changes.count else {
            return (message, nil)
        }
        return (message, FrameDocumentText(bytes: bytes, ranges: ranges))
    }
}
