"""Jupyter Notebook 7 in headless Debian Chromium: every view of a stored notebook shows its
drawing when the notebook is opened as a clone has it (not trusted, not run).

Each view's output in ``notebooks/*.ipynb`` holds the widget view, a ``text/plain`` repr and
an ``image/png`` of the same drawing. Notebook 7 does not run a widget in a notebook that is
not trusted, so it must show the PNG instead. The test opens byte-for-byte copies of three
stored notebooks (04, 10, 11: every kind of view) in Notebook 7 (``python -m notebook``, a
page of 1280×800), counts the views in each file's JSON, and asserts that each such output
shows an ``<img>`` holding a decoded PNG of non-zero natural size, whole on screen once
scrolled to, that the page says "Not Trusted", and that nothing on it says "Error displaying
widget" or "model not found". Every request that is not to the local server is blocked. The
picture of notebook 10's first view goes to ``build/browser/notebook7-untrusted.png``.

The JupyterLab side of the same promise is ``tests/test_browser.py``
(``test_a_notebook_opened_unexecuted_and_untrusted_shows_a_drawing_for_every_view``); this file
reuses its helpers and Chromium settings.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from urllib.parse import urlparse

import nbformat
import pytest
from test_browser import (
    CHROMIUM,
    CHROMIUM_ARGS,
    ERROR_TEXTS,
    OUTPUT,
    ROOT,
    WIDGET_VIEW,
    jupyter_server,
    views_in,
)

pytestmark = pytest.mark.slow  # Notebook 7 in headless Chromium

SHOT = OUTPUT / "notebook7-untrusted.png"
# Notebooks whose views are of every kind a stored notebook holds: an instance's process view
# and lineage (04), process views of a modeler's file (10), a dashboard and lineages (11).
# A page of Notebook 7 takes 5-15 s to load and draw on a busy CI machine, so opening every
# stored notebook would take minutes; the JupyterLab test opens them all.
STORED = [ROOT / "notebooks" / f"{name}.ipynb"
          for name in ("04-boundary-events", "10-from-a-modeler", "11-scopes-and-many")]
ERRORS = (*ERROR_TEXTS, "model not found")

# For every output of the notebook on the page that holds a widget view (read from the
# notebook's model, in file order): the image it shows, if any, and its text. Each image is
# marked with its view's number, for the locator that scrolls to it.
OUTPUTS = r"""([view]) => {
  const panel = window.jupyterapp.shell.currentWidget;
  const found = [];
  for (const cell of panel.content.widgets) {
    if (cell.model.type !== 'code') continue;
    const nodes = cell.node.querySelectorAll('.jp-OutputArea-child .jp-OutputArea-output');
    cell.model.outputs.toJSON().forEach((output, n) => {
      if (!(output.data || {})[view]) return;
      const node = nodes[n];
      const img = node && node.querySelector('img');
      if (img) img.dataset.testView = String(found.length);
      found.push({png: Boolean(img && img.src.startsWith('data:image/png')),
                  complete: Boolean(img && img.complete),
                  width: img ? img.naturalWidth : 0, height: img ? img.naturalHeight : 0,
                  text: node ? node.textContent.slice(0, 200) : null});
    });
  }
  return found;
}"""
DRAWN = f"""(args) => ({OUTPUTS})(args)
  .filter(o => o.png && o.complete && o.width > 0 && o.height > 0).length === args[1]"""
# Scroll a view's image to the middle of the page (again while cells above it, drawn as they
# come into sight, move it) until it lies whole inside the page (or, taller than the page,
# fills it); its box on screen.
SHOW = r"""async (n) => {
  const img = document.querySelector(`img[data-test-view="${n}"]`);
  let box = null, seen = false;
  for (let tries = 0; tries < 20 && !seen; tries++) {
    img.scrollIntoView({block: 'center'});
    await new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)));
    box = img.getBoundingClientRect();
    seen = box.width > 0 && box.height > 0 && box.left >= 0 && box.right <= innerWidth
      && ((box.top >= 0 && box.bottom <= innerHeight)
          || (box.top <= 0 && box.bottom >= innerHeight));
  }
  return {seen, top: box.top, bottom: box.bottom, width: box.width, height: box.height};
}"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A Notebook 7 server on a free localhost port, serving copies of the stored notebooks
    (as a clone has them: never signed, never run) from a temporary folder."""
    tmp_path = tmp_path_factory.mktemp("notebook7")
    OUTPUT.mkdir(parents=True, exist_ok=True)
    for stored in STORED:
        shutil.copyfile(stored, tmp_path / stored.name)
    with jupyter_server(tmp_path, ["notebook", "--JupyterNotebookApp.expose_app_in_browser=True"],
                        tmp_path / "settings", "Notebook 7") as running:
        yield running


def test_views_in_the_stored_notebooks_are_counted_from_their_json():
    """The notebooks this test opens hold views, each with its PNG beside it (else the
    browser check below would prove nothing)."""
    assert all(views_in(path) >= 2 for path in STORED)
    assert all(("image/png" in output["data"]) == (WIDGET_VIEW in output["data"])
               for path in STORED for cell in nbformat.read(path, as_version=4).cells
               for output in cell.get("outputs", []) if "data" in output)


def test_notebook7_shows_a_drawing_for_every_view_of_an_untrusted_notebook(server):
    """Stored notebooks, opened in Notebook 7 as a student opens a clone (not trusted, not
    run): each view's output shows its PNG, decoded and on screen, never an error text."""
    from playwright.sync_api import sync_playwright

    base, token = server
    blocked: list[str] = []
    dialogs: list[str] = []

    def local_only(route) -> None:
        url = urlparse(route.request.url)
        if url.scheme in ("data", "blob") or url.hostname in ("127.0.0.1", "localhost"):
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort()

    shown: dict[str, int] = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 800})
            context.route("**/*", local_only)
            page = context.new_page()
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            for stored in STORED:
                page.goto(f"{base}/notebooks/{stored.name}?token={token}", wait_until="commit")
                shown[stored.name] = check_drawings(page, stored)
                if stored.name.startswith("10-"):
                    page.evaluate(SHOW, 0)
                    page.screenshot(path=str(SHOT))
        finally:
            browser.close()
    assert shown == {path.name: views_in(path) for path in STORED}
    assert SHOT.exists()
    assert blocked == [] and dialogs == []


