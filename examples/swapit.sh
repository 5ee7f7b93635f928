#!/usr/bin/env bash
# SwapIt (shared/apps/swapit.md) with curl: the rate, exchanges near me, messages, the profile and its image.
# First: parsley schema apply Schemas/swapit.json
set -euo pipefail
source "$(dirname "$0")/lib.sh"
need_class Exchange swapit.json

geo() { j --argjson lat "$1" --argjson lng "$2" '{__type: "GeoPoint", latitude: $lat, longitude: $lng}'; }
# Sign up / log in.
signup "ana-$RUN"; ANA=$ID
req --anon GET "/login?username=ana-$RUN&password=pw-ana-$RUN"
expect 200 ".objectId == \"$ANA\"" "log in"
ANA_T=$(val .sessionToken)
signup "ben-$RUN"; BEN=$ID BEN_T=$TOKEN
signup "cat-$RUN"; CAT=$ID CAT_T=$TOKEN
for u in "$ANA $ANA_T" "$BEN $BEN_T" "$CAT $CAT_T"; do make_public $u; done

# Home feed: the latest USD rate (cached from the rates API with the master key; anyone reads it).
req --master POST /classes/CurrencyRate "$(j --argjson d "$(date_in 0)" '{base: "USD", date: $d, rates: {EUR: 0.94, GBP: 0.79}}')"
expect 201 '.objectId' "store today's USD rates (master key)"
find --anon CurrencyRate 'where={"base":"USD"}' order=-date limit=1
expect 200 '.results[0].rates.EUR == 0.94' "the current rate"

# Exchanges: Ana at Times Square wants EUR; Ben nearby and Cat across the river have EUR.
HERE=$(geo 40.7580 -73.9855)
exchange() { # user start end lat lng amount
  j --argjson u "$(user "$1")" --arg s "$2" --arg e "$3" --argjson loc "$(geo "$4" "$5")" --argjson a "$6" --argjson t "$(date_in -60)" \
    '{user: $u, amount: $a, currencyStart: $s, currencyEnd: $e, location: $loc, timeExchange: $t}'
}
req --token "$ANA_T" POST /classes/Exchange "$(exchange "$ANA" USD EUR 40.7580 -73.9855 200)"
expect 201 '.objectId' "Ana offers 200 USD for EUR"
MINE=$(val .objectId)
req --token "$BEN_T" POST /classes/Exchange "$(exchange "$BEN" EUR USD 40.7484 -73.9857 150)"
expect 201 '.objectId' "Ben offers 150 EUR (1 km away)"
NEAR=$(val .objectId)
req --token "$CAT_T" POST /classes/Exchange "$(exchange "$CAT" EUR USD 40.6892 -74.0445 80)"
expect 201 '.objectId' "Cat offers 80 EUR (9 km away)"
ACROSS=$(val .objectId)
req --token "$CAT_T" POST /classes/Exchange "$(exchange "$CAT" EUR USD 48.8566 2.3522 500)"
expect 201 '.objectId' "an offer in Paris"

# SwapIt screen: swappers with EUR near me, nearest first, with their user; the map's box.
# (Limited to this run's users, so the script can run again on the same database.)
THEM=$(j --argjson b "$(user "$BEN")" --argjson c "$(user "$CAT")" '[$b, $c]')
find --token "$ANA_T" Exchange "where=$(j --argjson them "$THEM" --argjson here "$HERE" \
  '{user: {"$in": $them}, currencyStart: "EUR", currencyEnd: "USD", location: {"$nearSphere": $here, "$maxDistanceInKilometers": 15}}')" include=user
expect 200 "[.results[].objectId] == [\"$NEAR\", \"$ACROSS\"] and .results[0].user.username == \"ben-$RUN\"" "exchanges near me, nearest first"
find --token "$ANA_T" Exchange "where=$(j --argjson them "$THEM" --argjson me "$(user "$ANA")" --argjson sw "$(geo 40.70 -74.02)" --argjson ne "$(geo 40.80 -73.90)" \
  '{user: {"$in": ($them + [$me])}, location: {"$within": {"$box": [$sw, $ne]}}}')"
expect 200 "[.results[].objectId] | index(\"$MINE\") and index(\"$NEAR\") and length == 2" "exchanges inside the map"
req --token "$BEN_T" PUT "/classes/Exchange/$MINE" '{"amount": 1}'
expect 404 '.code == 101' "only the owner changes an offer"

# Create Message screen: only the two users read the conversation.
req --token "$ANA_T" POST /classes/ExchangeMessage "$(j --argjson a "$(user "$ANA")" --argjson b "$(user "$BEN")" --argjson t "$(date_in -30)" --argjson x "$(pointer Exchange "$NEAR")" \
  '{sender: $a, recipient: $b, message: "Meet at the corner?", timeSent: $t, exchange: $x}')"
expect 201 '.objectId' "Ana writes to Ben"
req --token "$BEN_T" POST /classes/ExchangeMessage "$(j --argjson a "$(user "$ANA")" --argjson b "$(user "$BEN")" --argjson t "$(date_in 0)" '{sender: $b, recipient: $a, message: "Sure, 5pm", timeSent: $t}')"
expect 201 '.objectId' "Ben answers"
find --token "$BEN_T" ExchangeMessage "where=$(j --argjson b "$(user "$BEN")" '{"$or": [{sender: $b}, {recipient: $b}]}')" order=timeSent include=exchange
expect 200 '[.results[].message] == ["Meet at the corner?", "Sure, 5pm"] and .results[0].exchange.amount == 150' "Ben's conversation"
find --token "$CAT_T" ExchangeMessage
expect 200 '.results == []' "Cat reads none of it"

# Profile screen: me, my offers, and a new profile image.
req --token "$ANA_T" GET /users/me
expect 200 ".username == \"ana-$RUN\"" "the logged-in user"
find --token "$ANA_T" Exchange "where=$(j --argjson me "$(user "$ANA")" '{user: $me}')"
expect 200 ".results | length == 1 and .[0].objectId == \"$MINE\"" "my offers"
IMAGE=$(upload "$ANA_T" avatar.png image/png "png bytes")
req --token "$ANA_T" PUT "/users/$ANA" "$(j --argjson f "$IMAGE" '{profileImage: $f}')"
expect 200 '.updatedAt' "update the profile image"
req --token "$BEN_T" GET "/users/$ANA"
expect 200 '.profileImage.url | contains("/files/")' "others see the new image"
echo "swapit: all flows passed"
