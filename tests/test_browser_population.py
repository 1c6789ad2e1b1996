"""The population dashboard in a real browser: JupyterLab in headless Debian Chromium, driven
by Playwright, every request off the machine blocked (as in ``test_browser.py``, whose server
and page helpers this uses).

A notebook runs notebook 15's order desk with twice the orders, stopped on Friday at noon,
with ``run(dashboard=True)``; then a two-month run of it, also with a dashboard. At 1280×800
the test checks that the first dashboard shows the run's end as Python computed it (the
same scenario run here): the clock, every case counter, each pool's row, and on the BPMN
diagram each element with tokens shaded in its shade with its count on it (and no other
element shaded); that the legend says what is counted, the diagram's labels and counts are
readable, the bpmn.io watermark shows and the dashboard fits the screen. The second one
must have been seen running, its counters growing, before it showed its end. The picture
goes to ``build/browser/what-if-dashboard.png`` (and over
``docs/screenshots/what-if-dashboard.png`` with ``GOBPM_SCREENSHOTS=docs``).
"""

from __future__ import annotations

import json

import nbformat
import pytest
from test_browser import (
    CHROMIUM,
    CHROMIUM_ARGS,
    FIT,
    OUTPUT,
    ROOT,
    SETTINGS,
    assert_watermarks_visible,
    jupyter_server,
    keep,
    local_only,
    open_and_run,
)

pytestmark = pytest.mark.slow  # JupyterLab in headless Chromium

SHOT = ROOT / "docs" / "screenshots" / "what-if-dashboard.png"
VIEW = ".gobpm-root[data-view=population]"
DESK = '''import gobpm_nb as bpm

desk = bpm.Process("order_to_cash")
desk.start("received", name="Order received")
desk.user_task("check", name="Check order")
desk.timer_boundary("sla", attached_to="check", duration="PT4H", interrupting=True)
desk.user_task("escalate", name="Escalated check")
desk.user_task("invoice", name="Send invoice")
desk.end("invoiced", name="Invoiced")
desk.flow("received", "check", "invoice", "invoiced")
desk.flow("sla", "escalate", "invoice")
WEEKDAYS = ("mon", "tue", "wed", "thu", "fri")


def per_hour(n):
    return {"schedule": {day: {f"{h:02d}": n for h in range(8, 17)} for day in WEEKDAYS}}


def staff(clerks):
    return {"clerks": {"size": clerks, "calendar": "office", "cost_per_hour": 30},
            "supervisor": {"size": 1, "calendar": "office", "cost_per_hour": 50}}


base = bpm.Scenario(
    desk, start="2026-01-05T00:00:00", horizon="P5D", seed=7, sla="PT8H",
    arrivals=per_hour(3),
    durations={"check": {"lognormal": {"mean": "PT15M", "sd": "PT8M"}},
               "invoice": {"exponential": {"mean": "PT10M"}},
               "escalate": {"fixed": "PT20M"}},
    pools=staff(2),
    calendars={"office": {day: ["09:00-17:00"] for day in WEEKDAYS}},
    assign={"check": "clerks", "invoice": "clerks", "escalate": "supervisor"})
friday = base.replace(arrivals=per_hour(6), horizon="P4DT12H", drain="PT0S")
months = base.replace(arrivals=per_hour(6), horizon="P60D", pools=staff(3), seed=8)
'''
CELLS = [DESK, "noon = friday.run(progress=False, dashboard=True)",
         "later = months.run(progress=False, dashboard=True)"]
NOTEBOOK = "what-if.ipynb"
# Every change of a population dashboard's phase or counters, as the page saw it.
RECORD = """
window.__population = [];
new MutationObserver(() => {
  document.querySelectorAll('.gobpm-root[data-view=population]').forEach((root, i) => {
    const phase = root.querySelector('[data-role=phase]');
    const started = root.querySelector('.gobpm-counter[data-name="cases started"]');
    if (!phase || !started) return;
    const seen = [i, phase.textContent, started.firstChild.textContent];
    const last = window.__population[window.__population.length - 1];
    if (JSON.stringify(last) !== JSON.stringify(seen)) window.__population.push(seen);
  });
}).observe(document, {subtree: true, childList: true, characterData: true});
"""
# The shape of an element: its classes, its fill on screen, its badges' texts and sizes.
SHAPE = """([scope, id]) => {
  const root = document.querySelector(scope);
  const shape = root.querySelector(`g.djs-element[data-element-id="${id}"]`);
  const visual = shape.querySelector('.djs-visual > :first-child');
  const badges = Array.from(root.querySelectorAll(
    `.gobpm-marks[data-element-id="${id}"] .gobpm-badge`));
  return {classes: Array.from(shape.classList), fill: getComputedStyle(visual).fill,
          badges: badges.map(b => [b.dataset.kind, b.textContent,
                                   b.getBoundingClientRect().height])};
}"""
# The smallest label of the diagram on screen, in px (its font size times the zoom).
SMALLEST_LABEL = """(scope) => Math.min(...Array.from(document.querySelectorAll(
  scope + ' .djs-visual text')).filter(t => t.textContent.trim()).map(t =>
  parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a))"""


