/// The write transaction the current task is already inside, if any. A backend's `write` runs the body
/// directly on it instead of queueing a new transaction, so a transactional batch can call the same
/// services that write on their own.
public enum WriteScope {
    @TaskLocal public static var executor: (any SQLExecutor)?
}
