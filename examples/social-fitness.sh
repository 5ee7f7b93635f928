#!/usr/bin/env bash
# Social Fitness (shared/apps/social-fitness.md) with curl: workouts, likes, challenges with deadlines, friends.
# First: parsley schema apply Schemas/social-fitness.json
set -euo pipefail
source "$(dirname "$0")/lib.sh"
need_class Challenge social-fitness.json

signup "dee-$RUN" '{"first_name": "Dee", "last_name": "Runner"}'; DEE=$ID DEE_T=$TOKEN
signup "eli-$RUN" '{"first_name": "Eli", "last_name": "Lifter"}'; ELI=$ID ELI_T=$TOKEN
signup "fay-$RUN"; FAY=$ID FAY_T=$TOKEN
for u in "$DEE $DEE_T" "$ELI $ELI_T" "$FAY $FAY_T"; do make_public $u; done

# Categories (master key): find or create each.
category() {
  find --master Category "where=$(j --arg n "$1" '{Name: $n}')"
  if [[ "$(val '.results | length')" == 0 ]]; then
    req --master POST /classes/Category "$(j --arg n "$1" '{Name: $n}')"
    expect 201 '.objectId' "category $1 (master key)" >&2
    val .objectId
  else
    val '.results[0].objectId'
  fi
}
ENDURANCE=$(category endurance)
STRENGTH=$(category strength)

# Create Post screen: workouts, one with a photo; likes start empty.
IMAGE=$(upload "$DEE_T" run.jpg image/jpeg "running shoes")
req --token "$DEE_T" POST /classes/Post "$(j --argjson a "$(user "$DEE")" --argjson t "$(pointer Category "$ENDURANCE")" --argjson f "$IMAGE" \
  '{author: $a, type: $t, image: $f, caption: "Morning 10k", description: "Easy pace", time: 52, difficulty: 3}')"
expect 201 '.likes == []' "Dee posts a run"
RUN_POST=$(val .objectId)
req --token "$ELI_T" POST /classes/Post "$(j --argjson a "$(user "$ELI")" --argjson t "$(pointer Category "$STRENGTH")" '{author: $a, type: $t, caption: "Squats", difficulty: 4}')"
expect 201 '.objectId' "Eli posts squats"
SQUATS=$(val .objectId)

# Search screen: workouts of a type, by pointer and by category name ($inQuery).
find --token "$FAY_T" Post "where=$(j --argjson t "$(pointer Category "$STRENGTH")" --argjson a "$(user "$ELI")" '{type: $t, author: $a}')"
expect 200 "[.results[].objectId] == [\"$SQUATS\"]" "strength workouts"
find --token "$FAY_T" Post "where=$(j --argjson a "$(user "$DEE")" '{author: $a, type: {"$inQuery": {className: "Category", where: {Name: "endurance"}}}}')" include=type,author
expect 200 ".results[0].objectId == \"$RUN_POST\" and .results[0].type.Name == \"endurance\" and .results[0].author.first_name == \"Dee\"" "endurance workouts by category name"

# Likes: AddUnique to like, Remove to delete the like.
req --token "$ELI_T" PUT "/classes/Post/$RUN_POST" "$(j --argjson e "$(user "$ELI")" '{likes: {__op: "AddUnique", objects: [$e]}}')"
expect 200 ".likes | length == 1 and .[0].objectId == \"$ELI\"" "Eli likes the run"
find --token "$ELI_T" Post "where=$(j --argjson e "$(user "$ELI")" '{likes: $e}')"
expect 200 "[.results[].objectId] == [\"$RUN_POST\"]" "posts Eli likes"
req --token "$ELI_T" PUT "/classes/Post/$RUN_POST" "$(j --argjson e "$(user "$ELI")" '{likes: {__op: "Remove", objects: [$e]}}')"
expect 200 '.likes == []' "Eli deletes his like"
req --token "$ELI_T" DELETE "/classes/Post/$RUN_POST"
expect 404 '.code == 101' "only the author deletes a post"

# Post Detail screen: challenge a friend with a deadline; start and complete it.
req --token "$DEE_T" POST /classes/Challenge "$(j --argjson o "$(user "$DEE")" --argjson r "$(user "$ELI")" --argjson w "$(pointer Post "$RUN_POST")" --argjson d "$(date_in 86400)" \
  '{owner_id: $o, recipient_id: $r, workout_id: $w, deadline: $d}')"
expect 201 '.objectId' "Dee challenges Eli (due in a day)"
CHALLENGE=$(val .objectId)
# Home feed: my open challenges, soonest first, with the workout, its type and the owner.
find --token "$ELI_T" Challenge "where=$(j --argjson r "$(user "$ELI")" --argjson now "$(date_in 0)" '{recipient_id: $r, completed: {"$exists": false}, deadline: {"$gt": $now}}')" \
  order=deadline include=workout_id,workout_id.type,owner_id
expect 200 "[.results[].objectId] == [\"$CHALLENGE\"] and .results[0].workout_id.type.Name == \"endurance\"" "Eli's open challenges"
find --token "$FAY_T" Challenge
expect 200 '.results == []' "Fay sees no one else's challenges"
req --token "$ELI_T" PUT "/classes/Challenge/$CHALLENGE" "$(j --argjson t "$(date_in 0)" '{started: $t}')"
expect 200 '.updatedAt' "start the challenge"
req --token "$ELI_T" PUT "/classes/Challenge/$CHALLENGE" "$(j --argjson t "$(date_in 0)" '{completed: $t, time: 49}')"
expect 200 '.updatedAt' "complete it"

# Profile screen: me, completed challenges, friends, my posts, the profile image.
req --token "$ELI_T" GET /users/me
expect 200 '.last_name == "Lifter"' "the logged-in user"
find --token "$ELI_T" Challenge "where=$(j --argjson r "$(user "$ELI")" '{recipient_id: $r, completed: {"$exists": true}}')"
expect 200 "[.results[].objectId] == [\"$CHALLENGE\"]" "completed challenges"
req --token "$DEE_T" PUT "/users/$DEE" "$(j --argjson e "$(user "$ELI")" '{friends: {__op: "AddUnique", objects: [$e]}}')"
expect 200 '.updatedAt' "Dee adds Eli as a friend"
find --token "$ELI_T" _User "where=$(j --argjson e "$(user "$ELI")" '{friends: $e}')" keys=username,first_name
expect 200 "[.results[].username] == [\"dee-$RUN\"]" "users who are friends with Eli"
find --token "$DEE_T" Post "where=$(j --argjson a "$(user "$DEE")" '{author: $a}')" order=-createdAt
expect 200 "[.results[].objectId] == [\"$RUN_POST\"]" "Dee's posts, newest first"
AVATAR=$(upload "$ELI_T" eli.png image/png "eli face")
req --token "$ELI_T" PUT "/users/$ELI" "$(j --argjson f "$AVATAR" '{image: $f}')"
expect 200 '.updatedAt' "update the profile image"
echo "social-fitness: all flows passed"
