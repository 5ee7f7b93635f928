import HTTPTypes
import ParsleyCore
import ParsleyDomain
import Testing

/// SwapIt (shared/apps/swapit.md) on Schemas/swapit.json: rates, exchanges near the user, messages, the profile.
@Suite("App flows: SwapIt")
struct AppFlowsSwapItTests {
    static func geo(_ lat: Double, _ lng: Double) -> JSONValue { ["__type": "GeoPoint", "latitude": .double(lat), "longitude": .double(lng)] }

    @Test("rates, exchanges near me, the map box, messages, profile and profile image", arguments: Backend.all)
    func flows(_ backend: Backend) async throws {
        try await TestServer.with(backend: backend) { p in
            try await p.applySchema("swapit.json")
            // Sign up / log in.
            let ana = try await p.signUp("ana")
            let login = try await p.request(.get, "/login?username=ana&password=secret-pw", master: false)
            #expect(login["objectId"]?.stringValue == ana.id)
            let ben = try await p.signUp("ben")
            let cat = try await p.signUp("cat")
            for u in [ana, ben, cat] { try await p.makePublic(u) }
            let (anaU, benU, catU) = (p.userPointer(ana.id), p.userPointer(ben.id), p.userPointer(cat.id))

            // Home feed: the current rate (cached from the rates API with the master key; anyone reads it).
            _ = try await p.createId("CurrencyRate", ["base": "USD", "date": .date(iso: "2024-05-01T00:00:00.000Z"), "rates": ["EUR": 0.93]])
            _ = try await p.createId("CurrencyRate", ["base": "USD", "date": .date(iso: "2024-05-02T00:00:00.000Z"), "rates": ["EUR": 0.94]])
            let rate = try await p.findAs(nil, "CurrencyRate", where: ["base": "USD"], ["order": "-date", "limit": "1"])
            #expect(rate.results.first?["rates"]?["EUR"] == .double(0.94))
            let forged = try await p.asUser(ana.token, .post, "/classes/CurrencyRate", ["base": "USD", "date": .date()])
            #expect(forged.code == 119)

            // Exchanges: Ana is at Times Square; Ben nearby, Cat across the river, and one in Paris.
            let here = Self.geo(40.7580, -73.9855)
            let mine = try await p.createAs(
                ana.token, "Exchange",
                [
                    "user": anaU, "amount": 200, "currencyStart": "USD", "currencyEnd": "EUR", "location": here, "timeExchange": .date(),
                ])
            let near = try await p.createAs(
                ben.token, "Exchange",
                [
                    "user": benU, "amount": 150, "currencyStart": "EUR", "currencyEnd": "USD", "location": Self.geo(40.7484, -73.9857),
                    "timeExchange": .date(-600),
                ])
            let across = try await p.createAs(
                cat.token, "Exchange",
                [
                    "user": catU, "amount": 80.5, "currencyStart": "EUR", "currencyEnd": "USD", "location": Self.geo(40.6892, -74.0445),
                    "timeExchange": .date(-7200),
                ])
            _ = try await p.createAs(
                cat.token, "Exchange",
                [
                    "user": catU, "amount": 500, "currencyStart": "EUR", "currencyEnd": "USD", "location": Self.geo(48.8566, 2.3522),
                    "timeExchange": .date(-60),
                ])
            let missing = try await p.asUser(
                ana.token, .post, "/classes/Exchange",
                ["user": anaU, "amount": 1, "currencyStart": "USD", "currencyEnd": "EUR", "timeExchange": .date()])
            #expect(missing.json == ["code": 142, "error": "location is required"])

            // SwapIt screen: swappers who have what I want, near me, nearest first, with their user.
            let nearby = try await p.findAs(
                ana.token, "Exchange",
                where: [
                    "user": ["$ne": anaU], "currencyStart": "EUR", "currencyEnd": "USD",
                    "location": ["$nearSphere": here, "$maxDistanceInKilometers": 15],
                ], ["include": "user"])
            #expect(nearby.results.compactMap { $0["objectId"]?.stringValue } == [near, across])
            #expect(nearby.results.first?["user"]?["username"] == "ben")
            // The map's visible box.
            let box = try await p.idsAs(
                ana.token, "Exchange",
                where: [
                    "location": ["$within": ["$box": [Self.geo(40.70, -74.02), Self.geo(40.80, -73.90)]]]
                ])
            #expect(Set(box) == [mine, near])
            // Recent offers only (the last hour), a date range.
            let recent = try await p.idsAs(
                ana.token, "Exchange",
                where: [
                    "timeExchange": ["$gte": .date(-3600), "$lte": .date(60)], "user": ["$ne": anaU],
                ], ["order": "-timeExchange"])
            #expect(recent.count == 2 && !recent.contains(across))
            // Only the owner changes an exchange.
            let steal = try await p.asUser(ben.token, .put, "/classes/Exchange/\(mine)", ["amount": 1])
            #expect(steal.status == 404)
            let raise = try await p.asUser(ana.token, .put, "/classes/Exchange/\(mine)", ["amount": ["__op": "Increment", "amount": 50]])
            #expect(raise["amount"] == 250)

            // Create Message screen: Ana writes to Ben about his offer; only the two of them read it.
            _ = try await p.createAs(
                ana.token, "ExchangeMessage",
                [
                    "sender": anaU, "recipient": benU, "message": "Meet at the corner?", "timeSent": .date(-30),
                    "exchange": p.pointer("Exchange", near),
                ])
            _ = try await p.createAs(ben.token, "ExchangeMessage", ["sender": benU, "recipient": anaU, "message": "Sure, 5pm", "timeSent": .date()])
            let thread = try await p.findAs(
                ben.token, "ExchangeMessage", where: ["$or": [["sender": benU], ["recipient": benU]]], ["order": "timeSent", "include": "exchange"])
            #expect(thread.results.compactMap { $0["message"]?.stringValue } == ["Meet at the corner?", "Sure, 5pm"])
            #expect(thread.results.first?["exchange"]?["amount"] == 150)
            let snoop = try await p.idsAs(cat.token, "ExchangeMessage", where: ["recipient": benU])
            #expect(snoop.isEmpty)
            let empty = try await p.asUser(
                ana.token, .post, "/classes/ExchangeMessage", ["sender": anaU, "recipient": benU, "message": "", "timeSent": .date()])
            #expect(empty.code == 142)

            // Profile screen: the logged-in user, then the user's own exchanges. The doc's snippet queries class
            // Post (copied from another app); SwapIt has no Post, and like Parse Server Parsley answers a client's
            // query on a class that does not exist with 119.
            let me = try await p.asUser(ana.token, .get, "/users/me")
            #expect(me["username"] == "ana")
            let asWritten = try await p.findAs(ana.token, "Post", where: ["author": anaU])
            #expect(asWritten.json == ["code": 119, "error": "This user is not allowed to access non-existent class: Post"])
            let myOffers = try await p.idsAs(ana.token, "Exchange", where: ["user": anaU])
            #expect(myOffers == [mine])
            // Update the profile image: upload, then PUT the user.
            let image = try await p.uploadFile(ana.token, "avatar.png", "png bytes", contentType: "image/png")
            let updated = try await p.asUser(ana.token, .put, "/users/\(ana.id)", ["profileImage": image, "rating": 5])
            #expect(updated.status == 200)
            let after = try await p.asUser(ana.token, .get, "/users/me")
            #expect(after["profileImage"]?["url"]?.stringValue?.hasSuffix(image["name"]?.stringValue ?? "?") == true)
            let othersView = try await p.asUser(ben.token, .get, "/users/\(ana.id)")
            #expect(othersView["rating"] == 5)
            let notYours = try await p.asUser(ben.token, .put, "/users/\(ana.id)", ["rating": 1])
            #expect(notYours.status != 200)
        }
    }
}
