"""GraphQL subscriptions over WebSocket (graphql-transport-ws) through Python's gql, as Apollo Client and urql speak it.

Run by GraphQLClientTests (Swift): python3 gql_subscriptions.py <base URL> <app id> <session token> <other user's id>.
The session's user subscribes to GameScores above 10; REST writes then create a matching score, one below the
threshold, one only the other user may read, and update the matching one. Only the matching, readable events
arrive, with the selection applied. Prints one line per check and exits non-zero on the first failure.
"""
import asyncio
import json
import sys
import urllib.request

from gql import Client, gql
from gql.transport.websockets import WebsocketsTransport

base, app_id, token, other_user = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]


def check(name, condition, detail=""):
    if not condition:
        print(f"FAIL {name}: {detail}")
        sys.exit(1)
    print(f"ok {name}")


def rest(method, path, body=None):
    request = urllib.request.Request(
        base + "/parse" + path, method=method, data=json.dumps(body).encode() if body is not None else None,
        headers={"X-Parse-Application-Id": app_id, "X-Parse-Session-Token": token, "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


async def writes():
    await asyncio.sleep(1.0)
    rest("POST", "/classes/GameScore", {"score": 5, "playerName": "low"})
    rest("POST", "/classes/GameScore", {"score": 50, "playerName": "hidden", "ACL": {other_user: {"read": True, "write": True}}})
    created = rest("POST", "/classes/GameScore", {"score": 20, "playerName": "seen"})
    rest("PUT", "/classes/GameScore/" + created["objectId"], {"score": 30})


async def main():
    transport = WebsocketsTransport(
        url=base.replace("http://", "ws://") + "/graphql", subprotocols=[WebsocketsTransport.GRAPHQLWS_SUBPROTOCOL],
        init_payload={"X-Parse-Application-Id": app_id, "X-Parse-Session-Token": token},
    )
    async with Client(transport=transport, fetch_schema_from_transport=False) as session:
        # A query over the socket answers once.
        health = await session.execute(gql("{ health }"))
        check("a query over the socket", health == {"health": True}, health)
        subscription = gql(
            "subscription Scores($min: Float) { gameScores(where: {score: {greaterThan: $min}}) { event node { objectId score playerName } original { score } } }"
        )
        writer = asyncio.ensure_future(writes())
        seen = []
        async for result in session.subscribe(subscription, variable_values={"min": 10}):
            seen.append(result["gameScores"])
            if len(seen) == 2:
                break
        await writer
        check("create arrives with the selection", seen[0]["event"] == "create" and seen[0]["node"]["playerName"] == "seen", seen)
        check("update carries the original", seen[1]["event"] == "update" and seen[1]["node"]["score"] == 30 and seen[1]["original"]["score"] == 20, seen)
        check("nothing below the threshold or hidden by its ACL", all(s["node"]["playerName"] == "seen" for s in seen), seen)
    print("gql subscriptions: all checks passed")


asyncio.run(asyncio.wait_for(main(), 60))
