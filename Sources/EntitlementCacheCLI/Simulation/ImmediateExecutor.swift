/// A task executor that runs each job at once, on the thread that enqueues it.
///
/// The simulation's event recorders run on it. The client yields a publish and a fetch report
/// to two different streams; recorders running on the simulation's own queue would record each
/// stream's events when their task happened to be scheduled, which can put a fetch after the
/// publish it caused. Run here, a recorder records an event inside the `yield` that delivers
/// it, so the log is in the order the client did things.
///
/// Only for tasks that do nothing but record: the job runs inside the yielder's call, which
/// may hold the client's lock, so it must never call back into the client.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
final class ImmediateExecutor: TaskExecutor, Sendable {
  func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    job.runSynchronously(on: asUnownedTaskExecutor())
  }
}