def expected():
    """The two runs as Python computes them, in this process."""
    space: dict = {}
    exec(DESK, space)  # the notebook's own first cell
    return space["friday"].run(progress=False), space["months"].run(progress=False)


def rgb(colour: str) -> str:
    r, g, b = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgb({r}, {g}, {b})"


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    """Chromium at 1280×800 showing the notebook in JupyterLab, every cell run once."""
    from playwright.sync_api import sync_playwright

    root = tmp_path_factory.mktemp("population")
    OUTPUT.mkdir(parents=True, exist_ok=True)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in CELLS]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbformat.write(nb, root / NOTEBOOK)
    settings = root / "lab-settings"
    for name, value in SETTINGS.items():
        (settings / name).parent.mkdir(parents=True, exist_ok=True)
        (settings / name).write_text(json.dumps(value))
    with jupyter_server(root, ["lab", "--LabApp.expose_app_in_browser=True"], settings,
                        "JupyterLab") as (base, token), sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS,
                                     headless=True)
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 800})
            context.route("**/*", local_only)
            context.add_init_script(RECORD)
            tab = context.new_page()
            dialogs: list[str] = []
            tab.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            open_and_run(tab, f"{base}/lab/tree/{NOTEBOOK}?token={token}")
            tab.evaluate("() => window.jupyterapp.shell.collapseLeft()")
            tab.wait_for_function(
                f"() => document.querySelectorAll('{VIEW} [data-role=phase]').length === 2"
                f" && Array.from(document.querySelectorAll('{VIEW} [data-role=phase]'))"
                ".every(p => p.textContent === 'ended')", timeout=180_000)
            yield tab
            assert dialogs == []
        finally:
            browser.close()


def test_the_dashboard_shows_the_runs_end_with_a_shaded_diagram(page):
    noon, _ = expected()
    final = noon.final
    first = f"{VIEW} >> nth=0"
    root = page.locator(first)
    root.scroll_into_view_if_needed()
    assert root.locator("[data-role=phase]").inner_text() == "ended"
    assert root.locator("[data-role=clock]").inner_text() == final.clock
    chips = root.locator(".gobpm-counter")
    shown = {chips.nth(i).get_attribute("data-name"):
             int(chips.nth(i).locator(".gobpm-counter-value").inner_text())
             for i in range(chips.count())}
    assert shown == final.counters and shown["running"] == 40
    rows = root.locator("[data-role=pools] tbody tr")
    assert [rows.nth(i).locator("td").all_inner_texts() for i in range(rows.count())] == [
        [p["pool"], f"{p['busy']} of {p['size']}", str(p["waiting"]),
         "open" if p["open"] else "closed"] for p in final.pools]
    scope = f"{VIEW}:has(.gobpm-counter)"
    page.wait_for_selector(f"{scope} g.djs-shape.gobpm-heat", timeout=60_000)
    from gobpm_nb.render.heat import shade

    assert set(final.heat) == {"check", "escalate", "invoice"}
    for node, count in final.heat.items():
        shape = page.evaluate(SHAPE, [scope, node])
        assert "gobpm-heat" in shape["classes"], shape
        assert shape["fill"] == rgb(shade(count)[0]), shape
        assert [b[:2] for b in shape["badges"]] == [["heat", str(count)]], shape
        assert shape["badges"][0][2] >= 14, shape  # a count one reads at a glance
    for node in ("received", "invoiced", "sla"):
        assert "gobpm-heat" not in page.evaluate(SHAPE, [scope, node])["classes"]
    legend = root.locator("[data-role=legend] .gobpm-legend-item").all_inner_texts()
    assert legend[0] == "tokens standing here now: 1" and legend[-1] == "50 or more"
    assert page.evaluate(SMALLEST_LABEL, scope) >= 10
    assert_watermarks_visible(page, scope)
    root.scroll_into_view_if_needed()
    fit = page.evaluate(FIT, VIEW)  # the first one's top at the top of the notebook's view
    assert abs(fit["top"]) <= 1 and fit["bottom"] <= fit["view"] + 1, fit  # no scrolling
    assert fit["scrollWidth"] <= fit["clientWidth"] + 1, fit
    shot = OUTPUT / "what-if-dashboard.png"
    page.screenshot(path=str(shot))
    keep(shot, SHOT)


def test_the_dashboard_follows_a_run_while_it_runs(page):
    _, months = expected()
    seen = page.evaluate("() => window.__population")
    second = [(phase, int(started)) for i, phase, started in seen if i == 1]
    running = [started for phase, started in second if phase == "running"]
    assert len(set(running)) >= 3, second  # it grew while the run went on
    assert running == sorted(running)
    assert second[-1] == ("ended", months.final.counters["cases started"])
    assert running[-1] < second[-1][1]
