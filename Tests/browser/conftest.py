"""A real parsley server (the executable `swift build` made) and headless Chromium driven by Selenium.

Run: `scripts/browser-tests.sh` (installs Debian's chromium + chromium-driver and Selenium when missing, builds
parsley). Screenshots of every test, at desktop and phone width, go to Tests/browser/screenshots/.
"""
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = Path(__file__).resolve().parent / "screenshots"
APP_ID = "browser-app"
MASTER_KEY = "browser-master-key"
READ_ONLY_KEY = "browser-read-only-key"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """The parsley executable on a fresh data folder, and a REST client with the master key."""

    def __init__(self):
        binary = os.environ.get("PARSLEY_BIN") or str(ROOT / ".build" / "debug" / "parsley")
        self.port = free_port()
        self.data = tempfile.mkdtemp(prefix="parsley-browser-")
        env = dict(os.environ)
        env.update({
            "PARSLEY_DATA_DIR": self.data, "PORT": str(self.port), "PARSE_SERVER_HOST": "127.0.0.1",
            "PARSE_SERVER_APPLICATION_ID": APP_ID, "PARSE_SERVER_MASTER_KEY": MASTER_KEY,
            "PARSE_SERVER_READ_ONLY_MASTER_KEY": READ_ONLY_KEY, "PARSE_SERVER_MOUNT_GRAPHQL": "true",
        })
        self.log = open(os.path.join(self.data, "server.log"), "w")
        self.process = subprocess.Popen([binary], env=env, stdout=self.log, stderr=subprocess.STDOUT)
        self.url = f"http://127.0.0.1:{self.port}"
        for _ in range(200):
            try:
                urllib.request.urlopen(self.url + "/parse/health", timeout=1)
                return
            except Exception:
                time.sleep(0.05)
        raise RuntimeError("parsley did not start")

    def rest(self, method, path, body=None, key=MASTER_KEY):
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.url + "/parse" + path, data=data, method=method, headers={
            "X-Parse-Application-Id": APP_ID, "X-Parse-Master-Key": key, "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return json.loads(response.read() or b"null")
        except urllib.error.HTTPError as error:
            return json.loads(error.read() or b"null")

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=30)
        self.log.close()
        shutil.rmtree(self.data, ignore_errors=True)


@pytest.fixture
def server():
    s = Server()
    yield s
    s.stop()


@pytest.fixture
def browser(request):
    options = webdriver.ChromeOptions()
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,900"]:
        options.add_argument(argument)
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"), options=options)
    driver.implicitly_wait(0)
    yield driver
    # Every test leaves a desktop and a phone-width picture of where it ended.
    SCREENSHOTS.mkdir(exist_ok=True)
    name = request.node.name.replace("/", "_")
    try:
        driver.set_window_size(1280, 900)
        driver.save_screenshot(str(SCREENSHOTS / f"{name}-desktop.png"))
        driver.set_window_size(390, 844)
        driver.save_screenshot(str(SCREENSHOTS / f"{name}-phone.png"))
    finally:
        driver.quit()