def check_drawings(page, stored: Path) -> int:
    """Wait for the notebook on the page to load and its views to draw; check that each
    view shows its PNG, whole on screen once scrolled to, and that no error text shows."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    expected = views_in(stored)
    page.wait_for_function(
        "(path) => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
        " return !!(w && w.context && w.context.path === path && w.context.isReady"
        " && w.content.widgets.length > 0); }", arg=stored.name, timeout=60_000)
    try:
        page.wait_for_function(DRAWN, arg=[WIDGET_VIEW, expected], timeout=30_000)
    except PlaywrightTimeout:
        pass  # the assertions below say which output shows no drawing
    outputs = page.evaluate(OUTPUTS, [WIDGET_VIEW])
    assert len(outputs) == expected, (stored.name, outputs)
    for n, output in enumerate(outputs):
        assert output["png"] and output["complete"], (stored.name, output)
        assert output["width"] > 0 and output["height"] > 0, (stored.name, output)
        assert not any(e in (output["text"] or "") for e in ERRORS), (stored.name, output)
        box = page.evaluate(SHOW, n)
        assert box["seen"], (stored.name, n, box)
    assert not any(e in page.inner_text("body") for e in ERRORS), stored.name
    assert not page.evaluate("() => window.jupyterapp.shell.currentWidget.content.widgets"
                             ".some(c => c.model.trusted)"), stored.name
    assert page.get_by_text("Not Trusted", exact=True).is_visible(), stored.name
    return len(outputs)
