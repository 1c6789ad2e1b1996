"""The dashboard in a real browser: JupyterLab in headless Debian Chromium, driven by Playwright.

A notebook builds the approval process (a user task under a 24 h interrupting timer
boundary), lets the instance dehydrate, and displays ``eng.dashboard()``. The test checks
that the lineage graph shows the waiting track as dehydrated, types ``PT25H`` into the
widget's advance field, clicks Advance, and waits for the boundary-fork edge and the
escalated end. The user task's name is an HTML injection attempt: it must show as text and
run nothing. Every request that is not to the local server is blocked (the widget needs no
network). A screenshot goes to ``test-output/browser/screenshot.png`` and is copied to
``docs/screenshots/dashboard.png`` for the README.

The same notebook then exports a process built in Python with ``to_bpmn()``, reads the text
back with ``bpm.Process.from_bpmn``, starts it on an engine of its own and displays its
``process_view()``: the Graphviz SVG drawn in the browser must show every flow node id
of the exported file (the bpmn.io view comes later). Both tests share one server, one
browser page and one run of the notebook (the export check adds about a second).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urlparse

import nbformat
import pytest
from lxml import etree

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "test-output" / "browser"
README_SHOT = ROOT / "docs" / "screenshots" / "dashboard.png"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
XSS = "<img src=x onerror=alert(1)>"
DASHBOARD = ".gobpm-root[data-view=dashboard]"
LINEAGE_SVG = f"{DASHBOARD} [data-role=lineage] svg"
GRAPH_VIEW = ".gobpm-root[data-view=graph]"
GRAPH_SVG = f"{GRAPH_VIEW} [data-role=graph] svg"
BPMN = "http://www.omg.org/spec/BPMN/20100524/MODEL"

CELLS = [
    "import gobpm_nb as bpm",
    f'''p = bpm.Process("approval")
p.start("start")
p.user_task("approve", name={XSS!r}, assignee="alice")
p.timer_boundary("late", attached_to="approve", duration="PT24H", interrupting=True)
p.end("done")
p.end("escalated")
p.flow("start", "approve", "done")
p.flow("late", "escalated")
p.validate()''',
    '''eng = bpm.Engine()
inst = eng.start(p, data={"amount": 120})
eng.advance("PT1H")
inst.residency''',
    "eng.dashboard()",
]

# Appended to the notebook: a process built in Python (names differ from ids, so the SVG
# shows "Name (id)"), written as BPMN XML, read back and run on an engine of its own; its
# process view is displayed below the dashboard.
EXPORT_BUILD = '''import gobpm_nb as bpm
p = bpm.Process("claim", "Insurance claim")
p.start("claim_received", "Claim received")
p.exclusive_gateway("needs_review", "Needs review?", default="auto_pay")
p.user_task("review_claim", "Review claim", assignee="adjuster")
p.timer_boundary("review_late", "Review late", attached_to="review_claim", duration="P2D")
p.service_task("auto_pay", "Pay out", topic="payments")
p.message_catch("docs_in", "Documents received", message="documents", key="claim")
p.end("claim_closed", "Claim closed")
p.end("claim_escalated", "Escalated")
p.flow("claim_received", "needs_review")
p.flow("needs_review", "review_claim", condition="amount > 1000")
p.flow("needs_review", "auto_pay")
p.flow("review_claim", "docs_in", "claim_closed")
p.flow("auto_pay", "claim_closed")
p.flow("review_late", "claim_escalated")
p.validate()
xml = p.to_bpmn()'''
EXPORT_CELLS = [
    EXPORT_BUILD,
    '''q = bpm.Process.from_bpmn(xml)
claims = bpm.Engine()
claim = claims.start(q, data={"claim": "c-1", "amount": 2500})
claims.advance("PT1H")
print(q, [f.id for f in q.flows][:2], claim.residency)''',
    "claim.process_view()",
]
NOTEBOOK = "dashboard.ipynb"

# What the page must not need: the news popup and the windowed notebook (which detaches
# cells scrolled out of view) are switched off in a settings folder of the test's own.
SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings":
        {"fetchNews": "false", "checkForUpdates": False},
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def api(base: str, token: str, path: str, method: str = "GET") -> object:
    req = urllib.request.Request(f"{base}{path}", method=method,
                                 headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        body = resp.read()
    return json.loads(body) if body else None


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A JupyterLab server on a free localhost port, serving the test notebook from a
    temporary folder (one server for the module's tests)."""
    tmp_path = tmp_path_factory.mktemp("lab")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in CELLS + EXPORT_CELLS]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbformat.write(nb, tmp_path / NOTEBOOK)
    settings = tmp_path / "lab-settings"
    for name, value in SETTINGS.items():
        (settings / name).parent.mkdir(parents=True, exist_ok=True)
        (settings / name).write_text(json.dumps(value))
    port, token = free_port(), secrets.token_hex(16)
    env = {**os.environ, "JUPYTERLAB_SETTINGS_DIR": str(settings),
           "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "lab-workspaces"),
           "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"), "PYTHONWARNINGS": "ignore"}
    log = open(tmp_path / "jupyter.log", "w")  # noqa: SIM115 (closed in teardown)
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyter", "lab", "--allow-root", "--no-browser",
         "--ip", "127.0.0.1", f"--port={port}", "--ServerApp.port_retries=0",
         f"--ServerApp.token={token}", f"--ServerApp.root_dir={tmp_path}",
         "--LabApp.expose_app_in_browser=True"],
        cwd=tmp_path, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                api(base, token, "/api/status")
                break
            except (urllib.error.URLError, ConnectionError, OSError):
                if server.poll() is not None or time.monotonic() > deadline:
                    log.flush()
                    raise RuntimeError("JupyterLab did not start:\n" +
                                       (tmp_path / "jupyter.log").read_text()) from None
                time.sleep(0.25)
        yield base, token
    finally:
        try:  # shut every kernel down, then the server, by its own process id
            for kernel in api(base, token, "/api/kernels") or []:
                api(base, token, f"/api/kernels/{kernel['id']}", method="DELETE")
        except Exception:
            pass
        if server.poll() is None:
            os.kill(server.pid, signal.SIGTERM)
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.kill(server.pid, signal.SIGKILL)
                server.wait(timeout=10)
        log.close()


