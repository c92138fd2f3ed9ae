import Dispatch
import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// SIGTERM or SIGINT drains the server (docs/SYNC.md, "Operations"): no new sync sessions are
/// accepted (the upgrade is refused, /health answers 503), every session handles what it
/// received before (uploads are committed and acknowledged) and closes with 1001 (going
/// away), then the HTTP server stops. Sessions still open after `timeout` are ended by the
/// HTTP server's own shutdown (cancelled after `timeout` more: an uncommitted upload rolls
/// back and its client sends it again), and the process exits at the latest 5 s after that.
///
/// The signals are handled here, not by ServiceLifecycle: its graceful shutdown closes every
/// WebSocket at once (code 1000), before the sessions could acknowledge what they hold.
final class GracefulShutdown: Sendable {
    private let draining = Atomic<Bool>(false)
    private let signals: AsyncStream<Int32>
    private let sources: Mutex<[any DispatchSourceSignal]>

    /// Whether the server is draining: no new session is accepted.
    var isDraining: Bool { draining.load(ordering: .relaxed) }

    init() {
        let (signals, continuation) = AsyncStream.makeStream(of: Int32.self)
        self.signals = signals
        let queue = DispatchQueue(label: "trellis-sync.signals")
        var sources = [any DispatchSourceSignal]()
        for signalNumber in [SIGTERM, SIGINT] {
            // A dispatch source sees the signal only when its default action is off.
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: queue)
            source.setEventHandler { continuation.yield(signalNumber) }
            source.resume()
            sources.append(source)
        }
        self.sources = Mutex(sources)
    }

    /// Waits for SIGTERM or SIGINT, drains the sessions of `watch` for at most `timeout`,
    /// then stops `services`; exits the process if it is still running 2 × `timeout` + 5 s
    /// after the signal. Returns only when cancelled.
    func run(services: ServiceGroup, watch: HistoryWatch, timeout: Duration, logger: Logger) async {
        var iterator = signals.makeAsyncIterator()
        guard let signalNumber = await iterator.next() else { return }
        draining.store(true, ordering: .relaxed)
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        logger.notice("signal \(signalNumber): draining \(watch.sessionCount) session(s) (at most \(timeout), --shutdown-timeout)")
        watch.broadcast(.drain)
        while watch.sessionCount > 0, clock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        let left = watch.sessionCount
        if left > 0 { logger.warning("\(left) session(s) still open after \(timeout): closing them") }
        await services.triggerGracefulShutdown()
        // ServiceLifecycle cancels what is still running after `timeout` more.
        try? await Task.sleep(until: deadline + timeout + .seconds(5), clock: clock)
        if Task.isCancelled { return }
        logger.error("the shutdown took more than \(timeout * 2 + .seconds(5)): exiting now")
        exit(1)
    }

    deinit { sources.withLock { for source in $0 { source.cancel() } } }
}
