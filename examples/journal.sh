#!/usr/bin/env bash
# "How are you?" (shared/apps/journal-how-are-you.md): the networking section in order, with curl.
# First: parsley schema apply Schemas/journal.json
set -euo pipefail
source "$(dirname "$0")/lib.sh"
need_class Entry journal.json

# Questions are reference data, written with the master key.
req --master POST /classes/Question '{"question":"How did you sleep?","answer1":"Well","answer2":"So-so","answer3":"Badly"}'
expect 201 '.objectId' "add a check-in question (master key)"
Q1=$(val .objectId)
req --master POST /classes/Question '{"question":"Did you go outside?","answer1":"Yes","answer2":"A bit","answer3":"No"}'
expect 201 '.objectId' "add another question"
Q2=$(val .objectId)

# Home screen: sign up (PFUser.signUpInBackground), log in (PFUser.logInWithUsername).
NAME="meng-$RUN"
req --anon POST /users "$(j --arg u "$NAME" '{username: $u, password: "calm-pw"}')"
expect 201 '.sessionToken | startswith("r:")' "sign up $NAME"
ME=$(val .objectId)
req --anon POST /login "$(j --arg u "$NAME" '{username: $u, password: "calm-pw"}')"
expect 200 '.sessionToken' "log in"
MY=$(val .sessionToken)
req --token "$MY" GET /users/me
expect 200 ".objectId == \"$ME\"" "stay logged in: /users/me"

# Day Entry screen: create entries; the picture of the day is uploaded first.
PIC=$(upload "$MY" today.jpg image/jpeg "picture of the day")
entry() { # created_at mood question picture
  j --argjson user "$(user "$ME")" --arg iso "$1" --argjson mood "$2" --arg q "$3" --argjson pic "$4" --arg me "$ME" '
    {user: $user, created_at: {__type: "Date", iso: $iso}, mood: $mood,
     thought_today: "thought \($mood)", gratitude_today: "grateful \($mood)", ACL: {($me): {read: true, write: true}}}
    + (if $q == "" then {} else {question_id: {__type: "Pointer", className: "Question", objectId: $q}, answer_index: 1} end)
    + (if $pic == null then {} else {picture_today: $pic} end)'
}
req --token "$MY" POST /classes/Entry "$(entry 2024-03-01T09:00:00.000Z 6 "$Q1" null)"
expect 201 '.objectId' "create entry (mood 6, question 1)"
E1=$(val .objectId)
req --token "$MY" POST /classes/Entry "$(entry 2024-03-02T21:30:00.000Z 8 "$Q2" "$PIC")"
expect 201 '.objectId' "create entry with picture_today (mood 8, question 2)"
req --token "$MY" POST /classes/Entry "$(entry 2024-03-03T08:15:00.000Z 3 "" null)"
expect 201 '.objectId' "create entry (mood 3)"
req --token "$MY" POST /classes/Entry "$(j --argjson u "$(user "$ME")" '{user: $u, created_at: {__type: "Date", iso: "2024-03-04T00:00:00.000Z"}}')"
expect 400 '.code == 142 and .error == "mood is required"' "mood is required"

MINE=$(j --argjson u "$(user "$ME")" '{user: $u}')
# Entry/Home screen: the entries of one day (the doc's `date` key is not a field: a created_at range).
find --token "$MY" Entry "where=$(j --argjson u "$(user "$ME")" '{user: $u, created_at: {"$gte": {__type: "Date", iso: "2024-03-02T00:00:00.000Z"}, "$lt": {__type: "Date", iso: "2024-03-03T00:00:00.000Z"}}}')" order=-created_at
expect 200 '.results | length == 1 and .[0].mood == 8' "entries of 2024-03-02"
# Trends screen: moods, newest first (selectKeys "mood").
find --token "$MY" Entry "where=$MINE" keys=mood order=-created_at
expect 200 '[.results[].mood] == [3, 8, 6] and (.results[0] | has("thought_today") | not)' "moods for the trends"
# Calendar screen: moods and dates.
find --token "$MY" Entry "where=$MINE" keys=mood,created_at order=-created_at
expect 200 '.results[0].created_at.iso == "2024-03-03T08:15:00.000Z"' "moods and dates for the calendar"
# Thought and gratitude diaries (the fields are thought_today and gratitude_today).
find --token "$MY" Entry "where=$MINE" keys=thought_today,created_at order=-created_at
expect 200 '[.results[].thought_today] == ["thought 3", "thought 8", "thought 6"]' "thought diary"
find --token "$MY" Entry "where=$MINE" keys=gratitude_today,created_at order=-created_at
expect 200 '.results[0].gratitude_today == "grateful 3"' "gratitude diary"
# Photo diary.
find --token "$MY" Entry "where=$(j --argjson u "$(user "$ME")" '{user: $u, picture_today: {"$exists": true}}')" keys=picture_today
expect 200 '.results | length == 1 and (.[0].picture_today.url | contains("/files/"))' "photo diary"
# Question diary: question_id and answer_index, then the Question lookup (by id, or in one call with include).
find --token "$MY" Entry "where=$(j --argjson u "$(user "$ME")" '{user: $u, question_id: {"$exists": true}}')" keys=question_id,answer_index,created_at order=-created_at
expect 200 ".results | length == 2 and .[0].question_id.objectId == \"$Q2\"" "check-in log"
find --token "$MY" Question "where=$(j --arg q "$Q2" '{objectId: $q}')"
expect 200 '.results[0].answer2 == "A bit"' "look the question up"
find --token "$MY" Entry "where=$MINE" keys=question_id,answer_index,created_at include=question_id order=-created_at
expect 200 '.results[1].question_id.question == "Did you go outside?"' "the same with include=question_id"

# Privacy: another user sees none of these entries.
signup "ruifan-$RUN"
OTHER=$TOKEN
find --token "$OTHER" Entry "where=$MINE"
expect 200 '.results == []' "another user reads none of my entries"
req --token "$OTHER" GET "/classes/Entry/$E1"
expect 404 '.code == 101' "nor one by its id"
req --token "$OTHER" PUT "/classes/Entry/$E1" '{"mood": 1}'
expect 404 '.code == 101' "nor changes it"

# Log out.
req --token "$MY" POST /logout
expect 200 '. == {}' "log out"
echo "journal: all flows passed"
