"""The widgets in a real browser: JupyterLab in headless Debian Chromium, driven by Playwright.

A notebook builds the approval process (a user task under a 24 h interrupting timer
boundary), lets the instance dehydrate, and displays ``eng.dashboard()``. The test checks
that the lineage graph shows the waiting track as dehydrated, types ``PT25H`` into the
widget's advance field, clicks Advance, and waits for the boundary-fork edge and the
escalated end. The user task's name is an HTML injection attempt: it must show as text and
run nothing. Every request that is not to the local server is blocked (the widget needs no
network). A screenshot goes to ``build/browser/screenshot.png``.

Every picture goes to ``build/browser/`` (git ignores ``build/``): a run leaves a clean clone
clean. The pictures committed under ``docs/screenshots/`` are made again only on request,
with ``bash .ci/screenshots`` (which runs this file with ``GOBPM_SCREENSHOTS=docs``).

The README's picture, ``docs/screenshots/dashboard.png``, is a dashboard on a real process:
notebook 09's order-to-cash process (its building cell, read from
``notebooks/src/09-design-review.py``) with three dozen orders started forty minutes apart,
some packed and paid, the clock 30 hours on, in a page of its own at 1280×800. One order is
chosen in the instance picker; the test checks its tokens, hold badges and boundary fork by
BPMN id, that every label of the diagram, every badge and every label of the lineage (its
own tab) is at least 11 px on screen, that no two badge boxes meet and no badge covers a
label, that the watermark shows and that the dashboard fits the screen without scrolling,
then takes the picture. Then it restarts that
notebook's kernel, as a teacher would, and clicks Step on the dashboard left on the page:
the dashboard says its kernel is gone instead of doing nothing.

The dashboard's process panel and every ``process_view()`` draw the process in BPMN
notation with bpmn.io's viewer (bundled: no network), the engine's state on its shapes. The
notebook exports a process built in Python with ``to_bpmn()``, reads the text back with
``bpm.Process.from_bpmn``, starts and advances it, and shows its process view; it also runs a
MIWG reference model (C.1.0, read from its file) and shows that. Both views must draw a
shape for every node, a token marker and hold badges on the expected shapes (found by BPMN
id), and leave the bpmn.io watermark fully visible (its licence requires it). Screenshots go
to ``process-view.png`` and ``process-view-miwg.png``. MIWG B.1.0's first process, which no
pool of its collaboration names, is drawn with its own shapes and its token.

Last, a notebook executed with its widget state stored (nbclient) is opened in a new page,
with nothing cached in the browser: its views draw from the saved state alone (the shared
module is saved once, in the notebook). All tests share one server, one browser and one run
of the notebook; no request leaves the machine.

Views true to their cell: every stored notebook, opened as a clone is (not trusted, not run),
shows a drawing (its PNG) for every view; notebook 04 run with Run All shows each view at the
fact its cell left (compared with a branch of the engine at that fact), follows the engine on
"follow live" and stops on "freeze here"; saved and reloaded (kernel running, default
settings) its views draw again; saved with widget state and reopened with a new kernel, they
draw from the saved state, whose shared module holds its code.

Then, on the first page, the dashboard must fit a 1280×800 screen (side bar folded, tables
folded) without scrolling, live and frozen ("freeze here" in its header disables its
controls; "follow live" enables them again), and, once twenty more instances ran in the
notebook's kernel, its fact table must page back to fact 1 and filter by an instance across
the whole kept log.
"""

from __future__ import annotations

import base64
import contextlib
import gzip
import importlib.util
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
from nbclient import NotebookClient
from nbformat.sign import NotebookNotary

pytestmark = pytest.mark.slow  # JupyterLab in headless Chromium

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "build" / "browser"
# GOBPM_SCREENSHOTS=docs (bash .ci/screenshots): also copy the pictures the README and docs
# show to docs/screenshots/; a plain run never writes there.
KEEP_SHOTS = os.environ.get("GOBPM_SCREENSHOTS") == "docs"
README_SHOT = ROOT / "docs" / "screenshots" / "dashboard.png"
HOSTILE_SHOT = ROOT / "docs" / "screenshots" / "hostile-names.png"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
XSS = "<img src=x onerror=alert(1)>"
DASHBOARD = ".gobpm-root[data-view=dashboard]"
LINEAGE_SVG = f"{DASHBOARD} [data-role=lineage] svg"
GRAPH_VIEW = ".gobpm-root[data-view=graph]"
GRAPH_SVG = f"{GRAPH_VIEW} [data-role=graph] svg"
BPMN = "http://www.omg.org/spec/BPMN/20100524/MODEL"
MIWG = ROOT / "tests" / "data" / "miwg" / "C.1.0.bpmn"
CLAIM_VIEW = f"{GRAPH_VIEW}:has(g[data-element-id=review_claim])"
BILL_VIEW = f"{GRAPH_VIEW}:has(g[data-element-id=assignApprover])"
PROCESS_SHOT = ROOT / "docs" / "screenshots" / "process-view.png"
MIWG_SHOT = ROOT / "docs" / "screenshots" / "process-view-miwg.png"

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
# A MIWG reference model read from its file (copied beside the notebook), run for an hour.
MIWG_CELLS = [
    f'''invoice = bpm.Process.from_bpmn("{MIWG.name}")
invoices = bpm.Engine()
invoices.deploy(invoice)  # it starts by its message start event
bill = invoices.instance(invoices.publish_message("invoice-received-C.1.0"))
invoices.advance("PT1H")
bill.residency''',
    "bill.process_view()",
]
# MIWG B.1.0: a collaboration of two pools; its first process is in neither, yet runnable.
B10 = ROOT / "tests" / "data" / "miwg" / "B.1.0.bpmn"
B10_PROCESS = "Process_ba16239e-181e-4b9f-bc5b-0bb2ee973450"
B10_START = "_200f43e7-1385-46e2-a380-3ef16ebe7847"
B10_NODES = {B10_START, "_c57a5344-213f-4834-a6c3-94ce878b413c",
             "_ed405919-9fd6-47d0-bb00-9be7d5467efb"}
B10_VIEW = f'{GRAPH_VIEW}:has(g[data-element-id="{B10_START}"])'
B10_CELLS = [
    "pools = bpm.Engine()\n"
    f'first = pools.start(bpm.load_bpmn("{B10.name}").process("{B10_PROCESS}"))\n'
    "first.process_view()",
]
# The claim's file with the shapes of its user task and that task's boundary cut out: the
# instance's token and holds stand where the diagram draws nothing.
UNDRAWN_CELLS = [
    "import re\n"
    "cut = re.sub(r'<bpmndi:BPMNShape [^>]*bpmnElement=\"(review_claim|review_late)\"'\n"
    "             r'.*?</bpmndi:BPMNShape>', '', xml, flags=re.S)\n"
    "lost = bpm.Engine()\n"
    "stray = lost.start(bpm.Process.from_bpmn(cut), data={'claim': 'c-2', 'amount': 2500})\n"
    "lost.advance('PT1H')\n"
    "stray.process_view()",
]
UNDRAWN_VIEW = f"{GRAPH_VIEW}:has([data-role=graph-bpmn-undrawn]:not([hidden]))"
# The import report of C.1.0 as a notebook shows it (its _repr_html_).
REPORT_CELLS = [f'bpm.load_bpmn("{MIWG.name}").report']
NOTEBOOK = "dashboard.ipynb"
# The README's picture: notebook 09's order-to-cash process, mid-run, in a notebook of its own.
O2C_NOTEBOOK = "order-to-cash.ipynb"
O2C_RUN = '''desk = bpm.Engine()
for n in range(36):
    desk.start(o2c, {"order_id": f"SO-{3000 + n}", "amount": 400 + 150 * n,
                     "credit_limit": 5000}, key=f"SO-{3000 + n}")
    desk.advance("PT40M")
for task in desk.tasks()[:12:2]:
    desk.complete_task(task.id, {"packed_by": "kim"})
for n in range(0, 12, 3):
    desk.publish_message("payment", key=f"SO-{3000 + n}", payload={"paid": 400 + 150 * n})
desk.advance("PT6H")
desk.stats()'''
O2C_ORDER = "SO-3001"  # started at 00:40, neither packed nor paid: its pack SLA fired at 24 h
O2C_VIEW = f"{DASHBOARD}:has(g[data-element-id=pick_and_pack])"
# Issue 23: notebook 09's process with its credit check made a person's decision, three
# orders waiting there, and a dashboard on them (its own notebook, at 1280×800).
DECIDE_NOTEBOOK = "decide.ipynb"
DECIDE_RUN = '''o2c.decide("credit_ok")
review = bpm.Engine()
for n in range(3):
    review.start(o2c, {"order_id": f"SO-{4000 + n}", "amount": 900 + 400 * n,
                       "credit_limit": 5000}, key=f"SO-{4000 + n}")
review.run()
[(d.instance, d.gateway) for d in review.decisions()]'''
DECIDE_VIEW = f"{DASHBOARD}:has([data-role=decisions])"
DECIDE_SHOT = ROOT / "docs" / "screenshots" / "dashboard-decision.png"
# A point on a flow's drawn line (half way along it) on screen, and what is there.
FLOW_POINT = """([scope, id]) => {
  const hit = document.querySelector(`${scope} g.djs-connection[data-element-id="${id}"] .djs-hit`);
  const p = hit.getPointAtLength(hit.getTotalLength() / 2), m = hit.getScreenCTM();
  const x = m.a * p.x + m.c * p.y + m.e, y = m.b * p.x + m.d * p.y + m.f;
  const at = document.elementFromPoint(x, y);
  return {x, y, on: Boolean(at && at.closest(`g.djs-connection[data-element-id="${id}"]`))};
}"""

