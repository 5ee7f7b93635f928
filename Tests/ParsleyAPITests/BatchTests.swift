import HTTPTypes
import ParsleyCore
import ParsleyDomain
import Testing

@Suite("Batch")
struct BatchTests {
    @Test("each sub-request answers in order with success or error", arguments: Backend.all)
    func mixed(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            let existing = try await p.createId("GameScore", ["score": 1])
            let r = try await p.request(
                .post, "/batch",
                [
                    "requests": [
                        ["method": "POST", "path": "/parse/classes/GameScore", "body": ["score": 1337, "playerName": "Sean"]],
                        [
                            "method": "PUT", "path": .string("/parse/classes/GameScore/\(existing)"),
                            "body": ["score": ["__op": "Increment", "amount": 2]],
                        ],
                        ["method": "DELETE", "path": "/parse/classes/GameScore/doesNotExist"],
                        ["method": "GET", "path": .string("/parse/classes/GameScore/\(existing)")],
                        ["method": "POST", "path": "/classes/GameScore", "body": ["score": 2]],
                    ]
                ])
            #expect(r.status == 200)
            let items = try #require(r.json.arrayValue)
            try #require(items.count == 5)
            #expect(items[0]["success"]?["objectId"] != nil)
            #expect(items[0]["success"]?["createdAt"] != nil)
            #expect(items[1]["success"]?["score"] == 3)
            #expect(items[2]["error"] == ["code": 101, "error": "Object not found."])
            #expect(items[3]["success"]?["score"] == 3)
            #expect(items[4]["error"]?["code"] == 107)
            let all = try await p.find("GameScore")
            #expect(all.results.count == 2)
        }
    }

    @Test("transaction: true stores everything or nothing", arguments: Backend.all)
    func transaction(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            _ = try await p.createId("Account", ["balance": 10])
            let failing = try await p.request(
                .post, "/batch",
                [
                    "transaction": true,
                    "requests": [
                        ["method": "POST", "path": "/parse/classes/Account", "body": ["balance": 5]],
                        ["method": "POST", "path": "/parse/classes/Account", "body": ["balance": "not a number"]],
                    ],
                ])
            #expect(failing.status == 400)
            #expect(failing.code == 111)
            let afterFailure = try await p.find("Account")
            #expect(afterFailure.results.count == 1)
            let ok = try await p.request(
                .post, "/batch",
                [
                    "transaction": true,
                    "requests": [
                        ["method": "POST", "path": "/parse/classes/Account", "body": ["balance": 5]],
                        ["method": "POST", "path": "/parse/classes/Account", "body": ["balance": 6]],
                    ],
                ])
            #expect(ok.status == 200)
            #expect(ok.json.arrayValue?.count == 2)
            let afterSuccess = try await p.find("Account")
            #expect(afterSuccess.results.count == 3)
        }
    }

    /// A plain create and a plain update are one statement each (on PostgreSQL without BEGIN/COMMIT of their own);
    /// inside a transactional batch they must still join the batch's transaction: a later statement that fails in the
    /// database takes them back.
    @Test("a create and an update in a transaction are rolled back when a later write fails in the database", arguments: Backend.all)
    func transactionRollsBackCreate(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, TestServer.options { $0.allowCustomObjectId = true }) { p in
            let account = try await p.createId("Account", ["balance": 10])
            let failing = try await p.request(
                .post, "/batch",
                [
                    "transaction": true,
                    "requests": [
                        [
                            "method": "PUT", "path": .string("/parse/classes/Account/\(account)"),
                            "body": ["balance": ["__op": "Increment", "amount": 100], "note": "changed"],
                        ],
                        ["method": "POST", "path": "/parse/classes/Account", "body": ["objectId": "first0001", "balance": 5]],
                        ["method": "POST", "path": "/parse/classes/Account", "body": ["objectId": "dup000001", "balance": 6]],
                        ["method": "POST", "path": "/parse/classes/Account", "body": ["objectId": "dup000001", "balance": 7]],
                    ],
                ])
            #expect(failing.status == 400)
            #expect(failing.code == 137)
            let after = try await p.find("Account")
            #expect(after.results.count == 1)
            let gone = try await p.request(.get, "/classes/Account/first0001")
            #expect(gone.code == 101)
            let unchanged = try await p.get("Account", account)
            #expect(unchanged["balance"] == .int(10))
            #expect(unchanged["note"] == nil)
            // Outside a batch the same create stands alone: stored once, its duplicate refused.
            #expect(try await p.request(.post, "/classes/Account", ["objectId": "alone0001", "balance": 1]).status == 201)
            #expect(try await p.request(.post, "/classes/Account", ["objectId": "alone0001", "balance": 2]).code == 137)
            #expect(try await p.find("Account").results.count == 2)
        }
    }

    @Test("requests must be an array and within the limit", arguments: Backend.all)
    func validation(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend, TestServer.options { $0.maxBatchSize = 2 }) { p in
            let notArray = try await p.request(.post, "/batch", ["requests": "nope"])
            #expect(notArray.status == 400)
            #expect(notArray.code == 107)
            let tooMany = try await p.request(
                .post, "/batch",
                [
                    "requests": [
                        ["method": "POST", "path": "/parse/classes/A", "body": [:]], ["method": "POST", "path": "/parse/classes/A", "body": [:]],
                        ["method": "POST", "path": "/parse/classes/A", "body": [:]],
                    ]
                ])
            #expect(tooMany.code == 107)
        }
    }
}
