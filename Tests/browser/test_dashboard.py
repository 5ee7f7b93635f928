"""The embedded dashboard as a person uses it, in headless Chromium; every change is checked through the REST API."""
import time
import urllib.error
import urllib.parse
import urllib.request

from selenium.common.exceptions import NoAlertPresentException, StaleElementReferenceException
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

from conftest import APP_ID, MASTER_KEY, READ_ONLY_KEY

TYPES = ["String", "Number", "Boolean", "Date", "Object", "Array", "Pointer", "Relation", "File", "GeoPoint", "Polygon", "Bytes"]


def wait_for(check, timeout=10, message="condition"):
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        try:
            value = check()
            if value:
                return value
        except (StaleElementReferenceException, IndexError, KeyError, AttributeError) as error:
            last = error
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {message} ({last})")


def css(driver, selector):
    return driver.find_elements(By.CSS_SELECTOR, selector)


def sign_in(driver, server, key=MASTER_KEY):
    driver.get(server.url + "/dashboard")
    field = wait_for(lambda: css(driver, "#master-key")[0], message="sign-in form")
    field.send_keys(key)
    css(driver, "form.signin button[type=submit]")[0].click()
    wait_for(lambda: css(driver, "header .links"), message="signed in")


def open_class(driver, server, name):
    driver.get(server.url + f"/dashboard#/browser/{name}")
    wait_for(lambda: css(driver, ".toolbar h2")[0].text == name, message=f"class {name}")
    wait_for(lambda: css(driver, ".total")[0].text.endswith(("object", "objects")), message="count")
    settled(driver)


def rows(driver):
    return css(driver, "table.data tbody tr")


def cell(driver, object_id, column):
    return css(driver, f'tr[data-id="{object_id}"] td[data-column="{column}"]')[0]


def settled(driver):
    """Waits until no part of the page is loading (a table being drawn again, a list reloading)."""
    wait_for(lambda: not css(driver, '[aria-busy="true"]'), message="page settled")


def edit_cell(driver, object_id, column):
    # The table may be drawn again between finding a cell and double-clicking it (a reload after a save): retry.
    for _ in range(30):
        settled(driver)
        try:
            ActionChains(driver).double_click(wait_for(lambda: cell(driver, object_id, column), message=f"cell {column}")).perform()
            return wait_for(lambda: css(driver, "dialog.editor[open]")[0], timeout=2, message="editor")
        except (StaleElementReferenceException, AssertionError):
            time.sleep(0.1)
    raise AssertionError(f"could not open the editor of {column}")


def save_dialog(driver, dialog):
    [b for b in dialog.find_elements(By.TAG_NAME, "button") if b.text == "Save"][0].click()
    wait_for(lambda: not css(driver, "dialog.editor[open]"), message="editor closed")
    settled(driver)


def set_value(driver, element, value):
    driver.execute_script("arguments[0].value = arguments[1]; arguments[0].dispatchEvent(new Event('input'))", element, value)


def test_sign_in_and_out(server, browser):
    browser.get(server.url + "/dashboard")
    wait_for(lambda: css(browser, "#master-key"))
    css(browser, "#master-key")[0].send_keys("wrong-key")
    css(browser, "form.signin button[type=submit]")[0].click()
    assert "unauthorized" in wait_for(lambda: css(browser, ".error")[0].text, message="error shown")
    sign_in(browser, server)
    # The session is a cookie the page cannot read, and nothing is kept in localStorage.
    assert browser.execute_script("return document.cookie") == ""
    assert browser.execute_script("return localStorage.length") == 0
    browser.refresh()
    wait_for(lambda: css(browser, "header .links"), message="still signed in after a reload")
    [b for b in css(browser, "header button") if b.text == "Sign out"][0].click()
    wait_for(lambda: css(browser, "#master-key"), message="signed out")