# Executed by nbclient with its widget state stored, then opened in a fresh page.
SAVED = "saved.ipynb"
SAVED_CELLS = [*CELLS[:3], "inst.process_view()", "eng.dashboard()"]

# A narrative notebook run with Run All, saved and reopened (views frozen at their cells).
NARRATIVE = "04-boundary-events"
NARRATIVE_SOURCE = ROOT / "notebooks" / "src" / f"{NARRATIVE}.py"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGETS_PLUGIN = "@jupyter-widgets/jupyterlab-manager:plugin"

# What the page must not need: the news popup and the windowed notebook (which detaches
# cells scrolled out of view) are switched off in a settings folder of the test's own.
SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings":
        {"fetchNews": "false", "checkForUpdates": False},
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
}


def o2c_cell() -> str:
    """The cell of notebook 09 that builds its order-to-cash process (``o2c``), read from the
    notebook's source with the notebook builder's own parser."""
    spec = importlib.util.spec_from_file_location("notebook_build", ROOT / "notebooks" / "build.py")
    assert spec is not None and spec.loader is not None
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    source = (ROOT / "notebooks" / "src" / "09-design-review.py").read_text(encoding="utf-8")
    cell = next(body for kind, body in build.parse(source)
                if kind == "code" and "o2c = bpm.Process(" in body)
    assert "o2c.validate()" in cell
    return cell