def local_only(route) -> None:
    """Let the page reach the local server only."""
    url = urlparse(route.request.url)
    if url.scheme in ("data", "blob") or url.hostname in ("127.0.0.1", "localhost"):
        route.continue_()
    else:
        route.abort()


@pytest.fixture(scope="module")
def notebook(lab):
    """Chromium showing the test notebook in JupyterLab, every cell run once; yields the
    page and the list of dialogs it opened (there must be none)."""
    from playwright.sync_api import sync_playwright

    base, token = lab
    dialogs: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1700})
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            page.route("**/*", local_only)
            page.goto(f"{base}/lab/tree/{NOTEBOOK}?token={token}")
            page.wait_for_function(
                "() => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
                " return !!(w && w.sessionContext && w.sessionContext.session"
                " && w.sessionContext.session.kernel); }", timeout=90_000)
            page.evaluate(
                "async () => { const w = window.jupyterapp.shell.currentWidget;"
                " await w.context.ready; await w.sessionContext.ready; }")
            page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
            yield page, dialogs
        finally:
            browser.close()


def graph_texts(page, kind: str) -> list[str]:
    """Text of every node or edge group of the dashboard's lineage SVG."""
    return page.eval_on_selector_all(
        f"{LINEAGE_SVG} g.{kind}",
        "groups => groups.map(g => Array.from(g.querySelectorAll('text'))"
        ".map(t => t.textContent).join('\\n'))")