def test_schema_rows_and_editors(server, browser, tmp_path):
    user = server.rest("POST", "/users", {"username": "ann", "password": "ann-password"})
    sign_in(browser, server)
    # Create a class and a column of every type.
    browser.get(server.url + "/dashboard#/schema")
    wait_for(lambda: css(browser, "form.add-class input"))
    css(browser, "form.add-class input")[0].send_keys("Thing")
    css(browser, "form.add-class button")[0].click()
    wait_for(lambda: css(browser, 'section[data-class-name="Thing"]'), message="class card")
    for type_name in TYPES:
        column = "f" + type_name.lower()
        settled(browser)
        card = wait_for(lambda: css(browser, 'section[data-class-name="Thing"]')[0])
        card.find_element(By.CSS_SELECTOR, 'input[aria-label="column name"]').send_keys(column)
        Select(card.find_element(By.CSS_SELECTOR, 'select[aria-label="column type"]')).select_by_value(type_name)
        if type_name in ("Pointer", "Relation"):
            card = css(browser, 'section[data-class-name="Thing"]')[0]
            card.find_element(By.CSS_SELECTOR, 'input[aria-label="target class"]').send_keys("_User")
        card.find_element(By.CSS_SELECTOR, "form.add-column button[type=submit]").click()
        wait_for(lambda: column in server.rest("GET", "/schemas/Thing")["fields"], message=f"column {column}")
        # The page shows it (its list was drawn again).
        wait_for(lambda: column in [td.text for td in css(browser, 'section[data-class-name="Thing"] table.fields td:first-child')],
                 message=f"column {column} shown")
    fields = server.rest("GET", "/schemas/Thing")["fields"]
    for type_name in TYPES:
        assert fields["f" + type_name.lower()]["type"] == type_name
    assert fields["fpointer"]["targetClass"] == "_User"
    assert fields["frelation"]["targetClass"] == "_User"

    # Class-level permissions and protected fields, with the form.
    settled(browser)
    card = css(browser, 'section[data-class-name="Thing"]')[0]
    [s for s in card.find_elements(By.TAG_NAME, "summary") if "permissions" in s.text][0].click()
    card.find_element(By.CSS_SELECTOR, 'input[aria-label="create public"]').click()  # public create off
    card.find_element(By.CSS_SELECTOR, 'input[aria-label="create users and roles"]').send_keys("role:Editors")
    card.find_element(By.CSS_SELECTOR, 'input[aria-label="new protected-fields scope"]').send_keys("*")
    [b for b in card.find_elements(By.TAG_NAME, "button") if b.text == "Add scope"][0].click()
    card.find_element(By.CSS_SELECTOR, 'input[aria-label="protected fields for *"]').send_keys("fstring, fnumber")
    [b for b in card.find_elements(By.TAG_NAME, "button") if b.text == "Save permissions"][0].click()
    settled(browser)
    clp = wait_for(lambda: (lambda c: c if c["create"] == {"role:Editors": True} else None)(
        server.rest("GET", "/schemas/Thing")["classLevelPermissions"]), message="CLP saved")
    assert clp["protectedFields"] == {"*": ["fstring", "fnumber"]}
    assert clp["find"] == {"*": True}

    # Add rows.
    open_class(browser, server, "Thing")
    for expected in (1, 2, 3):
        [b for b in css(browser, ".toolbar button") if b.text == "Add row"][0].click()
        wait_for(lambda: server.rest("GET", "/classes/Thing?count=1&limit=0")["count"] == expected, message=f"{expected} rows")
    wait_for(lambda: len(rows(browser)) == 3, message="three rows shown")
    ids = [r["objectId"] for r in server.rest("GET", "/classes/Thing?order=createdAt")["results"]]

    # A string, a number, a date, a pointer, an ACL, an object and a file, each through its editor.
    dialog = edit_cell(browser, ids[0], "fstring")
    dialog.find_element(By.TAG_NAME, "textarea").send_keys("hello")
    save_dialog(browser, dialog)
    for object_id, n in zip(ids, (5, 1, 3)):
        dialog = edit_cell(browser, object_id, "fnumber")
        dialog.find_element(By.CSS_SELECTOR, "input[type=number]").send_keys(str(n))
        save_dialog(browser, dialog)
    dialog = edit_cell(browser, ids[0], "fdate")
    set_value(browser, dialog.find_element(By.CSS_SELECTOR, "input[type=datetime-local]"), "2024-05-01T10:30:00.000")
    save_dialog(browser, dialog)
    dialog = edit_cell(browser, ids[0], "fpointer")
    dialog.find_element(By.CSS_SELECTOR, "input").send_keys(user["objectId"])
    save_dialog(browser, dialog)
    dialog = edit_cell(browser, ids[0], "ACL")
    for principal in ("*", user["objectId"]):
        dialog.find_element(By.CSS_SELECTOR, 'input[aria-label="user objectId or role:Name"]').send_keys(principal)
        [b for b in dialog.find_elements(By.TAG_NAME, "button") if b.text == "Add"][0].click()
    dialog.find_element(By.CSS_SELECTOR, f'input[aria-label="{user["objectId"]} write"]').click()
    save_dialog(browser, dialog)
    dialog = edit_cell(browser, ids[0], "fobject")
    set_value(browser, dialog.find_element(By.TAG_NAME, "textarea"), '{"nested": [1, 2]}')
    save_dialog(browser, dialog)
    picture = tmp_path / "pixel.png"
    picture.write_bytes(bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360f8cf00000301010018dd8db40000000049454e44ae426082"))
    dialog = edit_cell(browser, ids[0], "ffile")
    dialog.find_element(By.CSS_SELECTOR, "input[type=file]").send_keys(str(picture))
    save_dialog(browser, dialog)

    stored = server.rest("GET", f"/classes/Thing/{ids[0]}")
    assert stored["fstring"] == "hello"
    assert stored["fnumber"] == 5
    assert stored["fdate"] == {"__type": "Date", "iso": "2024-05-01T10:30:00.000Z"}
    assert stored["fpointer"] == {"__type": "Pointer", "className": "_User", "objectId": user["objectId"]}
    assert stored["ACL"] == {"*": {"read": True}, user["objectId"]: {"read": True, "write": True}}
    assert stored["fobject"] == {"nested": [1, 2]}
    assert stored["ffile"]["__type"] == "File" and stored["ffile"]["name"].endswith("pixel.png")

    # A bad JSON value is refused in the editor with Parse's code, and nothing is stored.
    dialog = edit_cell(browser, ids[1], "farray")
    set_value(browser, dialog.find_element(By.TAG_NAME, "textarea"), "[1, 2")
    [b for b in dialog.find_elements(By.TAG_NAME, "button") if b.text == "Save"][0].click()
    assert wait_for(lambda: dialog.find_element(By.CSS_SELECTOR, ".error").text).startswith("107:")
    [b for b in dialog.find_elements(By.TAG_NAME, "button") if b.text == "Cancel"][0].click()
    assert "farray" not in server.rest("GET", f"/classes/Thing/{ids[1]}")

    # Filter (fnumber > 2) and sort (by fnumber, both ways).
    open_class(browser, server, "Thing")
    Select(css(browser, 'select[aria-label="filter field"]')[0]).select_by_value("fnumber")
    Select(css(browser, 'select[aria-label="filter operator"]')[0]).select_by_value("gt")
    css(browser, 'input[aria-label="filter value"]')[0].send_keys("2")
    css(browser, "form.filter button")[0].click()
    wait_for(lambda: len(rows(browser)) == 2 and "fnumber" in css(browser, ".chip")[0].text, message="filtered")
    header = lambda: [b for b in css(browser, "th button") if b.text.startswith("fnumber")][0]
    header().click()
    wait_for(lambda: [cell(browser, i, "fnumber").text for i in (ids[2], ids[0])] and
             [r.get_attribute("data-id") for r in rows(browser)] == [ids[2], ids[0]], message="ascending")
    header().click()
    wait_for(lambda: [r.get_attribute("data-id") for r in rows(browser)] == [ids[0], ids[2]], message="descending")

    # Delete one row (confirmed), then nothing else goes.
    [b for b in css(browser, f'tr[data-id="{ids[2]}"] button') if b.text == "Delete"][0].click()
    browser.switch_to.alert.accept()
    wait_for(lambda: server.rest("GET", "/classes/Thing?count=1&limit=0")["count"] == 2, message="deleted")
    assert server.rest("GET", f"/classes/Thing/{ids[2]}")["code"] == 101
    # Keyboard: Enter on a focused cell opens its editor; Escape closes it.
    open_class(browser, server, "Thing")
    cell(browser, ids[0], "fstring").send_keys(Keys.ENTER)
    wait_for(lambda: css(browser, "dialog.editor[open]"), message="editor from the keyboard")


def test_data_is_shown_as_text(server, browser):
    payload = '<img src=x onerror="window.__xss=1"><script>window.__xss=2</script>'
    server.rest("POST", "/classes/Post", {"title": payload, "link": "javascript:window.__xss=3", "meta": {"html": payload}})
    sign_in(browser, server)
    open_class(browser, server, "Post")
    assert wait_for(lambda: [c.text for c in css(browser, 'td[data-column="title"]')])[0] == payload
    assert not css(browser, "table.data img")
    assert browser.execute_script("return window.__xss") is None
    try:
        browser.switch_to.alert
        raise AssertionError("an alert was opened")
    except NoAlertPresentException:
        pass


def test_read_only_key(server, browser):
    server.rest("POST", "/classes/Post", {"title": "kept"})
    sign_in(browser, server, READ_ONLY_KEY)
    wait_for(lambda: css(browser, "header .badge")[0].text == "read-only")
    open_class(browser, server, "Post")
    assert not [b for b in css(browser, ".toolbar button") if b.text in ("Add row", "Delete selected")]
    assert not [b for b in css(browser, "td.actions button")]
    # Export is reading: offered; import is writing: not offered (and refused by the server: DashboardOperationsTests).
    assert [b for b in css(browser, ".transfer button") if b.text == "Export"]
    assert not css(browser, 'input[aria-label="file to import"]')
    # Whatever the page is made to send, the server refuses writes with this session.
    browser.get(server.url + "/dashboard#/console")
    Select(wait_for(lambda: css(browser, 'select[aria-label="method"]')[0])).select_by_visible_text("POST")
    path = css(browser, 'input[aria-label="path"]')[0]
    path.clear()
    path.send_keys("/classes/Post")
    css(browser, 'textarea[aria-label="body"]')[0].send_keys('{"title": "sneaky"}')
    css(browser, "form.console button[type=submit]")[0].click()
    answer = wait_for(lambda: css(browser, "pre.answer")[0].text, message="answer")
    assert answer.startswith("400") and '"code": 119' in answer
    assert server.rest("GET", "/classes/Post?count=1&limit=0")["count"] == 1


def test_config_and_console(server, browser):
    sign_in(browser, server)
    browser.get(server.url + "/dashboard#/config")
    wait_for(lambda: css(browser, 'input[aria-label="parameter name"]'))
    css(browser, 'input[aria-label="parameter name"]')[0].send_keys("greeting")
    css(browser, 'textarea[aria-label="text"]')[0].send_keys("hello")
    [b for b in css(browser, "button") if b.text == "Add parameter"][0].click()
    wait_for(lambda: server.rest("GET", "/config")["params"].get("greeting") == "hello", message="config saved")
    browser.get(server.url + "/dashboard#/console")
    path = wait_for(lambda: css(browser, 'input[aria-label="path"]')[0])
    path.clear()
    path.send_keys("/config")
    css(browser, "form.console button[type=submit]")[0].click()
    answer = wait_for(lambda: css(browser, "pre.answer")[0].text, message="answer")
    assert answer.startswith("200") and '"greeting": "hello"' in answer


def test_graphql_console(server, browser):
    server.rest("POST", "/classes/Memo", {"title": "from rest"})
    sign_in(browser, server)
    browser.get(server.url + "/dashboard#/graphql")
    query = wait_for(lambda: css(browser, 'textarea[aria-label="query"]')[0])
    query.clear()
    query.send_keys("query Memos($t: String) { memos(where: {title: {equalTo: $t}}) { count edges { node { title } } } __schema { queryType { name } } }")
    css(browser, 'textarea[aria-label="variables"]')[0].send_keys('{"t": "from rest"}')
    css(browser, "form.graphql button[type=submit]")[0].click()
    answer = wait_for(lambda: css(browser, "pre.answer")[0].text, message="answer")
    # The dashboard's session has the master key's rights: introspection included.
    assert answer.startswith("200") and '"title": "from rest"' in answer and '"name": "Query"' in answer, answer


def click(driver, text, scope="button"):
    wait_for(lambda: [b for b in css(driver, scope) if b.text == text][0], message=f"button {text}").click()


def test_users_roles_and_sessions(server, browser):
    ann = server.rest("POST", "/users", {"username": "ann", "password": "first-password", "email": "ann@example.com"})
    sign_in(browser, server)
    browser.get(server.url + "/dashboard#/users")
    card = lambda: css(browser, f'section[data-user-id="{ann["objectId"]}"]')[0]
    wait_for(lambda: "Revoke" in card().text, message="ann's session listed")
    card().find_element(By.CSS_SELECTOR, "input[type=password]").send_keys("second-password")
    [b for b in card().find_elements(By.TAG_NAME, "button") if b.text == "Set password"][0].click()
    wait_for(lambda: "Password changed" in card().text, message="password changed")
    login = server.rest("GET", "/login?username=ann&password=second-password")
    assert login.get("sessionToken"), login
    # The new session shows up; revoking it ends it.
    browser.refresh()
    wait_for(lambda: "Revoke" in card().text, message="new session listed")
    [b for b in card().find_elements(By.TAG_NAME, "button") if b.text == "Revoke"][0].click()
    wait_for(lambda: server.rest("GET", "/sessions")["results"] == [], message="session revoked")

    browser.get(server.url + "/dashboard#/roles")
    wait_for(lambda: css(browser, 'input[aria-label="new role name"]'))
    css(browser, 'input[aria-label="new role name"]')[0].send_keys("Editors")
    click(browser, "Create role")
    role = lambda: css(browser, 'section[data-role="Editors"]')[0]
    wait_for(role, message="role card")
    role().find_element(By.CSS_SELECTOR, "input").send_keys(ann["objectId"])
    [b for b in role().find_elements(By.TAG_NAME, "button") if b.text == "Add user"][0].click()
    wait_for(lambda: ann["objectId"] in role().text, message="member shown")
    editors = server.rest("GET", "/roles?where=" + urllib.parse.quote('{"name":"Editors"}'))["results"][0]
    members = server.rest("GET", "/users?where=" + urllib.parse.quote(
        '{"$relatedTo":{"object":{"__type":"Pointer","className":"_Role","objectId":"%s"},"key":"users"}}' % editors["objectId"]))
    assert [u["objectId"] for u in members["results"]] == [ann["objectId"]]


def test_cloud_push_logs_and_health(server, browser):
    sign_in(browser, server)
    # Functions: the answer is shown (no cloud code here: Parse's 141).
    browser.get(server.url + "/dashboard#/functions")
    wait_for(lambda: css(browser, 'input[aria-label="function name"]'))[0].send_keys("hello")
    click(browser, "Run")
    assert wait_for(lambda: css(browser, ".error")[0].text).startswith("141:")
    # Jobs: none registered.
    browser.get(server.url + "/dashboard#/jobs")
    wait_for(lambda: "No jobs are registered." in browser.page_source, message="jobs page")
    # Webhooks: add a function webhook and delete it.
    browser.get(server.url + "/dashboard#/webhooks")
    wait_for(lambda: css(browser, 'input[aria-label="function or class name"]'))[0].send_keys("remote")
    css(browser, 'input[aria-label="webhook URL"]')[0].send_keys("https://example.com/remote")
    click(browser, "Add webhook")
    wait_for(lambda: [h["functionName"] for h in server.rest("GET", "/hooks/functions")] == ["remote"], message="webhook stored")
    click(browser, "Delete")
    wait_for(lambda: server.rest("GET", "/hooks/functions") == [], message="webhook deleted")
    # Push: the payload is previewed with its audience; without a provider the server answers 115.
    server.rest("POST", "/installations", {"deviceType": "ios", "deviceToken": "ab" * 32, "channels": ["news"], "installationId": "i-1"})
    browser.get(server.url + "/dashboard#/push")
    wait_for(lambda: css(browser, 'input[aria-label="channels"]'))[0].send_keys("news")
    css(browser, 'input[aria-label="alert"]')[0].send_keys("Hello <b>world</b>")
    wait_for(lambda: '"alert": "Hello <b>world</b>"' in css(browser, 'pre[aria-label="payload"]')[0].text, message="preview")
    wait_for(lambda: "1 installation in this audience" in browser.page_source, message="audience count")
    click(browser, "Send push")
    assert wait_for(lambda: css(browser, ".error")[0].text).startswith("115:")
    # Logs and health.
    browser.get(server.url + "/dashboard#/logs")
    wait_for(lambda: [c for c in css(browser, 'table.logs td[data-column="message"]') if "parsley serving" in c.text], message="log lines")
    browser.get(server.url + "/dashboard#/health")
    wait_for(lambda: "SQLite, answering" in css(browser, 'tr[data-figure="database"] td')[0].text, message="health")


def request_with_id(server, path, request_id):
    request = urllib.request.Request(server.url + "/parse" + path, headers={
        "X-Parse-Application-Id": APP_ID, "X-Parse-Master-Key": MASTER_KEY, "X-Request-Id": request_id})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def console_errors(driver):
    """Errors in the console since the last call (the sign-in page's 401 for the session it does not have yet is
    drained by calling this once after signing in)."""
    return [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def test_health_charts(server, browser):
    server.rest("POST", "/classes/Post", {"title": "counted"})
    assert request_with_id(server, "/classes/Post/missing", "chart-404") == 404
    time.sleep(1.5)  # a sampled second or two
    sign_in(browser, server)
    console_errors(browser)
    browser.get(server.url + "/dashboard#/health")
    wait_for(lambda: "SQLite, answering" in css(browser, 'tr[data-figure="database"] td')[0].text, message="figures")
    for chart in ["requests", "latency", "errors", "writes", "pool", "livequery", "push"]:
        wait_for(lambda: css(browser, f'figure[data-chart="{chart}"] svg.chart polyline'), message=f"chart {chart}")
    assert wait_for(lambda: css(browser, 'figure[data-chart="requests"] .readout')[0].text).startswith("now: requests/s")
    # Every 5 seconds the charts grow by the seconds since their last point.
    points = lambda: len(css(browser, 'figure[data-chart="requests"] svg.chart polyline')[0].get_attribute("points").split())
    before = points()
    wait_for(lambda: points() > before, timeout=12, message="charts updated with the later seconds")
    # Since the start: the same charts (a young process has only its seconds).
    click(browser, "Since start")
    wait_for(lambda: [b for b in css(browser, "button[aria-pressed=true]") if b.text == "Since start"], message="range")
    wait_for(lambda: css(browser, 'figure[data-chart="errors"] svg.chart polyline'), message="charts again")
    # Each chart links to its log lines: the errors chart to the 4xx and 5xx requests of its span.
    css(browser, 'figure[data-chart="errors"] a.logs-link')[0].click()
    wait_for(lambda: "status=errors" in browser.current_url, message="logs link")
    wait_for(lambda: [c for c in css(browser, 'table.logs td[data-column="path"]') if c.text == "/parse/classes/Post/missing"], message="the 404")
    statuses = [c.text for c in css(browser, 'table.logs td[data-column="status"]')]
    assert statuses and all(s.startswith(("4", "5")) for s in statuses), statuses
    browser.get(server.url + "/dashboard#/health")
    wait_for(lambda: css(browser, 'figure[data-chart="latency"] svg.chart polyline'), message="charts")
    assert console_errors(browser) == []


def test_logs_table(server, browser):
    for i in range(3):
        server.rest("POST", "/classes/Post", {"n": i})
    assert request_with_id(server, "/classes/Post", "drill-down-1") == 200
    assert request_with_id(server, "/classes/Post/nope", "not-found-1") == 404
    sign_in(browser, server)
    console_errors(browser)
    browser.get(server.url + "/dashboard#/logs")
    wait_for(lambda: len(css(browser, "table.logs tbody tr")) > 5, message="log rows")
    # A filter per column: status.
    Select(css(browser, 'select[aria-label="filter status"]')[0]).select_by_visible_text("4xx")
    wait_for(lambda: "status=4xx" in browser.current_url, message="status filter")
    wait_for(lambda: [c for c in css(browser, 'table.logs td[data-column="path"]') if c.text == "/parse/classes/Post/nope"], message="the 404")
    statuses = [c.text for c in css(browser, 'table.logs td[data-column="status"]')]
    assert statuses and all(s.startswith("4") for s in statuses), statuses
    # Method and path.
    browser.get(server.url + "/dashboard#/logs")
    Select(wait_for(lambda: css(browser, 'select[aria-label="filter method"]'))[0]).select_by_visible_text("POST")
    wait_for(lambda: "method=POST" in browser.current_url, message="method filter")
    settled(browser)
    path = wait_for(lambda: css(browser, 'input[aria-label="filter path"]'))[0]
    path.send_keys("classes/Post", Keys.ENTER)
    wait_for(lambda: "path=classes%2FPost" in browser.current_url, message="path filter")
    wait_for(lambda: len(css(browser, "table.logs tbody tr")) == 3, message="the three creates")
    assert {c.text for c in css(browser, 'table.logs td[data-column="method"]')} == {"POST"}
    # Slowest first.
    click(browser, "Slowest first")
    wait_for(lambda: "sort=slow" in browser.current_url, message="slowest first")
    settled(browser)
    durations = [float(c.text) for c in css(browser, 'table.logs td[data-column="durationMs"]')]
    assert durations == sorted(durations, reverse=True) and len(durations) == 3
    # A click on a request id: every line of that request.
    browser.get(server.url + "/dashboard#/logs")
    wait_for(lambda: css(browser, 'button[aria-label="lines of request drill-down-1"]'))[0].click()
    wait_for(lambda: "requestId=drill-down-1" in browser.current_url, message="drill-down")
    wait_for(lambda: css(browser, "table.logs tbody tr"), message="its lines")
    settled(browser)
    assert {r.get_attribute("data-request-id") for r in css(browser, "table.logs tbody tr")} == {"drill-down-1"}
    assert "request drill-down-1" in css(browser, ".chips .chip")[0].text
    # Time: the last minutes.
    browser.get(server.url + "/dashboard#/logs")
    Select(wait_for(lambda: css(browser, 'select[aria-label="filter time"]'))[0]).select_by_visible_text("last 5 min")
    wait_for(lambda: "from=" in browser.current_url, message="time filter")
    wait_for(lambda: css(browser, 'table.logs tr[data-request-id="drill-down-1"]'), message="recent lines")
    assert "–" in css(browser, ".chips .chip")[0].text
    # Live tail: a new request shows up without a reload.
    browser.get(server.url + "/dashboard#/logs")
    wait_for(lambda: css(browser, "table.logs tbody tr"), message="rows")
    click(browser, "Live tail")
    assert request_with_id(server, "/classes/Post", "tail-1") == 200
    wait_for(lambda: css(browser, 'table.logs tr[data-request-id="tail-1"]'), timeout=10, message="tailed line")
    assert console_errors(browser) == []


def test_export_and_import(server, browser, tmp_path):
    server.rest("POST", "/schemas/Track", {"className": "Track", "fields": {"title": {"type": "String"}, "plays": {"type": "Number"}}})
    for i in range(3):
        server.rest("POST", "/classes/Track", {"title": f"track, {i}", "plays": i})
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    browser.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(downloads)})
    sign_in(browser, server)
    console_errors(browser)
    open_class(browser, server, "Track")
    Select(css(browser, 'select[aria-label="export format"]')[0]).select_by_visible_text("CSV")
    click(browser, "Export")
    exported = wait_for(lambda: [p for p in downloads.glob("Track.csv")], message="downloaded CSV")[0]
    text = wait_for(lambda: exported.read_text() if exported.read_text().count("\n") == 4 else None, message="whole file")
    assert text.startswith("objectId,createdAt,updatedAt,ACL,plays,title\n")
    assert '"track, 1"' in text
    # Import: two good rows, one of the wrong type.
    source = tmp_path / "more.jsonl"
    source.write_text('{"title": "imported a", "plays": 10}\n{"title": "wrong", "plays": "ten"}\n{"title": "imported b"}\n')
    css(browser, 'input[aria-label="file to import"]')[0].send_keys(str(source))
    click(browser, "Import")
    report = wait_for(lambda: css(browser, '[aria-label="import report"]')[0].text, message="import report")
    assert "Imported 2 objects in 1 batch; 1 row refused." in report
    refused = [c.text for c in css(browser, 'table[aria-label="refused rows"] tbody td')]
    assert refused[:2] == ["2", "111"] and "plays" in refused[2]
    wait_for(lambda: css(browser, ".total")[0].text == "5 objects", message="table reloaded")
    assert server.rest("GET", "/classes/Track?count=1&limit=0")["count"] == 5
    assert console_errors(browser) == []