def keep(shot: Path, committed: Path) -> None:
    """Copy a picture over its committed copy, on request only (``KEEP_SHOTS``)."""
    if KEEP_SHOTS:
        committed.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, committed)


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
    OUTPUT.mkdir(parents=True, exist_ok=True)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src)
                for src in CELLS + EXPORT_CELLS + MIWG_CELLS + B10_CELLS + REPORT_CELLS
                + UNDRAWN_CELLS]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbformat.write(nb, tmp_path / NOTEBOOK)
    o2c = nbformat.v4.new_notebook()
    o2c.cells = [nbformat.v4.new_code_cell(src) for src in (o2c_cell(), O2C_RUN,
                                                            "desk.dashboard()")]
    o2c.metadata["kernelspec"] = nb.metadata["kernelspec"]
    nbformat.write(o2c, tmp_path / O2C_NOTEBOOK)
    decide = nbformat.v4.new_notebook()
    decide.cells = [nbformat.v4.new_code_cell(src) for src in (o2c_cell(), DECIDE_RUN,
                                                               "review.dashboard()")]
    decide.metadata["kernelspec"] = nb.metadata["kernelspec"]
    nbformat.write(decide, tmp_path / DECIDE_NOTEBOOK)
    shutil.copyfile(MIWG, tmp_path / MIWG.name)
    (tmp_path / "stored").mkdir()
    for stored in sorted((ROOT / "notebooks").glob("[0-9][0-9]-*.ipynb")):
        shutil.copyfile(stored, tmp_path / "stored" / stored.name)  # as cloned: not trusted
    shutil.copyfile(ROOT / "notebooks" / f"{NARRATIVE}.ipynb", tmp_path / f"{NARRATIVE}.ipynb")
    shutil.copyfile(B10, tmp_path / B10.name)
    saved = nbformat.v4.new_notebook()
    saved.cells = [nbformat.v4.new_code_cell(src) for src in SAVED_CELLS]
    saved.metadata["kernelspec"] = nb.metadata["kernelspec"]
    NotebookClient(saved, timeout=120, kernel_name="python3", store_widget_state=True,
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    NotebookNotary().sign(saved)  # as JupyterLab signs what it saves: widget views are shown
    nbformat.write(saved, tmp_path / SAVED)
    settings = tmp_path / "lab-settings"
    for name, value in SETTINGS.items():
        (settings / name).parent.mkdir(parents=True, exist_ok=True)
        (settings / name).write_text(json.dumps(value))
    with jupyter_server(tmp_path, ["lab", "--LabApp.expose_app_in_browser=True"], settings,
                        "JupyterLab") as running:
        yield running


@contextlib.contextmanager
def jupyter_server(root, app, settings, name):
    """A Jupyter server (``app``: its module and options after ``python -m``) on a free
    localhost port serving ``root``, with the server config the wheel installs (it enables
    gobpm_nb.ui.saving): ``(base URL, token)``. Its kernels and itself are shut down after."""
    port, token = free_port(), secrets.token_hex(16)
    env = {**os.environ, "JUPYTERLAB_SETTINGS_DIR": str(settings),
           "JUPYTERLAB_WORKSPACES_DIR": str(root / "lab-workspaces"),
           "JUPYTER_RUNTIME_DIR": str(root / "runtime"), "PYTHONWARNINGS": "ignore",
           "JUPYTER_CONFIG_PATH": str(ROOT / "jupyter-config")}
    log_path = root / "jupyter.log"
    log = open(log_path, "w")  # noqa: SIM115 (closed below)
    module, *options = app
    server = subprocess.Popen(
        [sys.executable, "-m", *(["jupyter", module] if module == "lab" else [module]),
         "--allow-root", "--no-browser", "--ip", "127.0.0.1", f"--port={port}",
         "--ServerApp.port_retries=0", f"--ServerApp.token={token}",
         f"--ServerApp.root_dir={root}", *options],
        cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
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
                    raise RuntimeError(f"{name} did not start:\n"
                                       + log_path.read_text()) from None
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


BLOCKED: list[str] = []  # every request the pages tried to send off the machine


def local_only(route) -> None:
    """Let the page reach the local server only (and note what else it tried)."""
    url = urlparse(route.request.url)
    if url.scheme in ("data", "blob") or url.hostname in ("127.0.0.1", "localhost"):
        route.continue_()
    else:
        BLOCKED.append(route.request.url)
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
            context = browser.new_context(viewport={"width": 1280, "height": 1700})
            context.route("**/*", local_only)
            page = context.new_page()
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            open_and_run(page, f"{base}/lab/tree/{NOTEBOOK}?token={token}")
            yield page, dialogs
        finally:
            browser.close()


def open_and_run(page, url: str) -> None:
    """Open a notebook in JupyterLab, wait for its kernel and run every cell."""
    open_notebook(page, url)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")


def graph_texts(page, kind: str) -> list[str]:
    """Text of every node or edge group of the dashboard's lineage SVG."""
    return page.eval_on_selector_all(
        f"{LINEAGE_SVG} g.{kind}",
        "groups => groups.map(g => Array.from(g.querySelectorAll('text'))"
        ".map(t => t.textContent).join('\\n'))")


# Read from the page by BPMN id: a shape's classes and box, and the badges drawn for it.
MARKS_ON = """([scope, id]) => {
  const root = document.querySelector(scope);
  const shape = root.querySelector(`g.djs-element[data-element-id="${id}"]`);
  const group = root.querySelector(`.gobpm-marks[data-element-id="${id}"]`);
  const box = (node) => { const r = node.getBoundingClientRect();
    return {left: r.left, top: r.top, right: r.right, bottom: r.bottom}; };
  return {classes: Array.from(shape.classList), shape: box(shape.querySelector('.djs-visual')),
          group: group && box(group),
          badges: group ? Array.from(group.querySelectorAll('.gobpm-badge'))
            .map(b => [b.dataset.kind, b.dataset.hold || b.dataset.state || '', b.textContent])
            : []};
}"""
# The watermark of every bpmn.io canvas in scope: inside its canvas, shown, and on top at
# nine points spread over it.
WATERMARKS = """(scope) => Array.from(document.querySelectorAll(scope + ' .gobpm-bpmn-canvas'))
  .filter(c => c.offsetParent !== null).map(canvas => {
    const mark = canvas.querySelector('a.bjs-powered-by');
    if (!mark) return {found: false};
    mark.scrollIntoView({block: 'center'});
    const c = canvas.getBoundingClientRect(), m = mark.getBoundingClientRect();
    const hits = [];
    for (const fx of [0.1, 0.5, 0.9]) for (const fy of [0.15, 0.5, 0.85]) {
      const at = document.elementFromPoint(m.left + fx * m.width, m.top + fy * m.height);
      hits.push(Boolean(at && at.closest('a.bjs-powered-by') === mark));
    }
    const style = getComputedStyle(mark);
    return {found: true, inside: m.width > 0 && m.height > 0 && m.left >= c.left &&
              m.right <= c.right && m.top >= c.top && m.bottom <= c.bottom,
            hits, shown: style.visibility === 'visible' && style.display !== 'none' &&
              Number(style.opacity) === 1};
  })"""


def marks_on(page, scope: str, element: str) -> dict:
    return page.evaluate(MARKS_ON, [scope, element])


def badges_sit_on(marks: dict, boundary: bool = False) -> bool:
    """A node's badges touch its top edge from above; a boundary's hang below it."""
    group, shape = marks["group"], marks["shape"]
    across = group["left"] < shape["right"] and group["right"] > shape["left"] - 2
    if boundary:
        return across and shape["bottom"] - 1 <= group["top"] <= shape["bottom"] + 40
    return across and shape["top"] - 14 <= group["bottom"] <= shape["top"] + 2


def badges_near(marks: dict) -> bool:
    """A shape's badges lie over or beside it (within a few rows of badges)."""
    group, shape = marks["group"], marks["shape"]
    across = group["left"] < shape["right"] + 4 and group["right"] > shape["left"] - 4
    return across and shape["top"] - 90 <= group["bottom"] and group["top"] <= shape["bottom"] + 90


def assert_watermarks_visible(page, scope: str) -> None:
    """bpmn.io's licence: its watermark stays fully visible, not overlapped."""
    marks = page.evaluate(WATERMARKS, scope)
    assert marks, f"no bpmn.io canvas in {scope}"
    for mark in marks:
        assert mark["found"] and mark["inside"] and mark["shown"], mark
        assert all(mark["hits"]), mark


def shapes_in(page, scope: str) -> list[str]:
    """The BPMN ids of every shape drawn in scope."""
    return page.eval_on_selector_all(f"{scope} g.djs-shape[data-element-id]",
                                     "gs => gs.map(g => g.dataset.elementId)")


def test_dashboard_in_jupyterlab(notebook):
    """The dashboard shows the dehydrated track, and Advance PT25H draws the boundary fork."""
    page, dialogs = notebook
    OUTPUT.mkdir(parents=True, exist_ok=True)
    # the dehydrated instance: its waiting track is drawn dehydrated
    page.wait_for_selector(LINEAGE_SVG, state="attached", timeout=90_000)
    page.wait_for_function(
        f"() => Array.from(document.querySelectorAll('{LINEAGE_SVG} g.node text'))"
        ".some(t => t.textContent === 'dehydrated')", timeout=60_000)
    nodes = graph_texts(page, "node")
    assert any(text.split("\n")[-1] == "dehydrated" for text in nodes), nodes
    assert page.inner_text(f"{DASHBOARD} [data-role=clock]") == "2026-01-01T01:00:00Z"

    # advance 25 h from the widget: the boundary fires on the dehydrated instance
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

    # the process panel, in BPMN: the timer fired on the boundary and forked t2 there
    page.wait_for_function(
        f"() => Array.from(document.querySelectorAll('{DASHBOARD} "
        ".gobpm-marks[data-element-id=late] .gobpm-badge'))"
        ".some(b => b.textContent === '↳ t2')", timeout=60_000)
    late = marks_on(page, DASHBOARD, "late")
    assert badges_sit_on(late, boundary=True) and "gobpm-fork" in late["classes"], late
    assert "gobpm-left" in marks_on(page, DASHBOARD, "escalated")["classes"]
    assert_watermarks_visible(page, DASHBOARD)

    # the hostile name is text in both graphs, never an element, and ran nothing
    lineage = "\n".join(graph_texts(page, "node"))
    assert f"{XSS} (approve)" in lineage
    label = page.text_content(f"{DASHBOARD} g.djs-element[data-element-id=approve] text")
    assert "".join(label.split()) == "".join(XSS.split())  # bpmn-js wraps it over lines
    assert page.evaluate(f"document.querySelectorAll('{DASHBOARD} img').length") == 0
    assert dialogs == []

    shot = OUTPUT / "screenshot.png"
    page.locator(DASHBOARD).screenshot(path=str(shot))
    page.screenshot(path=str(OUTPUT / "page.png"), full_page=True)
    keep(shot, HOSTILE_SHOT)


def exported_node_ids() -> list[str]:
    """The flow node ids of the file the notebook exports (its builder cell, run here):
    every child of the ``<process>`` with an id, sequence flows aside."""
    scope: dict = {}
    exec(EXPORT_BUILD, scope)  # the notebook's own cell: a builder process, then to_bpmn()
    root = etree.fromstring(scope["xml"].encode("utf-8"))
    (process,) = root.iter(f"{{{BPMN}}}process")
    return [node.get("id") for node in process
            if node.get("id") and node.tag != f"{{{BPMN}}}sequenceFlow"]


def test_a_model_built_in_python_renders_in_bpmn_notation(notebook):
    """A builder process exported with to_bpmn(), read back with Process.from_bpmn and
    advanced an hour: its process view draws every node of the file as a BPMN shape, a
    dehydrated token and the task's hold on the user task, the timer's deadline on its
    boundary, and the bpmn.io watermark in full."""
    page, dialogs = notebook
    ids = exported_node_ids()
    assert len(ids) == 8, ids
    page.wait_for_selector(f"{CLAIM_VIEW} .gobpm-marks[data-element-id=review_late]",
                           timeout=90_000)
    assert set(ids) <= set(shapes_in(page, CLAIM_VIEW)), shapes_in(page, CLAIM_VIEW)
    review = marks_on(page, CLAIM_VIEW, "review_claim")
    assert review["badges"] == [["token", "dehydrated", "1"],
                                ["hold", "task", "☺ i1:review_claim:1"]], review
    assert badges_sit_on(review) and "gobpm-token" in review["classes"], review
    late = marks_on(page, CLAIM_VIEW, "review_late")
    assert late["badges"] == [["hold", "timer", "◷ 2026-01-03T00:00:00Z"]], late
    assert badges_sit_on(late, boundary=True) and "gobpm-held" in late["classes"], late
    assert "gobpm-left" in marks_on(page, CLAIM_VIEW, "needs_review")["classes"]
    status = page.text_content(f"{CLAIM_VIEW} [data-role=graph-bpmn-status]")
    assert status.startswith("claim v1 · i1 · ") and "dehydrated:" in status, status
    assert_watermarks_visible(page, CLAIM_VIEW)
    assert page.text_content(f"{CLAIM_VIEW} [data-role=error-text]") == ""
    assert dialogs == []
    page.locator(CLAIM_VIEW).screenshot(path=str(OUTPUT / PROCESS_SHOT.name))
    keep(OUTPUT / PROCESS_SHOT.name, PROCESS_SHOT)


def test_an_imported_miwg_model_renders_in_bpmn_notation(notebook):
    """MIWG C.1.0 read from its file and advanced an hour: its own diagram (two pools, lanes)
    is drawn, the dehydrated track and the task hold sit on "Assign Approver", the start event
    and first flow are the path taken, and the watermark is in full."""
    page, dialogs = notebook
    page.wait_for_selector(f"{BILL_VIEW} .gobpm-marks[data-element-id=assignApprover]",
                           timeout=90_000)
    drawn = set(shapes_in(page, BILL_VIEW))
    assert {"approveInvoice", "assignApprover", "reviewInvoice", "StartEvent_1",
            "prepareBankTransfer", "archiveInvoice", "invoiceProcessed"} <= drawn
    assert len(page.query_selector_all(f"{BILL_VIEW} g.djs-shape[data-element-id]")) > 30
    assign = marks_on(page, BILL_VIEW, "assignApprover")
    assert assign["badges"] == [["token", "dehydrated", "1"],
                                ["hold", "task", "☺ i1:assignApprover:1"]], assign
    assert badges_sit_on(assign), assign
    assert "gobpm-left" in marks_on(page, BILL_VIEW, "StartEvent_1")["classes"]
    taken = page.get_attribute(f"{BILL_VIEW} g.djs-connection[data-element-id=SequenceFlow_1]",
                               "class")
    assert "gobpm-taken" in taken.split(), taken
    assert_watermarks_visible(page, BILL_VIEW)
    assert dialogs == []
    page.locator(BILL_VIEW).screenshot(path=str(OUTPUT / MIWG_SHOT.name))
    keep(OUTPUT / MIWG_SHOT.name, MIWG_SHOT)


# For each BPMN id: is its shape the topmost thing at the centre of its box?
ON_TOP = """([scope, ids]) => ids.map(id => {
  const g = document.querySelector(`${scope} g.djs-element[data-element-id="${id}"]`);
  const r = g.querySelector('.djs-visual').getBoundingClientRect();
  const at = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  return Boolean(at && at.closest('g.djs-element') === g);
})"""


def test_a_process_outside_its_files_pools_is_drawn_with_its_token(notebook):
    """MIWG B.1.0's first process belongs to no pool of the file's collaboration: its view
    draws its own three shapes from the file's diagram, over the pools (the file draws them
    inside an expanded call activity), the new instance's token on its start event, and no
    notice of marks left undrawn."""
    page, dialogs = notebook
    page.wait_for_selector(f"{B10_VIEW} .gobpm-marks[data-element-id='{B10_START}']",
                           timeout=90_000)
    assert B10_NODES <= set(shapes_in(page, B10_VIEW))
    # drawn over the pools (the file puts them inside an expanded call activity): on top
    page.locator(B10_VIEW).scroll_into_view_if_needed()
    on_top = page.evaluate(ON_TOP, [B10_VIEW, sorted(B10_NODES)])
    assert on_top == [True] * 3, on_top
    start = marks_on(page, B10_VIEW, B10_START)
    assert start["badges"] == [["token", "ready", "1"]], start
    assert "gobpm-token" in start["classes"], start
    assert page.is_hidden(f"{B10_VIEW} [data-role=graph-bpmn-undrawn]")
    assert_watermarks_visible(page, B10_VIEW)
    assert dialogs == []
    page.locator(B10_VIEW).screenshot(path=str(OUTPUT / "process-view-b10.png"))


def test_a_token_where_the_diagram_draws_nothing_is_listed_under_the_view(notebook):
    """The claim's file without the shapes of its user task and that task's timer: the view
    draws the rest and lists the token and the holds it cannot place, by element id."""
    page, dialogs = notebook
    page.wait_for_selector(UNDRAWN_VIEW, timeout=90_000)
    notice = page.locator(f"{UNDRAWN_VIEW} [data-role=graph-bpmn-undrawn]")
    assert notice.get_attribute("data-ids") == "review_claim review_late"
    text = notice.text_content()
    assert text.startswith("Not on this diagram") and "review_claim (1 ☺ i1:review_claim:1)" \
        in text and "review_late (◷ 2026-01-03T00:00:00Z)" in text, text
    assert "claim_received" in shapes_in(page, UNDRAWN_VIEW)
    assert dialogs == []


def test_the_import_report_shows_as_a_table_per_process(notebook):
    """C.1.0's report in JupyterLab: one heading per process (pool, executable or not, runs
    or not), a row per note with the element's name beside its id and a hint."""
    page, dialogs = notebook
    page.wait_for_selector(".gobpm-report h4", state="attached", timeout=90_000)
    heads = page.eval_on_selector_all(".gobpm-report h4", "hs => hs.map(h => h.textContent)")
    assert len(heads) == 2 and \
        heads[0].endswith("not executable · cannot run: 1 error, 3 warnings"), heads
    rows = page.eval_on_selector_all(
        ".gobpm-report tr[data-severity]",
        "rs => rs.map(r => Array.from(r.cells).map(c => c.textContent))")
    assert len(rows) == 6 and rows[0][:3] == ["warning", "118", "startEvent Invoice received"] \
        and rows[3][:3] == ["error", "263", "intermediateCatchEvent 7 days"], rows
    assert all(row[5] for row in rows), rows
    page.locator(".gobpm-report").screenshot(path=str(OUTPUT / "report.png"))
    assert dialogs == []


# The badges of every marked element of the README's order, as MARKS_ON reads them.
O2C_BADGES = {
    "await_payment": [["token", "dehydrated", "1"], ["hold", "message", "✉ payment · SO-3001"]],
    "pick_and_pack": [["token", "dehydrated", "1"], ["hold", "task", "☺ SO-3001:pick_and_pack:1"]],
    "payment_reminder": [["hold", "timer", "◷ 2026-01-08T00:40:00Z"]],
    "payment_lapsed": [["hold", "timer", "◷ 2026-01-31T00:40:00Z"]],
    "pack_sla": [["fork", "", "↳ t3"]],
}
# What a reader sees of the dashboard in scope: the smallest text on screen (px: its font
# size times the screen scale of its SVG, or of its badge) of the BPMN labels, the badges
# and the lineage labels shown, how many of each, how many pairs of badge boxes meet and how
# many badges cover a BPMN label.
LEGIBILITY = """(scope) => {
  const root = document.querySelector(scope);
  const shown = (e) => e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden'
    && e.textContent.trim() !== '';
  const svgPx = (t) => { const m = t.getScreenCTM();
    return parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b); };
  const htmlPx = (b) => parseFloat(getComputedStyle(b).fontSize)
    * b.getBoundingClientRect().height / b.offsetHeight;
  const least = (xs) => xs.length ? Math.min(...xs) : null;
  const labels = Array.from(root.querySelectorAll('.gobpm-bpmn-canvas .djs-element text'))
    .filter(shown);
  const lineage = Array.from(root.querySelectorAll('[data-role=lineage] svg text')).filter(shown);
  const badges = Array.from(root.querySelectorAll('.gobpm-badge')).filter(shown);
  const meet = (a, b) => a.left < b.right - 0.5 && b.left < a.right - 0.5
    && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5;
  const boxes = Array.from(root.querySelectorAll('.gobpm-marks')).filter(shown)
    .map(g => g.getBoundingClientRect());
  const texts = labels.map(t => t.getBoundingClientRect());
  let overlaps = 0, covers = 0;
  boxes.forEach((a, i) => { boxes.slice(i + 1).forEach(b => { overlaps += meet(a, b); });
                            texts.forEach(t => { covers += meet(a, t); }); });
  return {labels: least(labels.map(svgPx)), labelCount: labels.length,
          badges: least(badges.map(htmlPx)), badgeCount: badges.length,
          lineage: least(lineage.map(svgPx)), lineageCount: lineage.length, overlaps, covers};
}"""
READABLE_PX = 11


def test_readme_picture_is_a_dashboard_on_order_to_cash(notebook, lab):
    """Notebook 09's order-to-cash process with 36 orders, 30 virtual hours on, at 1280×800:
    the order chosen in the picker shows its two dehydrated tokens, its task, message and
    timer holds and the fork of its pack SLA on the BPMN diagram, by id; every BPMN label,
    badge and lineage label is 11 px or more on screen, no two badges meet and no badge
    covers a label; the dashboard fits the screen, the watermark shows; the picture is the
    README's. After a kernel restart, Step on that dashboard says the kernel is gone (no
    uncaught error in the page)."""
    page, dialogs = notebook
    base, token = lab
    fresh = page.context.new_page()
    errors: list[str] = []
    fresh.on("pageerror", lambda e: errors.append(str(e)))
    try:
        fresh.set_viewport_size({"width": 1280, "height": 800})
        open_and_run(fresh, f"{base}/lab/workspaces/o2c/tree/{O2C_NOTEBOOK}?token={token}")
        fresh.evaluate("() => window.jupyterapp.shell.collapseLeft()")
        fresh.wait_for_selector(f"{O2C_VIEW} .gobpm-marks[data-element-id=pick_and_pack]",
                                timeout=120_000)
        fresh.select_option(f"{O2C_VIEW} [data-role=instance-select]", O2C_ORDER)
        fresh.wait_for_function(
            f"() => Array.from(document.querySelectorAll('{O2C_VIEW} "
            ".gobpm-marks[data-element-id=await_payment] .gobpm-badge'))"
            f".some(b => b.textContent.endsWith('{O2C_ORDER}'))", timeout=60_000)
        fresh.wait_for_timeout(1000)  # let the lineage transition finish for the picture
        status = fresh.text_content(f"{O2C_VIEW} [data-role=process-bpmn-status]")
        assert status.startswith(f"order_to_cash v1 · {O2C_ORDER} · active") and \
            "dehydrated:" in status, status
        counters = fresh.eval_on_selector_all(
            f"{O2C_VIEW} .gobpm-counter", "cs => cs.map(c => [c.dataset.name,"
            " c.querySelector('.gobpm-counter-value').textContent])")
        assert ["dehydrated", "31"] in counters and ["finished", "5"] in counters, counters
        assert fresh.inner_text(f"{O2C_VIEW} [data-role=clock]") == "2026-01-02T06:00:00Z"
        for element, badges in O2C_BADGES.items():
            marks = marks_on(fresh, O2C_VIEW, element)
            assert marks["badges"] == badges, (element, marks)
            assert badges_near(marks), (element, marks)
        for element in ("await_payment", "pick_and_pack"):
            classes = marks_on(fresh, O2C_VIEW, element)["classes"]
            assert {"gobpm-token", "gobpm-dehydrated", "gobpm-held"} <= set(classes), classes
        assert "gobpm-left" in marks_on(fresh, O2C_VIEW, "escalated")["classes"]
        assert_watermarks_visible(fresh, O2C_VIEW)
        fit = dashboard_fit(fresh, O2C_VIEW)
        assert_fits(fit)
        assert fresh.text_content(f"{O2C_VIEW} [data-role=error-text]") == ""
        fresh.wait_for_timeout(300)
        # every label and badge on screen at 11 px or more; no badge on a badge or a label
        seen = fresh.evaluate(LEGIBILITY, O2C_VIEW)
        assert seen["labelCount"] >= 15 and seen["badgeCount"] == \
            sum(map(len, O2C_BADGES.values())), seen
        assert seen["labels"] >= READABLE_PX and seen["badges"] >= READABLE_PX, seen
        assert (seen["overlaps"], seen["covers"]) == (0, 0), seen
        shot = OUTPUT / "order-to-cash.png"
        fresh.screenshot(path=str(shot))
        keep(shot, README_SHOT)
        fresh.click(f"{O2C_VIEW} [data-action=tab-lineage]")
        fresh.wait_for_selector(f"{O2C_VIEW} [data-role=lineage] svg text", timeout=30_000)
        lineage = fresh.evaluate(LEGIBILITY, O2C_VIEW)
        assert lineage["lineageCount"] >= 6 and lineage["lineage"] >= READABLE_PX, lineage
        assert_fits(dashboard_fit(fresh, O2C_VIEW))
        fresh.screenshot(path=str(OUTPUT / "order-to-cash-lineage.png"))
        (OUTPUT / "order-to-cash-sizes.json").write_text(json.dumps(
            {"process": seen, "lineage": lineage}, indent=1))
        fresh.click(f"{O2C_VIEW} [data-action=tab-process]")
        # the picker labels each order and its filter keeps the matching ones (the order
        # shown stays first)
        fresh.fill(f"{O2C_VIEW} [data-role=instance-filter]", "SO-301")
        options = fresh.eval_on_selector_all(f"{O2C_VIEW} [data-role=instance-select] option",
                                             "os => os.map(o => o.textContent)")
        assert options[0] == f"{O2C_ORDER} · order_to_cash v1 · active (dehydrated)", options
        assert len(options) == 11 and all(o.startswith("SO-301") for o in options[1:]), options
        assert fresh.text_content(f"{O2C_VIEW} [data-role=instance-count]") == "10 of 36"
        fresh.fill(f"{O2C_VIEW} [data-role=instance-filter]", "")

        # the kernel restarts: the dashboard left on the page cannot reach an engine any more
        fresh.evaluate("() => { window.jupyterapp.commands.execute('kernelmenu:restart'); }")
        fresh.click(".jp-Dialog .jp-mod-accept", timeout=30_000)
        fresh.wait_for_function(
            "() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel"
            ".status === 'idle'", timeout=60_000)
        fresh.click(f"{O2C_VIEW} [data-action=step]")
        fresh.wait_for_function(
            f"() => document.querySelector('{O2C_VIEW} [data-role=error-text]')"
            ".textContent.startsWith('This dashboard has no live kernel behind it')",
            timeout=10_000)
        assert fresh.is_visible(f"{O2C_VIEW} [data-role=error]")
    finally:
        fresh.close()
    assert errors == [] and dialogs == []


def test_a_person_decides_on_the_dashboard(notebook, lab):
    """Three orders wait at notebook 09's credit check made a person's decision. The
    dashboard (1280×800) shows the first order's decision with a button per flow, the two
    flows dashed and badged on the diagram, and the two decisions waiting elsewhere; the
    picture is ``dashboard-decision.png``. The button "→ split" decides; Run then lists the
    order's packing task and the decision is gone. On the second order a click on the flow
    to "rejected" in the diagram decides the same way (a refused decision's error text is
    checked in ``tests/test_view_decisions.py``: it goes to the error bar as every refused
    command's does)."""
    base, token = lab
    errors: list[str] = []
    page = notebook[0].context.new_page()  # a page of its own, in the module's browser
    try:
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.set_viewport_size({"width": 1280, "height": 800})
        open_and_run(page, f"{base}/lab/workspaces/decide/tree/{DECIDE_NOTEBOOK}?token={token}")
        page.evaluate("() => window.jupyterapp.shell.collapseLeft()")
        view, first, second = DECIDE_VIEW, "SO-4000", "SO-4001"
        page.wait_for_selector(f"{view} [data-role=decision] [data-action=decide]",
                               timeout=120_000)
        page.wait_for_selector(f"{view} .gobpm-badge-choice", timeout=60_000)
        page.wait_for_timeout(800)
        buttons = page.eval_on_selector_all(f"{view} [data-role=decision] [data-action=decide]",
                                            "bs => bs.map(b => [b.dataset.flow, b.textContent])")
        assert buttons == [["credit_ok->split", "→ split"],
                           ["credit_ok->rejected", "→ rejected"]], buttons
        assert page.text_content(f"{view} [data-role=decisions-note]") == \
            "+ 2 waiting in other instances"
        flows = ["Flow_credit_ok_split", "Flow_credit_ok_rejected"]
        for flow in flows:
            classes = page.get_attribute(
                f'{view} g.djs-connection[data-element-id="{flow}"]', "class")
            assert "gobpm-choice" in classes, classes
        stroke = page.evaluate(
            "(s) => getComputedStyle(document.querySelector(s)).strokeDasharray",
            f'{view} g.djs-connection[data-element-id="{flows[0]}"] .djs-visual > path')
        assert stroke not in ("", "none"), stroke
        badges = page.eval_on_selector_all(f"{view} .gobpm-badge-choice",
                                           "bs => bs.map(b => b.textContent)")
        assert badges == ["? → split", "? → rejected"], badges
        fit = dashboard_fit(page, view)
        page.wait_for_timeout(300)
        shot = OUTPUT / "dashboard-decision.png"
        page.screenshot(path=str(shot))
        assert_fits(fit)
        seen = page.evaluate(LEGIBILITY, view)
        assert (seen["overlaps"], seen["covers"]) == (0, 0), seen
        assert seen["badges"] >= READABLE_PX and seen["labels"] >= READABLE_PX, seen
        assert_watermarks_visible(page, view)
        keep(shot, DECIDE_SHOT)
        # the holder table lists the three decision holds, the legend's glyph on each
        page.click(f"{view} [data-role=holds-panel] > summary")
        rows = page.eval_on_selector_all(
            f"{view} [data-role=holds] tbody tr",
            "rs => rs.map(r => [r.dataset.kind, ...Array.from(r.cells).map(c => c.textContent)])")
        assert [r[:6] for r in rows] == [["decision", f"SO-400{n}", "t1", "decision", "node",
                                          "credit_ok"] for n in range(3)], rows
        page.locator(f"{view} [data-role=holds-panel]").screenshot(
            path=str(OUTPUT / "dashboard-decision-holders.png"))
        page.click(f"{view} [data-role=holds-panel] > summary")

        # the button decides; Run goes on to the packing task
        page.click(f'{view} [data-role=decision] [data-flow="credit_ok->split"]')
        page.wait_for_function(
            f"() => document.querySelector('{view} [data-role=last-step]').textContent"
            f".startsWith('Decide credit_ok (instance {first}, track t1): flow "
            "credit_ok->split → split')", timeout=30_000)
        page.wait_for_function(  # the refresh after the command: the decision is gone
            f"() => document.querySelectorAll('{view} [data-role=decision], "
            f"{view} .gobpm-badge-choice').length === 0", timeout=30_000)
        page.click(f"{view} [data-action=run]")
        page.wait_for_function(
            f"() => Array.from(document.querySelectorAll('{view} [data-role=complete-task] "
            f"option')).some(o => o.textContent.startsWith('{first}:pick_and_pack:1'))",
            timeout=30_000)

        # the second order: a click on the flow in the diagram decides
        page.select_option(f"{view} [data-role=instance-select]", second)
        page.wait_for_function(
            f"() => document.querySelectorAll('{view} [data-role=decision]').length === 1 && "
            f"document.querySelectorAll('{view} .gobpm-badge-choice').length === 2 && "
            f"document.querySelector('{view} [data-role=process-bpmn-status]').textContent"
            f".includes('{second}')", timeout=30_000)
        page.wait_for_timeout(500)
        dashboard_fit(page, view)  # the whole dashboard in view again
        page.screenshot(path=str(OUTPUT / "dashboard-decision-second.png"))
        point = page.evaluate(FLOW_POINT, [view, flows[1]])
        assert point["on"], point
        page.mouse.click(point["x"], point["y"])
        page.wait_for_function(
            f"() => document.querySelector('{view} [data-role=last-step]').textContent"
            f".startsWith('Decide credit_ok (instance {second}')", timeout=30_000)
        assert "credit_ok->rejected → rejected" in \
            page.text_content(f"{view} [data-role=last-step]")
        page.wait_for_function(
            f"() => document.querySelector('{view} [data-role=decisions-note]').textContent "
            "=== '1 waiting in another instance'", timeout=30_000)
        assert page.text_content(f"{view} [data-role=error-text]") == ""
        page.screenshot(path=str(OUTPUT / "dashboard-decided.png"))
    finally:
        page.close()
    assert errors == [] and notebook[1] == []


def test_saved_widget_state_draws_after_a_reload(notebook, lab):
    """A notebook saved with its widget state, opened in a new page (nothing cached there):
    the process view and the dashboard draw in BPMN from the saved state, which holds the
    shared module once. Nothing on any page asked for the network."""
    page, dialogs = notebook
    base, token = lab
    fresh = page.context.new_page()
    try:
        fresh.goto(f"{base}/lab/workspaces/saved/tree/{SAVED}?token={token}")
        fresh.wait_for_selector(f"{GRAPH_VIEW} .gobpm-marks[data-element-id=approve]",
                                timeout=90_000)
        fresh.wait_for_selector(f"{DASHBOARD} .gobpm-marks[data-element-id=approve]",
                                timeout=60_000)
        approve = marks_on(fresh, GRAPH_VIEW, "approve")
        assert ["token", "dehydrated", "1"] in approve["badges"], approve
        assert fresh.query_selector("[data-role=load-error]") is None
        assert fresh.evaluate(
            "() => globalThis[Symbol.for('gobpm_nb.shared-modules')].size") == 1
        assert_watermarks_visible(fresh, GRAPH_VIEW)
        fresh.screenshot(path=str(OUTPUT / "saved.png"))
    finally:
        fresh.close()
    assert BLOCKED == [] and dialogs == []


# Scroll the notebook so the dashboard in scope starts at the top of its scrolling box; then
# where it ends, and whether anything in it is wider than it.
FIT = """(scope) => {
  const root = document.querySelector(scope);
  let box = root.parentElement;
  const scrolls = (e) => /(auto|scroll)/.test(getComputedStyle(e).overflowY);
  while (box && !(box.scrollHeight > box.clientHeight && scrolls(box))) {
    box = box.parentElement;
  }
  box.scrollTop += root.getBoundingClientRect().top - box.getBoundingClientRect().top;
  const r = root.getBoundingClientRect(), v = box.getBoundingClientRect();
  const parts = '.gobpm-dashboard > *, .gobpm-graphs > *, .gobpm-forms > *, '
    + '.gobpm-header > *, .gobpm-controls > *, .gobpm-status > *';
  const wide = Array.from(root.querySelectorAll(parts)).filter(
    e => e.getBoundingClientRect().right > r.right + 1 && e.getClientRects().length)
    .map(e => e.className);
  return { top: r.top - v.top, bottom: r.bottom, height: r.height, width: r.width,
           view: v.bottom, scrollWidth: root.scrollWidth,
           clientWidth: root.clientWidth, wide: wide.slice(0, 5),
           folded: Array.from(root.querySelectorAll('details'))
             .map(d => [d.dataset.role, d.open]) };
}"""


def dashboard_fit(page, scope: str) -> dict:
    """Put the dashboard in scope at the top of the notebook's view; say how it fits."""
    page.locator(scope).scroll_into_view_if_needed()
    return page.evaluate(FIT, scope)


def assert_fits(fit: dict) -> None:
    """In view from top to bottom, folded tables, nothing wider than the output."""
    assert fit["folded"] == [["holds-panel", False], ["facts-panel", False]], fit
    assert abs(fit["top"]) <= 1 and fit["bottom"] <= fit["view"] + 1, fit
    assert fit["scrollWidth"] <= fit["clientWidth"] + 1 and fit["wide"] == [], fit


# -- the dashboard's layout and fact table (last: they add instances to the notebook's engine)
def run_in_kernel(page, code: str) -> None:
    """Run ``code`` in the notebook's kernel, as a cell would (the widgets update after it)."""
    page.evaluate(
        "async (code) => { const w = window.jupyterapp.shell.currentWidget;"
        " await w.sessionContext.session.kernel.requestExecute({ code }).done; }", code)


def test_dashboard_fits_a_1280_by_800_screen(notebook):
    """On a 1280×800 screen (JupyterLab's side bar folded), the whole dashboard — controls,
    last-step line, counters, process and lineage, forms and the folded tables — is in view
    at once, with nothing wider than the output: no scrolling."""
    page, dialogs = notebook
    page.set_viewport_size({"width": 1280, "height": 800})
    try:
        page.evaluate("() => window.jupyterapp.shell.collapseLeft()")
        page.wait_for_timeout(500)
        fit = dashboard_fit(page, DASHBOARD)
        page.screenshot(path=str(OUTPUT / "fit-1280x800.png"))
        assert_fits(fit)
        assert page.is_visible(f"{DASHBOARD} [data-role=last-step]")
        assert page.is_visible(f"{DASHBOARD} [data-role=run-horizon]")
    finally:
        page.set_viewport_size({"width": 1280, "height": 1700})
    assert dialogs == []


def test_dashboard_header_freezes_and_follows_live(notebook):
    """The dashboard's header says "live" with "freeze here"; clicked, it says "at fact N ·
    clock" with "follow live", the controls are disabled, the last-step line says why, and
    the engine's next command changes nothing shown; "follow live" shows the engine as it is
    now and enables the controls again. Frozen, the dashboard still fits 1280×800."""
    page, dialogs = notebook
    header = f"{DASHBOARD} .gobpm-header"
    moment = f"{header} [data-role=moment]"
    step = f"{DASHBOARD} [data-action=step]"
    page.set_viewport_size({"width": 1280, "height": 800})
    try:
        page.evaluate("() => window.jupyterapp.shell.collapseLeft()")
        assert page.text_content(moment) == "live" and page.is_enabled(step)
        size = page.evaluate(f"() => getComputedStyle(document.querySelector('{moment}'))"
                             ".fontSize")
        assert float(size.removesuffix("px")) >= 11, size
        clock = page.inner_text(f"{DASHBOARD} [data-role=clock]")
        page.click(f"{header} [data-action=freeze]")
        page.wait_for_function(
            f"() => document.querySelector('{moment}').textContent.startsWith('at fact ')",
            timeout=30_000)
        frozen = page.text_content(moment)
        assert frozen.endswith(" · " + clock[:16].replace("T", " ")), (frozen, clock)
        assert page.is_visible(f"{header} [data-action=follow]")
        for control in ("step", "run", "advance", "play-toggle", "publish", "complete",
                        "branch"):
            assert page.is_disabled(f"{DASHBOARD} [data-action={control}]"), control
        assert page.is_disabled(f"{DASHBOARD} [data-role=timeline-slider]")
        assert page.text_content(f"{DASHBOARD} [data-role=last-step]") == \
            f"frozen {frozen} — follow live to use the controls"
        fit = dashboard_fit(page, DASHBOARD)
        page.locator(DASHBOARD).screenshot(path=str(OUTPUT / "dashboard-frozen.png"))
        page.screenshot(path=str(OUTPUT / "dashboard-frozen-1280x800.png"))
        assert_fits(fit)

        run_in_kernel(page, "eng.advance('PT1H')")  # the engine moves on; the picture not
        page.wait_for_timeout(500)
        assert page.text_content(moment) == frozen and page.is_disabled(step)
        page.click(f"{header} [data-action=follow]")
        page.wait_for_function(f"() => document.querySelector('{moment}').textContent "
                               "=== 'live'", timeout=30_000)
        page.wait_for_function(
            f"() => document.querySelector('{DASHBOARD} [data-role=clock]').textContent "
            f"!== '{clock}'", timeout=30_000)
        assert page.is_enabled(step) and page.is_visible(f"{header} [data-action=freeze]")
        assert page.text_content(f"{DASHBOARD} [data-role=error-text]") == ""
        fit = dashboard_fit(page, DASHBOARD)
        page.screenshot(path=str(OUTPUT / "dashboard-live-1280x800.png"))
        assert_fits(fit)
    finally:
        page.set_viewport_size({"width": 1280, "height": 1700})
    assert dialogs == []


def test_fact_table_pages_back_to_the_first_fact(notebook):
    """With more facts than one page, the folded fact table opens on the newest page; "oldest"
    reaches fact 1, "newer" walks back, and filtering by i1 finds its facts from the start
    (Python answers each request with one page)."""
    page, dialogs = notebook
    run_in_kernel(page, "for n in range(20):\n    eng.start(p, data={'amount': n})\n"
                        "eng.run(until=eng.now)\nkept = len(eng.facts)")
    facts = f"{DASHBOARD} [data-role=facts-panel]"
    page.click(f"{facts} summary")
    page.wait_for_function(
        f"() => /^\\d+–\\d+ of \\d+ · newest$/.test("
        f"document.querySelector('{facts} [data-role=facts-count]').textContent)"
        f" && document.querySelector('{facts} [data-action=facts-oldest]').disabled === false",
        timeout=30_000)
    note = page.text_content(f"{facts} [data-role=facts-count]")
    first, last, total = (int(n) for n in note.replace("–", " ").replace(" of ", " ")
                          .split(" ")[:3])
    assert (last, last - first + 1) == (total, 100) and total > 100, note

    def seqs() -> list[int]:
        return [int(t) for t in page.eval_on_selector_all(
            f"{facts} tbody td.gobpm-col-seq", "cells => cells.map(c => c.textContent)")]

    page.click(f"{facts} [data-action=facts-oldest]")
    page.wait_for_function(
        f"() => document.querySelector('{facts} tbody td.gobpm-col-seq')?.textContent === '1'",
        timeout=30_000)
    assert seqs() == list(range(1, 101))
    assert page.text_content(f"{facts} [data-role=facts-count]") == \
        f"1–100 of {total} · page 1 of {-(-total // 100)}"
    assert page.is_disabled(f"{facts} [data-action=facts-older]")
    page.click(f"{facts} [data-action=facts-newer]")
    page.wait_for_function(
        f"() => document.querySelector('{facts} tbody td.gobpm-col-seq')?.textContent === '101'",
        timeout=30_000)

    page.select_option(f"{facts} [data-role=fact-filter-instance]", "i1")
    page.wait_for_function(
        f"() => Array.from(document.querySelectorAll('{facts} tbody td.gobpm-col-instance'))"
        ".every(c => c.textContent === 'i1') && document.querySelector("
        f"'{facts} [data-role=facts-count]').textContent.includes('matching')", timeout=30_000)
    assert seqs()[0] == 1  # i1's first fact is the log's first, long off the newest page
    assert page.text_content(f"{DASHBOARD} [data-role=error-text]") == ""
    assert dialogs == []


def test_timeline_drag_back_rewinds_and_reset_replays(notebook):
    """Dragging the history slider back to fact 10 (the instance just dehydrated, before its
    deadline) rewinds the engine: the lineage loses the escalation fork and the last-step
    line says where the engine stands; "reset" replays back to the newest point."""
    page, dialogs = notebook
    run_in_kernel(page, "eng.advance('PT25H')")  # past the deadline: escalated
    escalated = (f"() => Array.from(document.querySelectorAll('{LINEAGE_SVG} g.node'))"
                 ".some(g => Array.from(g.querySelectorAll('text')).map(t => t.textContent)"
                 ".join('|') === 't2|escalated|completed')")
    page.wait_for_function(escalated, timeout=60_000)
    slider = f"{DASHBOARD} [data-role=timeline-slider]"
    end = int(page.get_attribute(slider, "max"))
    assert int(page.input_value(slider)) == end > 10
    page.locator(slider).fill("10")  # a drag ends with input and change events at 10
    page.wait_for_function(
        f"() => document.querySelector('{DASHBOARD} [data-role=last-step]').textContent"
        ".startsWith('Rewound to fact 10 at ')", timeout=60_000)
    page.wait_for_function(f"() => !({escalated})()", timeout=60_000)
    nodes = graph_texts(page, "node")
    assert any(text.split("\n")[-1] == "dehydrated" for text in nodes), nodes
    assert graph_texts(page, "edge") == []
    assert int(page.input_value(slider)) == 10
    assert f"{end - 10} facts after it can be replayed" in \
        page.text_content(f"{DASHBOARD} [data-role=timeline-note]")
    page.click(f"{DASHBOARD} [data-action=replay]")
    page.wait_for_function(escalated, timeout=60_000)
    assert int(page.input_value(slider)) == end
    assert page.text_content(f"{DASHBOARD} [data-role=error-text]") == ""
    page.locator(DASHBOARD).screenshot(path=str(OUTPUT / "timeline.png"))
    assert dialogs == []


# -- views true to their cell, drawn at open, saved and reopened ------------------------------
# For every output of the notebook in the current tab that holds a widget view: whether it
# shows a decoded image, a drawn gobpm view, and its text (an error text would be in it).
OUTPUTS = r"""() => {
  const panel = window.jupyterapp.shell.currentWidget;
  const found = [];
  for (const cell of panel.content.widgets) {
    if (cell.model.type !== 'code') continue;
    const outputs = cell.model.outputs.toJSON();
    const nodes = cell.node.querySelectorAll('.jp-OutputArea-child .jp-OutputArea-output');
    outputs.forEach((output, n) => {
      const data = output.data || {};
      const text = [].concat(data['text/plain'] || []).join('');
      if (!data['application/vnd.jupyter.widget-view+json']
          && !(data['image/png'] && /^(Lineage|Process)View\(/.test(text))) return;
      const node = nodes[n];
      const img = node && node.querySelector('img');
      found.push({image: Boolean(img && img.complete && img.naturalWidth > 100),
                  view: Boolean(node && node.querySelector('.gobpm-root svg')),
                  text: node ? node.textContent.slice(0, 200) : null});
    });
  }
  return found;
}"""
ERROR_TEXTS = ("Error displaying widget", "cannot be drawn")


def open_notebook(page, url: str) -> None:
    """Open a notebook and wait until its kernel is there and its cells are drawn."""
    page.goto(url)
    page.wait_for_function(
        "() => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
        " return !!(w && w.sessionContext && w.sessionContext.session"
        " && w.sessionContext.session.kernel); }", timeout=90_000)
    page.evaluate(
        "async () => { const w = window.jupyterapp.shell.currentWidget;"
        " await w.context.ready; await w.sessionContext.ready; }")


def views_in(path: Path) -> int:
    """How many widget-view outputs the stored notebook holds."""
    nb = nbformat.read(path, as_version=4)
    return sum(WIDGET_VIEW in output.get("data", {})
               for cell in nb.cells for output in cell.get("outputs", []))


def test_a_notebook_opened_unexecuted_and_untrusted_shows_a_drawing_for_every_view(notebook, lab):
    """Every stored notebook, opened as a student opens a clone (not trusted, not run): each
    view's output shows its stored PNG (JupyterLab does not run a widget, nor show an SVG,
    in a notebook that is not trusted), never a line of text or an error."""
    page, dialogs = notebook
    base, token = lab
    fresh = page.context.new_page()
    shown: dict[str, int] = {}
    try:
        fresh.set_viewport_size({"width": 1280, "height": 800})
        fresh.goto(f"{base}/lab/workspaces/stored?token={token}")
        fresh.wait_for_function("() => !!window.jupyterapp", timeout=90_000)
        fresh.evaluate("async () => { await window.jupyterapp.restored; }")
        for stored in sorted((ROOT / "notebooks").glob("[0-9][0-9]-*.ipynb")):
            expected = views_in(stored)
            if not expected:
                continue
            fresh.evaluate("async (path) => { await window.jupyterapp.commands.execute("
                           "'docmanager:open', {path}); return path; }", f"stored/{stored.name}")
            fresh.wait_for_function(
                "(path) => { const w = window.jupyterapp.shell.currentWidget;"
                " return !!(w && w.context && w.context.path === path && w.content"
                " && w.content.widgets.length > 0); }", arg=f"stored/{stored.name}",
                timeout=60_000)
            fresh.wait_for_function(f"() => ({OUTPUTS})().filter(o => o.image).length"
                                    f" === {expected}", timeout=60_000)
            outputs = fresh.evaluate(OUTPUTS)
            assert len(outputs) == expected and all(o["image"] for o in outputs), \
                (stored.name, outputs)
            assert not any(error in (o["text"] or "") for o in outputs for error in ERROR_TEXTS)
            trusted = fresh.evaluate("() => window.jupyterapp.shell.currentWidget.content"
                                     ".widgets.some(c => c.model.trusted)")
            assert trusted is False, stored.name
            shown[stored.name] = len(outputs)
            if stored.name.startswith(("10-", "13-")):
                fresh.locator(".jp-OutputArea-output img").first.scroll_into_view_if_needed()
                fresh.screenshot(path=str(OUTPUT / f"untrusted-{stored.name[:2]}.png"))
            fresh.evaluate("async () => { const w = window.jupyterapp.shell.currentWidget;"
                           " await w.sessionContext.ready; await w.sessionContext.shutdown();"
                           " w.dispose(); }")
    finally:
        fresh.close()
    assert len(shown) == 12 and sum(shown.values()) >= 21, shown
    assert dialogs == []


def notebook_state(moments: list[str]) -> list[dict]:
    """Run the narrative notebook's cells here (no kernel, no display) and say, for each
    moment a view's header names, what the engine held right after that fact: the tracks of
    i1 and its tokens, read from a branch of the engine at that fact."""
    spec = importlib.util.spec_from_file_location("notebook_build", ROOT / "notebooks" / "build.py")
    assert spec is not None and spec.loader is not None
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    scope: dict = {"display": lambda *a, **k: None}
    for kind, body in build.parse(NARRATIVE_SOURCE.read_text(encoding="utf-8")):
        if kind == "code":
            exec(compile(body, NARRATIVE_SOURCE.name, "exec"), scope)
    eng = scope["eng"]
    out = []
    for moment in moments:
        seq = int(moment.split()[2])
        at = eng.branch(at=seq)
        inst = at.instance("i1")
        out.append({"seq": seq, "end": len(eng.facts),
                    "tracks": [[t.id, t.state] for t in inst.tracks],
                    "tokens": sorted([t.node, t.state] for t in inst.tracks
                                     if t.state in ("ready", "running", "waiting",
                                                    "dehydrated") and t.node)})
    return out


# What each graph view on the page shows: its title, header moment, the lineage's tracks
# (id and state, from the Graphviz nodes) and the process view's token badges.
DRAWN = """() => Array.from(document.querySelectorAll('.gobpm-root[data-view=graph]')).map(v => ({
  title: v.querySelector('[data-role=title]').textContent,
  moment: v.querySelector('[data-role=moment]').textContent,
  button: v.querySelector('.gobpm-moment-button').textContent,
  tracks: Array.from(v.querySelectorAll('[data-role=graph] svg g.node')).map(g => {
    const t = Array.from(g.querySelectorAll('text')).map(x => x.textContent);
    return [t[0], t[t.length - 1]]; }),
  tokens: Array.from(v.querySelectorAll('.gobpm-marks .gobpm-badge[data-kind=token]')).map(b =>
    [b.closest('.gobpm-marks').dataset.elementId, b.dataset.state, b.textContent]),
}))"""


def test_after_run_all_each_view_shows_the_moment_its_cell_left(notebook, lab):
    """Notebook 04 run with Run All: its process view and its lineage each show the engine
    as their cell left it — the header names that fact, and the tracks and tokens drawn are
    the engine's right after it (read from a branch at that fact), not the notebook's end;
    "follow live" shows the engine now, "freeze here" stops there. Then saved with
    JupyterLab's default settings (no widget state) and the page reloaded, with the kernel
    still running and then with a new kernel: each view shows its drawing, no error text."""
    page, dialogs = notebook
    base, token = lab
    fresh = page.context.new_page()
    try:
        fresh.set_viewport_size({"width": 1280, "height": 800})
        url = f"{base}/lab/workspaces/narrative/tree/{NARRATIVE}.ipynb?token={token}"
        open_notebook(fresh, url)
        fresh.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
        ready = ("() => document.querySelectorAll("
                 "'.gobpm-root[data-view=graph] [data-role=moment]').length === 2"
                 " && document.querySelector('.gobpm-marks .gobpm-badge') !== null"
                 " && document.querySelectorAll('[data-role=graph] svg g.node').length > 0")
        fresh.wait_for_function(ready, timeout=120_000)
        fresh.wait_for_function(
            "() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel"
            ".status === 'idle'", timeout=120_000)
        fresh.wait_for_timeout(1000)  # the lineage's transition
        drawn = fresh.evaluate(DRAWN)
        assert [d["title"] for d in drawn] == ["process view of i1", "lineage of i1"], drawn
        expected = notebook_state([d["moment"] for d in drawn])
        for view, state in zip(drawn, expected, strict=True):
            assert view["moment"].startswith(f"at fact {state['seq']} · ")
            assert view["button"] == "follow live"
        assert expected[0]["seq"] < expected[1]["seq"] <= expected[1]["end"]  # not the end
        process, lineage = drawn
        tokens = sorted([element, badge_state] for element, badge_state, _count in
                        process["tokens"])
        assert tokens == expected[0]["tokens"] and tokens, (process, expected[0])
        assert lineage["tracks"] == expected[1]["tracks"], (lineage, expected[1])
        fresh.locator(".jp-Cell:has(.gobpm-root[data-view=graph])").first.evaluate(
            "cell => cell.scrollIntoView({block: 'start'})")
        fresh.wait_for_timeout(300)
        fresh.screenshot(path=str(OUTPUT / "frozen-view.png"))

        # "follow live" on the process view: it shows the engine where it stands now
        process_view = fresh.locator(".gobpm-root[data-view=graph]").first
        process_view.locator("[data-action=follow]").click()
        fresh.wait_for_function(
            "() => document.querySelector('.gobpm-root[data-view=graph] [data-role=moment]')"
            ".textContent === 'live'", timeout=30_000)
        wanted = notebook_state([f"at fact {expected[1]['seq']}"])[0]["tokens"]
        deadline = time.monotonic() + 30
        while True:  # the marks arrive after the moment
            live = fresh.evaluate(DRAWN)[0]
            now = sorted([element, badge_state] for element, badge_state, _ in live["tokens"])
            if now == wanted or time.monotonic() > deadline:
                break
            fresh.wait_for_timeout(250)
        assert now == wanted != tokens and live["button"] == "freeze here", (now, wanted)
        fresh.locator(".jp-Cell:has(.gobpm-root[data-view=graph])").first.evaluate(
            "cell => cell.scrollIntoView({block: 'start'})")
        fresh.wait_for_timeout(300)
        fresh.screenshot(path=str(OUTPUT / "live-view.png"))
        process_view.locator("[data-action=freeze]").click()
        fresh.wait_for_function(
            "() => document.querySelector('.gobpm-root[data-view=graph] [data-role=moment]')"
            f".textContent.startsWith('at fact {expected[1]['seq']} · ')", timeout=30_000)

        # saved (default settings: no widget state): each frozen view is kept as its
        # drawing; reopened with the kernel still running, then with a new kernel, the page
        # shows every view's drawing and no error text
        fresh.evaluate("() => { window.jupyterapp.commands.execute('docmanager:save'); }")
        fresh.wait_for_function("() => !window.jupyterapp.shell.currentWidget.context.model"
                                ".dirty", timeout=30_000)
        for restart in (False, True):
            if restart:
                for kernel in api(base, token, "/api/kernels") or []:
                    api(base, token, f"/api/kernels/{kernel['id']}", method="DELETE")
            fresh.reload()
            open_notebook(fresh, fresh.url)
            fresh.wait_for_function(f"() => ({OUTPUTS})().filter(o => o.image).length === 2",
                                    timeout=60_000)
            fresh.wait_for_timeout(2000)  # the widget manager has restored what it can
            outputs = fresh.evaluate(OUTPUTS)
            assert len(outputs) == 2 and all(o["image"] for o in outputs), outputs
            assert not any(error in o["text"] for o in outputs for error in ERROR_TEXTS)
            assert not any(error in fresh.inner_text(".jp-NotebookPanel")
                           for error in ERROR_TEXTS)
        fresh.locator(".jp-OutputArea-output img").first.evaluate(
            "img => img.scrollIntoView({block: 'center'})")
        fresh.screenshot(path=str(OUTPUT / "saved-default-new-kernel.png"))
    finally:
        fresh.close()
    assert dialogs == []


def set_save_state(base: str, token: str, on: bool) -> None:
    """Switch the widget manager's "Save Widget State Automatically" setting."""
    req = urllib.request.Request(
        f"{base}/lab/api/settings/{WIDGETS_PLUGIN}", method="PUT",
        data=json.dumps({"raw": json.dumps({"saveState": on})}).encode(),
        headers={"Authorization": f"token {token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10):
        pass


def test_saved_with_widget_state_the_views_draw_again_with_a_new_kernel(notebook, lab):
    """With "Save Widget State Automatically" on, the narrative notebook run and saved holds
    the shared module whole (its code, not ``{}``); reopened with a new kernel (the old one
    shut down), every view draws again from the saved state, with its moment, and no output
    shows an error text."""
    page, dialogs = notebook
    base, token = lab
    set_save_state(base, token, True)
    fresh = page.context.new_page()
    try:
        fresh.set_viewport_size({"width": 1280, "height": 800})
        open_notebook(fresh, f"{base}/lab/workspaces/state/tree/{NARRATIVE}.ipynb?token={token}")
        fresh.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
        fresh.wait_for_function(
            "() => document.querySelectorAll('.gobpm-root[data-view=graph] [data-role=moment]')"
            ".length === 2", timeout=120_000)
        fresh.wait_for_function(
            "() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel"
            ".status === 'idle'", timeout=120_000)
        moments = [d["moment"] for d in fresh.evaluate(DRAWN)]
        fresh.evaluate("() => { window.jupyterapp.commands.execute('docmanager:save'); }")
        fresh.wait_for_function("() => !window.jupyterapp.shell.currentWidget.context.model"
                                ".dirty", timeout=30_000)
        saved = api(base, token, f"/api/contents/{NARRATIVE}.ipynb?content=1")
        assert isinstance(saved, dict)
        models = saved["content"]["metadata"]["widgets"][
            "application/vnd.jupyter.widget-state+json"]
        (shared,) = [m for m in models["state"].values() if "digest" in m["state"]]
        (code,) = [b for b in shared.get("buffers", []) if b["path"] == ["code"]]
        assert gzip.decompress(base64.b64decode(code["data"])) == \
            (ROOT / "gobpm_nb" / "static" / "shared.js").read_bytes()
        for kernel in api(base, token, "/api/kernels") or []:
            api(base, token, f"/api/kernels/{kernel['id']}", method="DELETE")
        fresh.reload()
        open_notebook(fresh, fresh.url)
        fresh.wait_for_function(  # both views drawn (a root may hold more than one svg)
            f"() => {{ const o = ({OUTPUTS})(); return o.length === 2 && o.every(x => x.view); }}",
            timeout=90_000)
        assert [d["moment"] for d in fresh.evaluate(DRAWN)] == moments
        outputs = fresh.evaluate(OUTPUTS)
        assert len(outputs) == 2 and all(o["view"] for o in outputs), outputs
        assert not any(error in o["text"] for o in outputs for error in ERROR_TEXTS)
        fresh.screenshot(path=str(OUTPUT / "saved-state-new-kernel.png"))
    finally:
        set_save_state(base, token, False)
        fresh.close()
    assert dialogs == []
