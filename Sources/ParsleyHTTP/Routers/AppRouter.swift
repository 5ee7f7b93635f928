import ParsleyCore
import ParsleyDomain

/// The small app-level endpoints: `/config`, `/graphql-config` (master key), `/functions/:name` and `/jobs/:name` (cloud code's functions and
/// jobs), `/cloud_code/jobs/data`, `/events/:name` (analytics, accepted and dropped), `/purge/:className`.
struct AppRouter: ParseRouter {
    private var table = RouteTable()

    init(config: ConfigService, graphQLConfig: GraphQLConfigService, objects: ObjectService, queries: QueryService, cloud: CloudRuntime) {
        table.on(.get, "config") { [config] req, _ in .ok(try await config.get(auth: req.auth)) }
        // Parse Server's GraphQL configuration: the object itself, and `{"response":{"result":true}}` for an update.
        table.master(.get, "graphql-config") { [graphQLConfig] _, _ in .ok(try await graphQLConfig.get()) }
        table.master(.put, "graphql-config") { [graphQLConfig] req, _ in
            try await graphQLConfig.update(req.body)
            return .ok(["response": ["result": true]])
        }
        table.master(.put, "config") { [config] req, _ in
            try await config.update(try UpdateConfig(decoding: req.body))
            return .ok(["result": true])
        }
        for method in [ParseRequest.Method.post, .get] {
            // The body's parameters with the query string's merged in (they win), as Parse Server does.
            table.on(method, "functions/:name") { [cloud] req, p in
                let call = CallFunction(functionName: try p.require("name"), body: req.body, query: req.params)
                // The status and headers the function set (Parse Server 9.1); an error answers as errors do.
                let custom = FunctionResponse()
                var response = ParseResponse.ok(["result": try await cloud.run(call, auth: req.auth, response: custom)])
                if let status = custom.statusCode { response.status = status }
                for (name, value) in custom.headers { response.headers[name] = value }
                return response
            }
        }
        // Jobs start in the background: `{}` at once, with the run's `_JobStatus` id in a header. `POST /jobs` takes
        // `{"jobName": ..., "input": ...}` (Parse Dashboard's "Run now").
        let startJob: @Sendable (ParseRequest, StartJob) async throws -> ParseResponse = { [cloud] req, job in
            var response = ParseResponse.ok([:])
            response.headers["X-Parse-Job-Status-Id"] = try await cloud.startJob(job, auth: req.auth)
            return response
        }
        table.master(.post, "jobs") { req, _ in try await startJob(req, StartJob(decoding: req.body)) }
        table.master(.post, "jobs/:name") { req, p in
            try await startJob(req, StartJob(jobName: try p.require("name"), body: req.body, query: req.params))
        }
        // Schedules (`_JobSchedule`), run by the scheduler (JobScheduler.swift); Parse Dashboard's "Scheduled jobs".
        table.master(.get, "cloud_code/jobs/data") { [cloud, queries] req, _ in
            let scheduled = try await queries.find("_JobSchedule", FindOptions(params: ["limit": 10_000]), auth: .master).results
            return .ok([
                "jobs": .array(cloud.code.jobNames.map(JSONValue.string)),
                "in_use": .array(scheduled.compactMap { $0["jobName"] }),
            ])
        }
        table.master(.get, "cloud_code/jobs") { [queries] req, _ in
            let scheduled = try await queries.find("_JobSchedule", FindOptions(params: ["limit": 10_000]), auth: .master).results
            return ParseResponse(body: .array(scheduled.map(JSONValue.object)))
        }
        table.master(.post, "cloud_code/jobs") { [cloud, objects] req, _ in
            let schedule = try cloud.scheduleBody(ScheduleJob(decoding: req.body))
            let created = try await objects.create("_JobSchedule", CreateObject(schedule), auth: req.auth)
            return ParseResponse(
                status: 201, body: .object(created), location: "\(req.mountURL)/classes/_JobSchedule/\(created["objectId"]?.stringValue ?? "")")
        }
        table.master(.put, "cloud_code/jobs/:objectId") { [cloud, objects] req, p in
            let schedule = try cloud.scheduleBody(ScheduleJob(decoding: req.body))
            return .ok(try await objects.update("_JobSchedule", objectId: try p.require("objectId"), UpdateObject(schedule), auth: req.auth))
        }
        table.master(.delete, "cloud_code/jobs/:objectId") { [objects] req, p in
            try await objects.delete("_JobSchedule", objectId: try p.require("objectId"), auth: req.auth)
            return .ok([:])
        }
        table.on(.post, "events/:name") { _, _ in .ok([:]) }
        table.master(.delete, "purge/:className") { [objects] req, p in
            try await objects.purge(try p.require("className"))
            return .ok([:])
        }
    }

    var routes: RouteTable { table }
}
