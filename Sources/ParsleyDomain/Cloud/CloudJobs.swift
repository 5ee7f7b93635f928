public import Logging
public import ParsleyCore
import Synchronization

/// What a job receives: its parameters, its `_JobStatus` id, a way to report progress, and Parse with the master's
/// rights.
public struct JobRequest: Sendable {
    public let jobName: String
    public let params: [String: JSONValue]
    /// The `_JobStatus` object of this run.
    public let jobId: String
    public let log: Logger
    public let parse: CloudAPI

    /// Sets the run's `message` in `_JobStatus` (progress a dashboard shows).
    public func message(_ text: String) async throws {
        _ = try await parse.asMaster.update("_JobStatus", jobId, ["message": .string(text)])
    }
}

extension CloudCode {
    public typealias Job = @Sendable (JobRequest) async throws -> JSONValue?

    /// `Parse.Cloud.job`: `POST /jobs/<name>` (master key) starts it in the background and answers at once with its
    /// `_JobStatus` id in `X-Parse-Job-Status-Id`. What it returns becomes the run's `message`; a throw marks the run
    /// `failed` with the error's text.
    public mutating func job(_ name: String, _ handler: @escaping Job) {
        jobs[name] = handler
    }
}

/// Job runs queued by `start` and run by `runJobs` (a background service), each as a child task.
final class JobQueue: Sendable {
    struct Run: Sendable {
        var name: String
        var params: [String: JSONValue]
        var jobId: String
    }

    let runs: AsyncStream<Run>
    private let continuation: AsyncStream<Run>.Continuation

    init() {
        (runs, continuation) = AsyncStream<Run>.makeStream()
    }

    func enqueue(_ run: Run) { continuation.yield(run) }
}

extension CloudRuntime {
    /// `POST /jobs/:name`: records a `running` `_JobStatus` (`jobName`, `params`, `source: "api"`, `startedAt`,
    /// an empty ACL) and queues the run; returns the status's id. An unknown job answers 141 `Invalid job.`.
    public func startJob(_ job: StartJob, auth: Auth, source: String = "api") async throws -> String {
        let (name, params) = (job.jobName, job.params)
        guard auth.isMaster else { throw ParseError.sanitized(.operationForbidden, "unauthorized: master key is required") }
        guard code.jobs[name] != nil else { throw ParseError(.scriptFailed, "Invalid job.") }
        let created = try await attached().objects.create(
            "_JobStatus",
            [
                "jobName": .string(name), "status": "running", "source": .string(source), "params": .object(params),
                "startedAt": ParseDate.now.cloudJSON, "ACL": [:],
            ],
            auth: .master)
        guard let id = created["objectId"]?.stringValue else { throw ParseError(.internalServerError, "job status not created") }
        jobQueue.enqueue(JobQueue.Run(name: name, params: params, jobId: id))
        return id
    }

    /// Runs queued jobs until the task is cancelled, several at once; each ends `succeeded` or `failed` with
    /// `finishedAt` and its `message`.
    public func runJobs() async {
        await withDiscardingTaskGroup { group in
            for await run in jobQueue.runs {
                group.addTask { await self.run(run) }
            }
        }
    }

    private func run(_ run: JobQueue.Run) async {
        guard let handler = code.jobs[run.name] else { return }
        let request = JobRequest(
            jobName: run.name, params: run.params, jobId: run.jobId, log: logger, parse: CloudAPI(runtime: self, auth: .master))
        var outcome: [String: JSONValue]
        do {
            let result = try await handler(request)
            outcome = ["status": "succeeded"]
            if let result, result != .null { outcome["message"] = result.stringValue.map(JSONValue.string) ?? .string(JSONWriter.string(result)) }
        } catch {
            outcome = ["status": "failed", "message": .string(Self.parseError(error).message)]
            logger.warning("job failed", metadata: ["job": "\(run.name)", "jobId": "\(run.jobId)", "error": "\(error)"])
        }
        outcome["finishedAt"] = ParseDate.now.cloudJSON
        do {
            _ = try await attached().objects.update("_JobStatus", objectId: run.jobId, UpdateObject(outcome), auth: .master)
        } catch {
            logger.error("job status not recorded", metadata: ["job": "\(run.name)", "jobId": "\(run.jobId)", "error": "\(error)"])
        }
    }
}
