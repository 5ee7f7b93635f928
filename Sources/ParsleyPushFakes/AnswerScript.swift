import Synchronization

/// What a fake answers per device token: the scripted answers in turn, the last one from then on; `fallback` for a
/// token with no script.
final class AnswerScript<Answer: Sendable>: Sendable {
    private let answers = Mutex<[String: [Answer]]>([:])
    private let fallback: Answer

    init(fallback: Answer) { self.fallback = fallback }

    func set(_ token: String, _ list: [Answer]) { answers.withLock { $0[token] = list } }

    func next(for token: String) -> Answer {
        answers.withLock { all -> Answer in
            guard var list = all[token], let first = list.first else { return fallback }
            if list.count > 1 { list.removeFirst() }
            all[token] = list
            return first
        }
    }
}
