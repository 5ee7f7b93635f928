#!/usr/bin/env bash
# The dating app's models (shared/apps/dating-app-models.md) with curl: profiles and prospects nearby, prompts,
# photos, swipes that become a match, friendships, wings, messages and blocks.
# First: parsley schema apply Schemas/dating.json
set -euo pipefail
source "$(dirname "$0")/lib.sh"
need_class Profile dating.json

geo() { j --argjson lat "$1" --argjson lng "$2" '{__type: "GeoPoint", latitude: $lat, longitude: $lng}'; }
signup "ann-$RUN" "$(j --arg e "ann-$RUN@example.com" '{phone: "+1 555 0100", email: $e}')"; ANN=$ID ANN_T=$TOKEN
signup "bob-$RUN" '{"phone": "+1 555 0101"}'; BOB=$ID BOB_T=$TOKEN
signup "cy-$RUN"; CY=$ID CY_T=$TOKEN
for u in "$ANN $ANN_T" "$BOB $BOB_T" "$CY $CY_T"; do make_public $u; done

# Profiles (min_age, max_age and max_distance get their defaults).
profile() { # user token name gender preference lat lng
  j --argjson u "$(user "$1")" --arg n "$3" --argjson g "$4" --argjson p "$5" --argjson lat "$6" --argjson lng "$7" --argjson loc "$(geo "$6" "$7")" \
    '{user_id: $u, name: $n, birthdate: {__type: "Date", iso: "1994-05-01T00:00:00.000Z"}, bio: "hi", gender: $g, preference: $p,
      curr_latitude: $lat, curr_longitude: $lng, location: $loc}'
}
req --token "$ANN_T" POST /classes/Profile "$(profile "$ANN" "$ANN_T" Ann 2 1 40.7128 -74.0060)"
expect 201 '.min_age == 18 and .max_age == 99 and .max_distance == 50' "Ann's profile, with default preferences"
req --token "$BOB_T" POST /classes/Profile "$(profile "$BOB" "$BOB_T" Bob 1 2 40.7306 -73.9352)"
expect 201 '.objectId' "Bob's profile (Brooklyn)"
req --token "$CY_T" POST /classes/Profile "$(profile "$CY" "$CY_T" Cy 1 2 34.0522 -118.2437)"
expect 201 '.objectId' "Cy's profile (Los Angeles)"
req --token "$ANN_T" POST /classes/Profile "$(j --argjson u "$(user "$ANN")" '{user_id: $u, name: "Ann"}')"
expect 400 '.code == 142' "a profile without birthdate, gender and preference is refused"

# Prospects for Ann: men who like women within 50 km, nearest first, with their user; exact coordinates hidden.
# (Limited to this run's users, so the script can run again on the same database.)
find --token "$ANN_T" Profile "where=$(j --argjson b "$(user "$BOB")" --argjson c "$(user "$CY")" --argjson here "$(geo 40.7128 -74.0060)" \
  '{gender: 1, preference: 2, user_id: {"$in": [$b, $c]}, location: {"$nearSphere": $here, "$maxDistanceInKilometers": 50}}')" include=user_id
expect 200 "[.results[].name] == [\"Bob\"] and (.results[0] | has(\"curr_latitude\") | not) and .results[0].user_id.username == \"bob-$RUN\"" "prospects nearby"

# Prompts (master key) and answers; photos.
req --master POST /classes/Prompt '{"prompt_text": "My ideal Sunday"}'
expect 201 '.objectId' "add a prompt (master key)"
PROMPT=$(val .objectId)
req --token "$ANN_T" POST /classes/PromptResponse "$(j --argjson u "$(user "$ANN")" --argjson pr "$(pointer Prompt "$PROMPT")" '{user_id: $u, prompt_id: $pr, response_text: "Bagels"}')"
expect 201 '.objectId' "answer a prompt"
PHOTO=$(upload "$ANN_T" ann.jpg image/jpeg "ann's photo")
req --token "$ANN_T" POST /classes/Photo "$(j --argjson u "$(user "$ANN")" --argjson f "$PHOTO" '{user_id: $u, photo: $f}')"
expect 201 '.index == 0' "add a photo (index defaults to 0)"
req --token "$ANN_T" POST /classes/ProfilePreview "$(j --argjson u "$(user "$ANN")" --argjson f "$PHOTO" --arg n "ann-$RUN" '{user_id: $u, username: $n, name: "Ann", primary_photo: $f}')"
expect 201 '.objectId' "profile preview with the primary photo"
find --token "$BOB_T" PromptResponse "where=$(j --argjson u "$(user "$ANN")" '{user_id: $u}')" include=prompt_id
expect 200 '.results[0].prompt_id.prompt_text == "My ideal Sunday"' "Bob reads Ann's answers with their prompts"

