import Foundation

/// A task executor with kernel threads of its own, which take its jobs in the order they came.
///
/// Swift's cooperative pool has one thread per core (two on a small server) and never preempts
/// a job: a job that unmasks, checks or decodes a 16 MB message holds its thread until it is
/// done, and two such jobs hold all of them, so every other task waits for one to end. Jobs of
/// tasks started with this executor as their preference (`Task(executorPreference:)`,
/// `addTask(executorPreference:)`) run on kernel threads the kernel time-slices: with more
/// threads than cores, a long job holds one thread while the next jobs run on the others and
/// share the CPU with it.
final class ThreadPoolExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    /// Jobs waiting, oldest at `head` (guarded by `condition`).
    private var jobs = [UnownedJob]()
    private var head = 0
    let name: String
    let threadCount: Int

    /// Starts `threads` threads named `name` (they run as long as the process).
    init(name: String, threads: Int) {
        self.name = name
        threadCount = threads
        for _ in 0..<threads {
            let thread = Thread { [self] in run() }
            thread.name = name
            thread.start()
        }
    }

    func enqueue(_ job: UnownedJob) {
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func run() {
        let executor = asUnownedTaskExecutor()
        while true {
            condition.lock()
            while head == jobs.count { condition.wait() }
            let job = jobs[head]
            head += 1
            if head == jobs.count {
                jobs.removeAll(keepingCapacity: true)
                head = 0
            }
            condition.unlock()
            job.runSynchronously(on: executor)
        }
    }
}
