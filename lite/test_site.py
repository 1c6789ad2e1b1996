"""The notebooks in JupyterLite: a static site, no server, no outside request.

``lite/build.py`` builds the site (or a fresh build under ``build/lite`` is reused); this file
serves it from 127.0.0.1 with Python's http.server, opens it in headless Chromium at
1280×800 with every request that is not to 127.0.0.1 blocked, opens notebooks in JupyterLite's
JupyterLab and runs every cell with the Pyodide kernel. For each notebook it checks: no cell
shows an error, no request was blocked, every widget output draws an ``<svg>`` (a dashboard
both its process view and its lineage), and the text outputs equal the stored notebook's, as
nbval compares them (``stream`` text and ``text/plain``, with ``notebooks/sanitize.cfg``
applied to both sides, cells marked ``NBVAL_IGNORE_OUTPUT`` left out; consecutive stream
chunks of one stream are joined, as the browser and nbclient split them differently), but
for the one difference the browser makes on purpose (``EXPECTED_DIFFERENCES``). It prints
the time from opening the page to the kernel's first answer, and saves a picture of each
notebook (its last view in sight) to ``build/browser/lite-NN.png``, and of each notebook's
last dashboard to ``build/browser/lite-NN-dashboard.png``.

Not in the default ``pytest`` run (it lives outside ``testpaths``: a build and a Pyodide
start take a minute or more): ``bash .ci/lite`` installs the ``lite`` extra, builds the site
and runs this file.
"""

from __future__ import annotations

import configparser
import functools
import http.server
import json
import os
import re
import threading
import time
from pathlib import Path
from urllib.parse import urlparse

import pytest

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "build" / "lite"
OUTPUT = ROOT / "build" / "browser"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
# What the site is built from: a build older than any of these is made again.
SOURCES = ["gobpm_nb/**/*.py", "gobpm_nb/**/*.js", "notebooks/*.ipynb", "lite/*", "pyproject.toml"]
# The notebooks that run in the browser: all of them, every output as stored, but for what
# EXPECTED_DIFFERENCES names (README, "In the browser"). Where CPython and the browser take
# different paths the notebook says so: 07 runs its crashing script in the kernel (Pyodide
# starts no process), 08 draws its chart as SVG of its own (no matplotlib there), 09's store
# locks without flock (Pyodide's fcntl has none), 10 and 13 read BPMN without lxml.
# GOBPM_LITE_NOTEBOOKS="01-build-and-step 09-design-review" runs some of them.
# 15 is not run there: a population needs pandas and matplotlib (the `population` extra), and
# PyPI has neither for Pyodide (the npm package holds only Pyodide's core); the notebook says so.
NOT_IN_BROWSER = {"15-what-if"}
NOTEBOOKS = os.environ.get("GOBPM_LITE_NOTEBOOKS", " ".join(
    p.stem for p in sorted((ROOT / "notebooks").glob("[0-9][0-9]-*.ipynb"))
    if p.stem not in NOT_IN_BROWSER)).split()
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
BLOCKED: list[str] = []


def fresh_build() -> Path:
    """``build/lite``, built again unless it is newer than everything it is built from."""
    built = SITE / "jupyter-lite.json"
    newest = max(p.stat().st_mtime for pattern in SOURCES for p in ROOT.glob(pattern))
    if not built.exists() or built.stat().st_mtime < newest:
        import importlib.util
        spec = importlib.util.spec_from_file_location("lite_build", ROOT / "lite" / "build.py")
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        module.build(SITE)
    return SITE


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    """A static file server that says nothing and names the module and WebAssembly types."""
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map,
                      ".mjs": "text/javascript", ".js": "text/javascript",
                      ".wasm": "application/wasm", ".json": "application/json"}

    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass


@pytest.fixture(scope="module")
def site():
    """The built site served on 127.0.0.1; yields its base URL."""
    folder = fresh_build()
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def local_only(route) -> None:
    """Let the page reach the local server only (and note what else it tried)."""
    url = urlparse(route.request.url)
    if url.scheme in ("data", "blob") or url.hostname == "127.0.0.1":
        route.continue_()
    else:
        BLOCKED.append(route.request.url)
        route.abort()


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS,
                                      headless=True)
        try:
            yield chromium
        finally:
            chromium.close()


