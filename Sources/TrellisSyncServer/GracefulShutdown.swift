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
/// back and its client sends it again), and the process exits at the latest 5 s after that
/// (``StopDeadline``, also when PostgreSQL stopped answering).
///
/// The signals are handled here, not by ServiceLifecycle: its graceful shutdown closes every
/// WebSocket at once (code 1000), before the sessions could acknowledge what they hold.
///
/// The bound is armed when the signal arrives, on a thread of its own (``StopDeadline``), not by
/// a task: it holds whatever the server's tasks wait for (PostgreSQL that stopped answering),
/// also before the database setup is done.
final class GracefulShutdown: Sendable {
    private let draining = Atomic<Bool>(false)
    /// The first signal received (0: none yet); a class, so the signal handlers share it.
    private final class FirstSignal: Sendable {
        let number = Atomic<Int32>(0)
    }
    private let received: FirstSignal
    private let signals: AsyncStream<Int32>
    private let sources: Mutex<[any DispatchSourceSignal]>

    /// Whether the server is draining: no new session is accepted.
    var isDraining: Bool { draining.load(ordering: .relaxed) }

    /// The signal that asked the server to stop, if one did.
    var signalReceived: Int32? {
        let signal = received.number.load(ordering: .relaxed)
        return signal == 0 ? nil : signal
    }

    /// Handles SIGTERM and SIGINT from now on: at the first, `stop` is armed for 2 × `timeout`
    /// + 5 s later.
    init(timeout: Duration, stop: StopDeadline) {
        let (signals, continuation) = AsyncStream.makeStream(of: Int32.self)
        self.signals = signals
        let queue = DispatchQueue(label: "trellis-sync.signals")
        var sources = [any DispatchSourceSignal]()
        let received = FirstSignal()
        self.received = received
        for signalNumber in [SIGTERM, SIGINT] {
            // A dispatch source sees the signal only when its default action is off.
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: queue)
            source.setEventHandler {
                if received.number.compareExchange(expected: 0, desired: signalNumber, ordering: .relaxed).exchanged {
                    stop.arm(after: timeout * 2 + .seconds(5),
                             reason: "signal \(signalNumber): the shutdown took more than \(timeout * 2 + .seconds(5)) "
                                 + "(2 × --shutdown-timeout + 5 s)")
                }
                continuation.yield(signalNumber)
            }
            source.resume()
            sources.append(source)
        }
        self.sources = Mutex(sources)
    }

    /// Waits for SIGTERM or SIGINT, drains the sessions of `watch` for at most `timeout`,
    /// then stops `services` (the process exits at the latest 2 × `timeout` + 5 s after the
    /// signal: ``init(timeout:stop:)``). Returns only when cancelled.
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
        // ServiceLifecycle cancels what is still running after `timeout` more; main.swift
        // cancels this task when the services have stopped.
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(60))
        }
    }

    deinit { sources.withLock { for source in $0 { source.cancel() } } }
}
