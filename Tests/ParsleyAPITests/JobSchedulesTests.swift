import Foundation
import HTTPTypes
import ParsleyAdapters
import ParsleyCore
import ParsleyDomain
import ParsleyHTTP
import ParsleyPostgres
import ParsleyStorage
import Testing

/// Scheduled jobs: Parse Server's `/cloud_code/jobs` API over `_JobSchedule`, and Parsley's scheduler, which starts
/// each due run once across all nodes and a run missed during downtime once.
@Suite("Job schedules")
struct JobSchedulesTests {
    static let options = TestServer.options { $0.schedulerInterval = .milliseconds(100) }

    static func cloud() -> CloudCode {
        var cloud = CloudCode()
        cloud.job("tally") { req in .string("label \(req.params["label"]?.stringValue ?? "-")") }
        return cloud
    }

    static func iso(minutesAgo: Double) -> JSONValue {
        .string(ParseDate(milliseconds: ParseDate.now.milliseconds - Int64(minutesAgo * 60_000)).iso)
    }

    /// The job runs started so far (`_JobStatus`), waiting `settle` for more to appear.
    static func runs(_ p: ParseClient, settle: Duration) async throws -> [JSONValue] {
        try await Task.sleep(for: settle)
        return try await p.find("_JobStatus", ["order": "createdAt"]).results
    }

    /// The runs once there are `expected` (waiting up to 30 s on a loaded machine), after `settle` more for any extra.
    static func runs(_ p: ParseClient, expected: Int, settle: Duration) async throws -> [JSONValue] {
        for _ in 0..<300 where try await p.find("_JobStatus", ["count": "1", "limit": "0"])["count"]?.integerValue ?? 0 < expected {
            try await Task.sleep(for: .milliseconds(100))
        }
        return try await runs(p, settle: settle)
    }

    @Test(
        "the /cloud_code/jobs API: create (startAfter defaults to now), list, edit, delete; unknown jobs refused; jobs/data names what is in use",
        arguments: Backend.all)
    func api(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, TestServer.options(), cloud: Self.cloud()) { p in
            let created = try await p.request(
                .post, "/cloud_code/jobs", ["job_schedule": ["jobName": "tally", "description": "nightly", "timeOfDay": "03:00"]])
            #expect(created.status == 201, "\(created.json)")
            let id = try #require(created["objectId"]?.stringValue)
            let listed = try await p.request(.get, "/cloud_code/jobs")
            #expect(listed.json.arrayValue?.count == 1)
            #expect(listed.json.arrayValue?.first?["startAfter"]?.stringValue != nil, "startAfter filled in")
            #expect(try await p.request(.get, "/cloud_code/jobs/data").json == ["jobs": ["tally"], "in_use": ["tally"]])
            let edited = try await p.request(.put, "/cloud_code/jobs/\(id)", ["job_schedule": ["description": "hourly", "repeatMinutes": 60]])
            #expect(edited.status == 200)
            #expect(try await p.request(.get, "/cloud_code/jobs").json.arrayValue?.first?["repeatMinutes"] == 60)
            let unknown = try await p.request(.post, "/cloud_code/jobs", ["job_schedule": ["jobName": "nope"]])
            #expect(unknown.json == ["code": 1, "error": "Cannot Schedule a job that is not deployed"])
            #expect(try await p.request(.get, "/cloud_code/jobs", master: false).status == 403)
            #expect(try await p.request(.delete, "/cloud_code/jobs/\(id)").json == [:])
            #expect(try await p.request(.get, "/cloud_code/jobs").json == [])
        }
    }

    @Test(
        "a schedule every two minutes whose five runs were missed runs once, with its params, and not again before its next time",
        arguments: Backend.all)
    func missedRunsRunOnce(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, Self.options, cloud: Self.cloud()) { p in
            let created = try await p.request(
                .post, "/cloud_code/jobs",
                [
                    "job_schedule": [
                        "jobName": "tally", "params": #"{"label":"every two minutes"}"#, "startAfter": Self.iso(minutesAgo: 10.02),
                        "repeatMinutes": 2,
                    ]
                ])
            #expect(created.status == 201)
            let runs = try await Self.runs(p, expected: 1, settle: .milliseconds(1500))
            #expect(runs.count == 1, "\(runs)")
            #expect(runs.first?["source"] == "schedule")
            #expect(runs.first?["jobName"] == "tally")
            for _ in 0..<100 where try await p.find("_JobStatus").results.first?["status"] == "running" {
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(try await p.find("_JobStatus").results.first?["message"] == "label every two minutes")
            // A schedule for later does not run yet.
            _ = try await p.request(.post, "/cloud_code/jobs", ["job_schedule": ["jobName": "tally", "startAfter": Self.iso(minutesAgo: -5)]])
            #expect(try await Self.runs(p, settle: .milliseconds(600)).count == 1)
        }
    }

    @Test("PostgreSQL: two nodes checking every 100 ms start a due run exactly once")
    func twoNodes() async throws {
        guard Backend.all.contains(.postgres) else { return }
        try await TestServer.withAPI(backend: .postgres, Self.options, cloud: Self.cloud()) { _, db, p in
            let other = try await PostgresDatabase.open(url: try #require(db.url), poolSize: 4, logger: TestDatabase.logger)
            try await other.serving {
                let node2 = ParseAPI(
                    services: try await ParseServices.open(options: Self.options, database: other, cloud: Self.cloud(), adapters: .standard))
                try await withThrowingTaskGroup(of: Void.self) { group in
                    // The second node's background work (scheduler and job runner), as its server would run it.
                    group.addTask { try await node2.background.run() }
                    for i in 0..<5 {
                        let r = try await p.request(
                            .post, "/cloud_code/jobs",
                            [
                                "job_schedule": [
                                    "jobName": "tally", "params": .string(#"{"label":"\#(i)"}"#), "startAfter": Self.iso(minutesAgo: 0.01),
                                ]
                            ])
                        #expect(r.status == 201)
                    }
                    let runs = try await Self.runs(p, expected: 5, settle: .seconds(2))
                    #expect(runs.count == 5, "each of the five schedules ran once: \(runs.map { $0["params"] ?? .null })")
                    #expect(Set(runs.compactMap { $0["params"]?["label"]?.stringValue }) == ["0", "1", "2", "3", "4"])
                    group.cancelAll()
                }
            }
        }
    }
}