def sanitizers() -> list[tuple[re.Pattern[str], str]]:
    """notebooks/sanitize.cfg's patterns, as nbval applies them."""
    cfg = configparser.ConfigParser(interpolation=None)
    cfg.read(ROOT / "notebooks" / "sanitize.cfg")
    return [(re.compile(cfg[s]["regex"]), cfg[s]["replace"]) for s in cfg.sections()]


def texts(cell: dict) -> list[tuple[str, str]]:
    """What nbval compares of a code cell: stream text and text/plain, sanitised; consecutive
    chunks of one stream joined."""
    found: list[tuple[str, str]] = []
    for output in cell.get("outputs", []):
        kind = output["output_type"]
        if kind == "stream":
            text = "".join(output["text"])
            if found and found[-1][0] == output["name"]:
                found[-1] = (output["name"], found[-1][1] + text)
            else:
                found.append((output["name"], text))
        elif kind in ("execute_result", "display_data") and "text/plain" in output["data"]:
            found.append(("text/plain", "".join(output["data"]["text/plain"])))
        elif kind == "error":
            found.append(("error", f"{output['ename']}: {output['evalue']}"))
    clean = sanitizers()
    for i, (kind, text) in enumerate(found):
        for pattern, replace in clean:
            text = pattern.sub(replace, text)
        found[i] = (kind, text)
    return found


# What a notebook prints differently in the browser, on purpose (the notebook says why).
# 10 and 13: lxml cannot be installed there, so a BPMN file is read with the standard library and
# not validated against the BPMN XSD; each report says so in one more warning, on the file
# (gobpm_nb.bpmn.schema.NOT_VALIDATED). The browser's text is compared without those notes,
# and with each file's warning total one more than the stored one (a process's own count
# is compared as it is: the note is on the file).
XSD_NOTE = re.compile(r"\n\nthe file \(notes that concern no one process\)\n  warning line +\d+  "
                      r"[^\n]*: not validated against the BPMN 2\.0 XML Schema[^\n]*\n +→ [^\n]*")
# a file's totals: BpmnModel's repr, the report's heading, the check command's first line
TOTALS = re.compile(r"((?:BpmnModel\(|Import report: |process\(es\), )[^\n]*?)"
                    r"(\d+) warning(?:s|\(s\))?")
EXPECTED_DIFFERENCES = {"10-from-a-modeler": 2,  # notebook -> XSD notes its outputs hold
                        "13-run-as-drawn": 2}


def without_xsd_notes(got: list[tuple[str, str]], want: list[tuple[str, str]]
                      ) -> tuple[list[tuple[str, str]], list[tuple[str, str]], int]:
    """The browser's texts without their XSD notes, and both sides with the files' warning
    totals masked once the browser's are found one more than the stored; the notes taken
    out."""
    taken = 0
    for i, (kind, text) in enumerate(got):
        text, n = XSD_NOTE.subn("", text)
        taken += n
        if i < len(want) and want[i][0] == kind:
            totals = [int(m[2]) for m in TOTALS.finditer(text)]
            assert totals == [int(m[2]) + 1 for m in TOTALS.finditer(want[i][1])], totals
        got[i] = (kind, TOTALS.sub(r"\1N warnings", text))
    return got, [(k, TOTALS.sub(r"\1N warnings", t)) for k, t in want], taken


def ignored(cell: dict) -> bool:
    """nbval does not compare this cell's outputs (its NBVAL_IGNORE_OUTPUT marker)."""
    source = "".join(cell.get("source", ""))
    return "# NBVAL_IGNORE_OUTPUT" in source or \
        "nbval-ignore-output" in cell.get("metadata", {}).get("tags", [])


