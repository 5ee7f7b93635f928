import Foundation
import Logging
public import ParsleyCore

/// Scheduled jobs (Parse Server stores `_JobSchedule` but never runs it; Parsley does): each schedule's due run
/// starts exactly once across every node on the database, and runs missed while no node was up start once, not
/// once per missed time.
///
/// A schedule (`/cloud_code/jobs`, Parse Dashboard's form): `jobName`, `params` (a JSON object, or its text),
/// `startAfter` (ISO date; default now), and then either `repeatMinutes` (every N minutes from `startAfter`), or
/// `timeOfDay` (`HH:MM[:SS]`, UTC) with optional `daysOfWeek` (0 = Sunday … 6) for a daily run, or neither for one
/// run at `startAfter`. `lastRun` holds the time (milliseconds) of the last run started; a node claims a run by
/// moving `lastRun` forward only while it still holds what that node read (a compare-and-set under the row's lock).
struct JobSchedule: Sendable {
    var objectId: String
    var jobName: String
    var params: [String: JSONValue]
    var startAfter: Int64
    var repeatMinutes: Int64?
    var timeOfDay: Int64?  // milliseconds after midnight UTC
    var daysOfWeek: Set<Int>
    var lastRun: JSONValue?

    init?(row: [String: JSONValue]) {
        guard let id = row["objectId"]?.stringValue, let name = row["jobName"]?.stringValue else { return nil }
        objectId = id
        jobName = name
        switch row["params"] {
        case .object(let o)?: params = o
        case .string(let text)?: params = (try? JSONParser.parse(text))?.objectValue ?? [:]
        default: params = [:]
        }
        let start = ParseDate(parseJSON: row["startAfter"] ?? .null)
        startAfter = start?.milliseconds ?? 0
        repeatMinutes = row["repeatMinutes"].flatMap { Int(parseJSON: $0) }.map(Int64.init).flatMap { $0 > 0 ? $0 : nil }
        timeOfDay = row["timeOfDay"]?.stringValue.flatMap(Self.timeOfDay)
        daysOfWeek = Set((row["daysOfWeek"]?.arrayValue ?? []).compactMap { Int(parseJSON: $0) })
        lastRun = row["lastRun"]
    }

    /// `HH:MM`, `HH:MM:SS` or `HH:MM:SS.sssZ` as milliseconds after midnight.
    static func timeOfDay(_ text: String) -> Int64? {
        let parts = text.replacingOccurrences(of: "Z", with: "").split(separator: ":")
        guard parts.count >= 2, let h = Int64(parts[0]), let m = Int64(parts[1]), (0..<24).contains(h), (0..<60).contains(m) else { return nil }
        let s = parts.count > 2 ? Double(parts[2]) ?? 0 : 0
        return (h * 3600 + m * 60) * 1000 + Int64(s * 1000)
    }

    static let day: Int64 = 86_400_000

    /// The latest scheduled time at or before `now` (nil: none yet).
    func latestDue(now: Int64) -> Int64? {
        guard startAfter <= now else { return nil }
        if let repeatMinutes {
            let period = repeatMinutes * 60_000
            return startAfter + (now - startAfter) / period * period
        }
        if timeOfDay != nil || !daysOfWeek.isEmpty {
            let today = now - ((now % Self.day) + Self.day) % Self.day
            for back in 0...7 {
                let t = today - Int64(back) * Self.day + (timeOfDay ?? 0)
                // 1970-01-01 was a Thursday (4).
                let weekday = Int(((t / Self.day) % 7 + 11) % 7)
                if t <= now, t >= startAfter, daysOfWeek.isEmpty || daysOfWeek.contains(weekday) { return t }
            }
            return nil
        }
        return startAfter
    }

    /// The run to start now, if its time came after the last one started.
    func dueRun(now: Int64) -> Int64? {
        guard let due = latestDue(now: now) else { return nil }
        if let last = lastRun.flatMap({ Int(parseJSON: $0) }), Int64(last) >= due { return nil }
        return due
    }
}

extension CloudRuntime {
    /// Checks the schedules every `interval` until the task is cancelled, starting each due run once across all nodes.
    public func runScheduler(interval: Duration) async {
        while !Task.isCancelled {
            do {
                try await startDueJobs(now: ParseDate.now.milliseconds)
            } catch {
                logger.warning("job scheduler: \(error)")
            }
            try? await Task.sleep(for: interval)
        }
    }

    func startDueJobs(now: Int64) async throws {
        let services = try attached()
        guard !code.jobs.isEmpty, services.objects.schemas.schema("_JobSchedule") != nil else { return }
        let rows = try await services.queries.find("_JobSchedule", FindOptions(params: ["limit": 10_000]), auth: .master).results
        for schedule in rows.compactMap(JobSchedule.init(row:)) {
            guard let due = schedule.dueRun(now: now), code.jobs[schedule.jobName] != nil else { continue }
            // Claim the run: only the node whose compare-and-set of lastRun succeeds starts it.
            let claimed: Bool
            do {
                _ = try await services.objects.update(
                    "_JobSchedule", objectId: schedule.objectId, ["lastRun": .int(due)], auth: .master,
                    rules: .init(condition: (field: "lastRun", value: schedule.lastRun)))
                claimed = true
            } catch let error as ParseError where error.code == .objectNotFound {
                claimed = false
            }
            if claimed { _ = try await startJob(StartJob(jobName: schedule.jobName, params: schedule.params), auth: .master, source: "schedule") }
        }
    }

    /// `/cloud_code/jobs`: the schedule as stored (defaults filled: `startAfter` now); a job that is not registered
    /// cannot be scheduled (Parse Server's error 1).
    public func scheduleBody(_ job: ScheduleJob) throws -> [String: JSONValue] {
        var schedule = job.schedule
        if let name = schedule["jobName"]?.stringValue, code.jobs[name] == nil {
            throw ParseError(.internalServerError, "Cannot Schedule a job that is not deployed")
        }
        if schedule["startAfter"] == nil { schedule["startAfter"] = .string(ParseDate.now.iso) }
        return schedule
    }
}
