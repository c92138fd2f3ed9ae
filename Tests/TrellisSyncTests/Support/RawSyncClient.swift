import Foundation
import Logging
import NIOCore
import NIOPosix
import Synchronization
import TrellisSync
import TrellisSyncProtocol
import WSClient

/// A sync client without a Realm: it sends hand-written frames and reads the server's answers
/// one by one, for tests of what the server does with input no real client sends.
struct RawSyncChannel {
    let outbound: WebSocketOutboundWriter
    var frames: WebSocketInboundMessageStream.AsyncIterator

    func send(_ message: SyncMessage) async throws {
        try await outbound.write(.text(SyncCoding.encode(message)))
    }

    func send(text: String) async throws {
        try await outbound.write(.text(text))
    }

    /// The next frame the server sends that decodes as a sync message; nil when it closed.
    mutating func next() async throws -> SyncMessage? {
        while let message = try await frames.next() {
            guard case .text(let text) = message, let frame = try? SyncCoding.decode(text) else { continue }
            return frame
        }
        return nil
    }

    /// The frames the server sends up to and including the first for which `isLast` holds
    /// (all of them when it closes first).
    mutating func collect(until isLast: (SyncMessage) -> Bool) async throws -> [SyncMessage] {
        var collected = [SyncMessage]()
        while let frame = try await next() {
            collected.append(frame)
            if isLast(frame) { break }
        }
        return collected
    }

    func close() async throws { try await outbound.close(.normalClosure, reason: nil) }
}

enum RawSyncClient {
    /// A hello for app `trellis` (unless `appId` says otherwise) with no schema.
    static func hello(token: String, clientId: String = "raw-\(UUID().uuidString.lowercased())",
                      appId: String = "trellis", subscriptions: SubscriptionSet = .init(version: 0, subscriptions: []))
        -> SyncMessage
    {
        .hello(.init(appId: appId, accessToken: token, clientId: clientId, schemaVersion: 0, schema: [:],
                     lastServerVersion: 0, subscriptions: subscriptions))
    }

    /// Opens a sync WebSocket to a server on `port` (app `pathAppId` in its path) and runs `body`
    /// with it, bounded by `timeout`. `eventLoopGroup`: where the connection's I/O (and the
    /// masking of what it sends) runs; NIO's shared group unless given.
    static func connect<T: Sendable>(port: Int, pathAppId: String = "trellis", maxFrameSize: Int = 1 << 24,
                                     timeout: Duration = .seconds(20),
                                     eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
                                     _ body: @escaping @Sendable (inout RawSyncChannel) async throws -> T) async throws -> T {
        let result = Mutex<T?>(nil)
        try await withTimeout(timeout) {
            try await WebSocketClient.connect(url: "ws://127.0.0.1:\(port)/api/client/v2.0/app/\(pathAppId)/realm-sync",
                                              configuration: .init(maxFrameSize: maxFrameSize),
                                              eventLoopGroup: eventLoopGroup,
                                              logger: Logger(label: "raw")) { inbound, outbound, _ in
                var channel = RawSyncChannel(outbound: outbound, frames: inbound.messages(maxSize: maxFrameSize).makeAsyncIterator())
                let value = try await body(&channel)
                result.withLock { $0 = value }
            }
        }
        return try result.withLock { $0 }.unwrapped("the raw client's result")
    }

    /// Logs in a new anonymous user, sends its hello and one upload (id 1) of `changes`; the
    /// frames the server answers until the ack.
    static func upload(_ server: ServerProcess, _ changes: [SyncObjectChange]) async throws -> [SyncMessage] {
        let user = try await testApp(server.baseURL).login(credentials: .anonymous)
        let hello = hello(token: user.accessToken ?? "")
        return try await connect(port: server.port) { channel in
            try await channel.send(hello)
            try await channel.send(.upload(.init(uploadId: 1, changes: changes)))
            let frames = try await channel.collect { if case .ack = $0 { true } else { false } }
            try await channel.close()
            return frames
        }
    }

    /// The error frames among `frames`.
    static func errors(_ frames: [SyncMessage]) -> [SyncMessage.ErrorMessage] {
        frames.compactMap { if case .error(let error) = $0 { error } else { nil } }
    }
}
