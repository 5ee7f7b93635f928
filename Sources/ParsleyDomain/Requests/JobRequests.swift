public import ParsleyCore

/// `POST /jobs/:name` and `POST /jobs` (master key): which job to run, with which parameters (a job's own, free-form).
public struct StartJob: Sendable, Equatable {
    public var jobName: String
    public var params: [String: JSONValue]

    public init(jobName: String, params: [String: JSONValue] = [:]) {
        self.jobName = jobName
        self.params = params
    }

    /// `POST /jobs/:name`: the body's parameters with the query string's merged in (they win), as Parse Server does.
    public init(jobName: String, body: JSONValue?, query: [String: JSONValue]) {
        var params = body?.objectValue ?? [:]
        for (key, value) in query { params[key] = value }
        self.init(jobName: jobName, params: params)
    }

    /// `POST /jobs` (Parse Dashboard's "Run now"): `{"jobName": ..., "input": {...}}`.
    public init(decoding body: JSONValue?) {
        self.init(jobName: body?["jobName"]?.stringValue ?? "", params: body?["input"]?.objectValue ?? [:])
    }
}

/// `POST /cloud_code/jobs` and `PUT /cloud_code/jobs/:id` (master key): a job's schedule, `{"job_schedule": {...}}`
/// (`jobName`, `params`, `startAfter`, `timeOfDay`, `repeatMinutes`, `description`), stored as `_JobSchedule`.
public struct ScheduleJob: Sendable, Equatable {
    public var schedule: [String: JSONValue]

    public init(_ schedule: [String: JSONValue]) { self.schedule = schedule }

    /// A missing or non-object `job_schedule` is an empty schedule, as today.
    public init(decoding body: JSONValue?) { schedule = body?["job_schedule"]?.objectValue ?? [:] }
}