# Swipes: Ann likes Bob, Bob likes her back, sees her like, and makes the match.
req --token "$ANN_T" POST /classes/Swipe "$(j --argjson a "$(user "$ANN")" --argjson b "$(user "$BOB")" '{swiper_id: $a, prospect_id: $b, type: 1}')"
expect 201 '.objectId' "Ann likes Bob"
req --token "$BOB_T" POST /classes/Swipe "$(j --argjson a "$(user "$ANN")" --argjson b "$(user "$BOB")" '{swiper_id: $b, prospect_id: $a, type: 1}')"
expect 201 '.objectId' "Bob likes Ann"
find --token "$BOB_T" Swipe "where=$(j --argjson a "$(user "$ANN")" --argjson b "$(user "$BOB")" '{swiper_id: $a, prospect_id: $b, type: {"$in": [1, 3]}}')"
expect 200 '.results | length == 1' "Bob finds Ann's like"
req --token "$BOB_T" POST /classes/Match "$(j --argjson a "$(user "$ANN")" --argjson b "$(user "$BOB")" '{first_user_id: $a, second_user_id: $b, type: 1}')"
expect 201 '.objectId' "the match"
MATCH=$(val .objectId)
find --token "$CY_T" Match
expect 200 '.results == []' "Cy sees no one's matches"

# Friendship: Ann asks Cy, only Cy can accept.
req --token "$ANN_T" POST /classes/Friendship "$(j --argjson a "$(user "$ANN")" --argjson c "$(user "$CY")" '{requester_id: $a, respondent_id: $c}')"
expect 201 '.status == 1' "friend request (status pending by default)"
FRIEND=$(val .objectId)
req --token "$ANN_T" PUT "/classes/Friendship/$FRIEND" '{"status": 2}'
expect 404 '.code == 101' "the requester cannot accept it"
req --token "$CY_T" PUT "/classes/Friendship/$FRIEND" '{"status": 2}'
expect 200 '.updatedAt' "Cy accepts"

# Wing: Cy sends Bob's profile to Ann; Bob never sees it.
req --token "$CY_T" POST /classes/Wing "$(j --argjson a "$(user "$ANN")" --argjson b "$(user "$BOB")" --argjson c "$(user "$CY")" '{sender_id: $c, recipient_id: $a, prospect_id: $b}')"
expect 201 '.status == 1' "Cy wings Bob to Ann"
find --token "$ANN_T" Wing "where=$(j --argjson a "$(user "$ANN")" '{recipient_id: $a, status: 1}')" include=prospect_id
expect 200 '.results | length == 1' "Ann's pending wings"
find --token "$BOB_T" Wing
expect 200 '.results == []' "the prospect does not see the wing"

# Messages: only the two users read them.
req --token "$ANN_T" POST /classes/Message "$(j --argjson a "$(user "$ANN")" --argjson b "$(user "$BOB")" --argjson t "$(date_in -60)" '{sender_id: $a, recipient_id: $b, content: "Hi Bob", sent_at: $t}')"
expect 201 '.status == 1' "Ann writes to Bob"
req --token "$BOB_T" POST /classes/Message "$(j --argjson a "$(user "$ANN")" --argjson b "$(user "$BOB")" --argjson t "$(date_in 0)" '{sender_id: $b, recipient_id: $a, content: "Hi Ann!", sent_at: $t}')"
expect 201 '.objectId' "Bob answers"
REPLY=$(val .objectId)
find --token "$ANN_T" Message "where=$(j --argjson a "$(user "$ANN")" --argjson b "$(user "$BOB")" '{"$or": [{sender_id: $a, recipient_id: $b}, {sender_id: $b, recipient_id: $a}]}')" order=sent_at
expect 200 '[.results[].content] == ["Hi Bob", "Hi Ann!"]' "the conversation, in order"
req --token "$ANN_T" PUT "/classes/Message/$REPLY" '{"status": 2}'
expect 200 '.updatedAt' "Ann marks Bob's message read"
find --token "$CY_T" Message
expect 200 '.results == []' "Cy reads none of it"

# Block: Ann blocks and reports Cy; Cy cannot see it.
req --token "$ANN_T" POST /classes/Block "$(j --argjson a "$(user "$ANN")" --argjson c "$(user "$CY")" '{blocked_user_id: $c, blocked_by_id: $a, reported: true, issue: 2}')"
expect 201 '.objectId' "Ann blocks Cy"
find --token "$CY_T" Block "where=$(j --argjson c "$(user "$CY")" '{blocked_user_id: $c}')"
expect 200 '.results == []' "the blocked user cannot see the block"
req --token "$ANN_T" DELETE "/classes/Match/$MATCH"
expect 200 '. == {}' "unmatch"
echo "dating: all flows passed"
