import ParsleyServer

/// Glimp (shared/apps/glimp.md): "A notification will be sent when someone wants to be your friend, accepts
/// your friend request, sends you a Glimp request, answers your Glimp request."
enum Glimp {
    static func register(_ cloud: inout CloudCode) {
        // Someone wants to be your friend: a new FriendRequest.
        cloud.afterSave("FriendRequest") { req in
            guard req.original == nil, let to = req.object.pointerId("toUser") else { return }
            let from = await Notifications.name(req.parse, req.object.pointerId("fromUser"))
            try await Notifications.record(req.parse, to: to, kind: "friendRequest", message: "\(from) wants to be your friend")
        }
        // Someone accepts your friend request: they add your id to their friendIds while yours already held theirs
        // (added before this save: the after-trigger may run once both sides are in, and only the later add is
        // the acceptance).
        cloud.afterSave("_User") { req in
            guard let me = req.object.objectId else { return }
            let before = Set(req.original?["friendIds", as: [String].self] ?? [])
            let added = (req.object["friendIds", as: [String].self] ?? []).filter { !before.contains($0) }
            let savedAt = req.object["updatedAt", as: String.self] ?? ""
            for friend in added {
                guard let theirs = try? await req.parse.asMaster.get("_User", friend),
                    [String](parseJSON: theirs["friendIds"] ?? [])?.contains(me) == true,
                    let theirUpdate = theirs["updatedAt"]?.stringValue, theirUpdate < savedAt
                else { continue }
                let name = req.object["username", as: String.self] ?? "Someone"
                try await Notifications.record(req.parse, to: friend, kind: "friendAccepted", message: "\(name) accepted your friend request")
            }
        }
        // Someone sends you a Glimp request (a new Glimp), or answers yours (its photo is set).
        cloud.afterSave("Glimp") { req in
            let (from, to) = (req.object.pointerId("fromUser"), req.object.pointerId("toUser"))
            if req.original == nil, let to {
                let name = await Notifications.name(req.parse, from)
                try await Notifications.record(req.parse, to: to, kind: "glimpRequest", message: "\(name) asks you for a Glimp")
            } else if req.object["photo"] != nil, req.original?["photo"] == nil, let from {
                let name = await Notifications.name(req.parse, to)
                try await Notifications.record(req.parse, to: from, kind: "glimpAnswered", message: "\(name) answered your Glimp")
            }
        }
    }
}
