"""Parsley's GraphQL API through a real GraphQL client: Python's `gql` (graphql-core underneath).

Run by GraphQLClientTests (Swift) against a test server: python3 gql_client.py <base URL> <app id> <master key>.
With the master key, gql fetches the schema by introspection and validates every document against it before sending,
as typed clients do; without it, the documents go out as they are. Prints one line per check and exits non-zero on
the first failure.
"""
import sys

from gql import Client, gql
from gql.transport.exceptions import TransportQueryError, TransportServerError
from gql.transport.requests import RequestsHTTPTransport

base, app_id, master_key = sys.argv[1], sys.argv[2], sys.argv[3]


def client(master=False, token=None, schema=False):
    headers = {"X-Parse-Application-Id": app_id}
    if master:
        headers["X-Parse-Master-Key"] = master_key
    if token:
        headers["X-Parse-Session-Token"] = token
    transport = RequestsHTTPTransport(url=base + "/graphql", headers=headers, timeout=30)
    return Client(transport=transport, fetch_schema_from_transport=schema)


def check(name, condition, detail=""):
    if not condition:
        print(f"FAIL {name}: {detail}")
        sys.exit(1)
    print(f"ok {name}")


# The schema introspects (master key) and is valid for graphql-core; the documents below validate against it.
typed = client(master=True, schema=True)
with typed as session:
    check("schema fetched and built", typed.schema is not None and typed.schema.get_type("GameScore") is not None)
    created = session.execute(
        gql("mutation Create($fields: CreateGameScoreFieldsInput) { createGameScore(input: {fields: $fields}) { gameScore { id objectId score playerName } } }"),
        variable_values={"fields": {"score": 42, "playerName": "gql"}},
    )
    score = created["createGameScore"]["gameScore"]
    check("create", score["score"] == 42 and score["playerName"] == "gql", created)
    found = session.execute(
        gql("query Find($min: Float) { gameScores(where: {score: {greaterThan: $min}}, order: [score_DESC], first: 5) { count edges { node { objectId score } } } }"),
        variable_values={"min": 10},
    )
    check("find with variables", found["gameScores"]["count"] == 1 and found["gameScores"]["edges"][0]["node"]["score"] == 42, found)
    got = session.execute(gql("query Get($id: ID!) { node(id: $id) { id ... on GameScore { playerName } } }"), variable_values={"id": score["id"]})
    check("node by global id", got["node"]["playerName"] == "gql", got)
    updated = session.execute(
        gql("mutation Update($id: ID!) { updateGameScore(input: {id: $id, fields: {score: 43}}) { gameScore { score } } }"),
        variable_values={"id": score["objectId"]},
    )
    check("update", updated["updateGameScore"]["gameScore"]["score"] == 43, updated)
    try:
        session.execute(gql("{ gameScores { edges { node { nope } } } }"))
        check("a document the schema refuses is refused by the client", False, "no error")
    except Exception as error:  # graphql-core's validation, before anything is sent
        check("a document the schema refuses is refused by the client", "nope" in str(error), str(error))

# Parse Dashboard's GraphQL console (GraphiQL) asks for everything an introspection can ask for, with the master key.
from graphql import build_client_schema, get_introspection_query

with client(master=True) as session:
    full = session.execute(
        gql(
            get_introspection_query(
                descriptions=True, specified_by_url=True, directive_is_repeatable=True, schema_description=True, input_value_deprecation=True
            )
        )
    )
    console_schema = build_client_schema(full)
    check("the console's full introspection builds a schema", console_schema.get_type("GameScoreConnection") is not None)

# Without the master key: no introspection, Parse errors with numeric codes.
plain = client()
with plain as session:
    try:
        session.execute(gql('{ gameScore(id: "doesNotExist") { id } }'))
        check("a missing object is an error", False, "no error")
    except TransportQueryError as error:
        check("a missing object is 101", error.errors[0]["extensions"]["code"] == 101, error.errors)
    try:
        session.execute(gql("{ __schema { types { name } } }"))
        check("introspection refused", False, "no error")
    except (TransportQueryError, TransportServerError) as error:
        check("introspection refused", "403" in str(error) or "Introspection is not allowed" in str(error), str(error))
    deleted = session.execute(
        gql("mutation Delete($id: ID!) { deleteGameScore(input: {id: $id}) { gameScore { objectId } } }"), variable_values={"id": score["id"]}
    )
    check("delete", deleted["deleteGameScore"]["gameScore"]["objectId"] == score["objectId"], deleted)
    left = session.execute(gql("{ gameScores { count } }"))
    check("nothing left", left["gameScores"]["count"] == 0, left)
print("gql client: all checks passed")