def run_in_lite(page, base: str, name: str) -> tuple[dict, float, float]:
    """Open a notebook in JupyterLite, run every cell; returns the notebook as it is then
    (nbformat JSON), the seconds from opening the page to the kernel's first answer and the
    seconds the cells took to run."""
    opened = time.monotonic()
    page.goto(f"{base}/lab/index.html?path=notebooks/{name}.ipynb")
    page.wait_for_function(
        "() => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
        " return !!(w && w.sessionContext && w.sessionContext.session"
        " && w.sessionContext.session.kernel); }", timeout=120_000)
    page.evaluate(
        "async () => { const w = window.jupyterapp.shell.currentWidget;"
        " await w.context.ready; await w.sessionContext.ready;"
        " await w.sessionContext.session.kernel.info; }")
    ready = time.monotonic() - opened
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    page.wait_for_timeout(1000)  # the kernel turns busy
    page.wait_for_function(
        "() => { const w = window.jupyterapp.shell.currentWidget;"
        " const k = w.sessionContext.session.kernel;"
        " const cells = w.model.toJSON().cells.filter(c => c.cell_type === 'code');"
        " const failed = cells.some(c => c.outputs.some(o => o.output_type === 'error'));"
        " return k.status === 'idle'"
        " && (failed || cells.every(c => c.execution_count !== null)); }",
        timeout=600_000)
    ran = time.monotonic() - opened - ready
    return page.evaluate("() => window.jupyterapp.shell.currentWidget.model.toJSON()"), ready, ran


def compare(name: str, code: list[dict], expected: list[dict]) -> None:
    """The browser's text outputs against the stored ones, cell by cell, as nbval compares
    them (a cell nbval ignores is not compared), but for EXPECTED_DIFFERENCES."""
    notes = 0
    for number, (got, want) in enumerate(zip(code, expected, strict=True), start=1):
        if ignored(want):
            continue
        seen, stored = texts(got), texts(want)
        if name in EXPECTED_DIFFERENCES:
            seen, stored, taken = without_xsd_notes(seen, stored)
            notes += taken
        assert seen == stored, f"{name}, code cell {number}"
    assert notes == EXPECTED_DIFFERENCES.get(name, 0)


def check_views(page, views: int) -> None:
    """Every widget output draws an SVG; a dashboard draws both its process view and its
    lineage."""
    page.wait_for_function(
        "(n) => { const roots = document.querySelectorAll('.jp-OutputArea-output .gobpm-root');"
        " return roots.length === n && Array.from(roots).every(r => r.querySelector('svg'))"
        " && Array.from(roots).filter(r => r.dataset.view === 'dashboard').every(r =>"
        " r.querySelector('[data-role=process-panel] svg')"
        " && r.querySelector('[data-role=lineage] svg')); }", arg=views, timeout=60_000)


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_a_notebook_runs_in_jupyterlite_as_it_ran_when_stored(site, browser, name):
    """Every cell runs in the browser's Python with no error and no outside request; every
    widget output draws an SVG; the text outputs equal the stored notebook's."""
    stored = json.loads((ROOT / "notebooks" / f"{name}.ipynb").read_text(encoding="utf-8"))
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    context.route("**/*", local_only)
    page = context.new_page()
    try:
        BLOCKED.clear()
        ran, ready, seconds = run_in_lite(page, site, name)
        print(f"\n{name}: page open to kernel ready {ready:.1f} s, every cell run {seconds:.1f} s")
        code = [c for c in ran["cells"] if c["cell_type"] == "code"]
        expected = [c for c in stored["cells"] if c["cell_type"] == "code"]
        errors = [o for c in code for o in c.get("outputs", []) if o["output_type"] == "error"]
        assert not errors, [f"{e['ename']}: {e['evalue']}" for e in errors]
        assert not BLOCKED
        views = sum(WIDGET_VIEW in o.get("data", {}) for c in code for o in c.get("outputs", []))
        assert views == sum(WIDGET_VIEW in o.get("data", {})
                            for c in expected for o in c.get("outputs", []))
        if views:
            check_views(page, views)
        compare(name, code, expected)
        OUTPUT.mkdir(parents=True, exist_ok=True)
        if views:  # the picture shows the notebook's last view
            page.locator(".jp-OutputArea-output .gobpm-root").last.scroll_into_view_if_needed()
        page.screenshot(path=str(OUTPUT / f"lite-{name[:2]}.png"))
        dashboards = page.locator('.jp-OutputArea-output .gobpm-root[data-view="dashboard"]')
        if dashboards.count():  # the whole dashboard: a page tall enough for it
            page.set_viewport_size({"width": 1280, "height": 1600})
            page.wait_for_timeout(1000)  # the views fit themselves to the new size
            dashboards.last.screenshot(path=str(OUTPUT / f"lite-{name[:2]}-dashboard.png"))
    finally:
        context.close()
