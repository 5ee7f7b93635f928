#!/usr/bin/env bash
# Glimp (shared/apps/glimp.md) with curl: friend requests, friends, Glimp requests that expire, photo answers.
# First: parsley schema apply Schemas/glimp.json
set -euo pipefail
source "$(dirname "$0")/lib.sh"
need_class Glimp glimp.json

signup "ann-$RUN"; ANN=$ID ANN_T=$TOKEN
signup "bob-$RUN"; BOB=$ID BOB_T=$TOKEN
signup "cy-$RUN"; CY=$ID CY_T=$TOKEN
for u in "$ANN $ANN_T" "$BOB $BOB_T" "$CY $CY_T"; do make_public $u; done

# createRequest: find the user by name, create a FriendRequest, add their id to my friendIds.
find --token "$ANN_T" _User "where=$(j --arg u "bob-$RUN" '{username: $u}')"
expect 200 ".results[0].objectId == \"$BOB\"" "find bob by username"
req --token "$ANN_T" POST /classes/FriendRequest "$(j --argjson a "$(user "$ANN")" --argjson b "$(user "$BOB")" '{fromUser: $a, toUser: $b}')"
expect 201 '.objectId' "Ann sends Bob a friend request"
REQUEST=$(val .objectId)
req --token "$ANN_T" PUT "/users/$ANN" "$(j --arg b "$BOB" '{friendIds: {__op: "AddUnique", objects: [$b]}}')"
expect 200 ".friendIds == [\"$BOB\"]" "and adds Bob to her friendIds"

# Bob's requests, with the sender; accept: add Ann, delete the request.
find --token "$BOB_T" FriendRequest "where=$(j --argjson b "$(user "$BOB")" '{toUser: $b}')" include=fromUser
expect 200 ".results[0].fromUser.username == \"ann-$RUN\"" "Bob's friend requests"
find --token "$CY_T" FriendRequest
expect 200 '.results == []' "Cy does not see them"
req --token "$BOB_T" PUT "/users/$BOB" "$(j --arg a "$ANN" '{friendIds: {__op: "AddUnique", objects: [$a]}}')"
expect 200 '.updatedAt' "Bob accepts: adds Ann to his friendIds"
req --token "$BOB_T" DELETE "/classes/FriendRequest/$REQUEST"
expect 200 '. == {}' "and deletes the request"

# Friends: users in my friendIds who have my id in theirs.
find --token "$ANN_T" _User "where=$(j --arg a "$ANN" --arg b "$BOB" '{objectId: {"$in": [$b]}, friendIds: $a}')" keys=username,profilePicture
expect 200 "[.results[].username] == [\"bob-$RUN\"]" "Ann's friends"

# sendGlimpRequest: one per selected friend (a batch), answerable for 10 minutes; one already expired.
req --token "$ANN_T" POST /batch "$(j --argjson a "$(user "$ANN")" --argjson b "$(user "$BOB")" --argjson soon "$(date_in 600)" --argjson past "$(date_in -60)" \
  '{requests: [{method: "POST", path: "/parse/classes/Glimp", body: {fromUser: $a, toUser: $b, expiresAt: $soon}},
               {method: "POST", path: "/parse/classes/Glimp", body: {fromUser: $a, toUser: $b, expiresAt: $past}}]}')"
expect 200 'length == 2 and all(.[]; .success.objectId)' "Ann asks Bob for a Glimp"
GLIMP=$(val '.[0].success.objectId')

# Bob's pending requests: unanswered and not expired.
find --token "$BOB_T" Glimp "where=$(j --argjson b "$(user "$BOB")" --argjson now "$(date_in 0)" '{toUser: $b, photo: {"$exists": false}, expiresAt: {"$gt": $now}}')" include=fromUser order=expiresAt
expect 200 "[.results[].objectId] == [\"$GLIMP\"] and .results[0].fromUser.username == \"ann-$RUN\"" "Bob's pending Glimp requests"
req --token "$ANN_T" PUT "/classes/Glimp/$GLIMP" '{"photo": {"__type": "File", "name": "x.jpg"}}'
expect 404 '.code == 101' "only the asked friend answers"
PHOTO=$(upload "$BOB_T" glimp.jpg image/jpeg "square jpeg")
req --token "$BOB_T" PUT "/classes/Glimp/$GLIMP" "$(j --argjson f "$PHOTO" '{photo: $f}')"
expect 200 '.updatedAt' "Bob answers with a photo"

# GlimpsCollection: the answered Glimps Ann asked for.
find --token "$ANN_T" Glimp "where=$(j --argjson a "$(user "$ANN")" '{fromUser: $a, photo: {"$exists": true}}')" order=-updatedAt include=toUser
expect 200 '.results | length == 1 and (.[0].photo.url | contains("/files/"))' "Ann's received Glimps"
find --token "$CY_T" Glimp
expect 200 '.results == []' "Cy sees no Glimps"

# changeProfilePicture.
PICTURE=$(upload "$ANN_T" me.jpg image/jpeg "new face")
req --token "$ANN_T" PUT "/users/$ANN" "$(j --argjson f "$PICTURE" '{profilePicture: $f}')"
expect 200 '.updatedAt' "change the profile picture"
echo "glimp: all flows passed"