def test_dashboard_in_jupyterlab(notebook):
    """The dashboard shows the dehydrated track, and Advance PT25H draws the boundary fork."""
    page, dialogs = notebook
    OUTPUT.mkdir(parents=True, exist_ok=True)
    # the released instance: its waiting track is drawn dehydrated
    page.wait_for_selector(LINEAGE_SVG, timeout=90_000)
    page.wait_for_function(
        f"() => Array.from(document.querySelectorAll('{LINEAGE_SVG} g.node text'))"
        ".some(t => t.textContent === 'dehydrated')", timeout=60_000)
    nodes = graph_texts(page, "node")
    assert any(text.split("\n")[-1] == "dehydrated" for text in nodes), nodes
    assert page.inner_text(f"{DASHBOARD} [data-role=clock]") == "2026-01-01T01:00:00Z"

    # advance 25 h from the widget: the boundary fires on the released instance
    page.fill(f"{DASHBOARD} [data-role=advance-duration]", "PT25H")
    page.click(f"{DASHBOARD} [data-action=advance]")
    page.wait_for_function(
        f"() => Array.from(document.querySelectorAll('{LINEAGE_SVG} g.edge text'))"
        ".some(t => t.textContent.includes('boundary'))", timeout=60_000)
    page.wait_for_function(
        f"() => Array.from(document.querySelectorAll('{LINEAGE_SVG} g.node'))"
        ".some(g => Array.from(g.querySelectorAll('text')).map(t => t.textContent)"
        ".join('|') === 't2|escalated|completed')", timeout=60_000)
    page.wait_for_timeout(1200)  # let the graph transitions finish for the picture
    assert page.inner_text(f"{DASHBOARD} [data-role=clock]") == "2026-01-02T02:00:00Z"
    assert page.text_content(f"{DASHBOARD} [data-role=error-text]") == ""
    edges = graph_texts(page, "edge")
    assert edges == ["boundary fork"], edges
    counters = page.inner_text(f"{DASHBOARD} [data-role=counters]")
    assert "finished" in counters

    # the hostile name is text in both graphs, never an element, and ran nothing
    lineage = "\n".join(graph_texts(page, "node"))
    assert f"{XSS} (approve)" in lineage
    process = page.inner_text(f"{DASHBOARD} [data-role=process]")
    assert XSS in process
    assert page.evaluate(f"document.querySelectorAll('{DASHBOARD} img').length") == 0
    assert dialogs == []

    shot = OUTPUT / "screenshot.png"
    page.locator(DASHBOARD).screenshot(path=str(shot))
    page.screenshot(path=str(OUTPUT / "page.png"), full_page=True)
    README_SHOT.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(shot, README_SHOT)


def exported_node_ids() -> list[str]:
    """The flow node ids of the file the notebook exports (its builder cell, run here):
    every child of the ``<process>`` with an id, sequence flows aside."""
    scope: dict = {}
    exec(EXPORT_BUILD, scope)  # the notebook's own cell: a builder process, then to_bpmn()
    root = etree.fromstring(scope["xml"].encode("utf-8"))
    (process,) = root.iter(f"{{{BPMN}}}process")
    return [node.get("id") for node in process
            if node.get("id") and node.tag != f"{{{BPMN}}}sequenceFlow"]


def test_exported_model_renders_in_jupyterlab(notebook):
    """A builder process exported with to_bpmn(), read back with Process.from_bpmn and
    started: its process view's SVG, drawn in the browser, shows every node id of the file."""
    page, dialogs = notebook
    ids = exported_node_ids()
    assert len(ids) == 8, ids
    page.wait_for_selector(GRAPH_SVG, timeout=90_000)
    page.wait_for_function(  # the token: the track of the released user task
        f"() => Array.from(document.querySelectorAll('{GRAPH_SVG} text'))"
        ".some(t => t.textContent.includes('t1 dehydrated'))", timeout=60_000)
    texts = page.eval_on_selector_all(f"{GRAPH_SVG} text", "ts => ts.map(t => t.textContent)")
    shown = "\n".join(texts)
    missing = [i for i in ids if f"({i})" not in shown]
    assert missing == [], (missing, texts)
    assert "Review claim (review_claim)" in texts, texts
    assert any(t.startswith("process claim v1 · i1") for t in texts), texts
    assert page.text_content(f"{GRAPH_VIEW} [data-role=error-text]") == ""
    assert dialogs == []
    OUTPUT.mkdir(parents=True, exist_ok=True)
    page.locator(GRAPH_VIEW).screenshot(path=str(OUTPUT / "exported.png"))
