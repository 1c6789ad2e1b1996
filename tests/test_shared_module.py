"""One copy of the heavy front-end parts per page: every widget carries a small loader and a
reference to the kernel's one SharedModule, which carries the views, Graphviz and the BPMN
viewer once; a notebook saved with its widget state grows by kilobytes per widget."""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

import nbformat
import pytest
from conftest import approval
from nbclient import NotebookClient

import gobpm_nb as bpm
from gobpm_nb.ui import GraphWidget
from gobpm_nb.ui import shared as shared_module
from gobpm_nb.ui.shared import SHARED_JS, SharedModule

STATE_MIME = "application/vnd.jupyter.widget-state+json"


def test_every_widget_refers_to_one_shared_module():
    """A dashboard, a process view and a plain graph made in one go all name the same shared
    module, whose code is shared.js (gzip) under its digest."""
    eng = bpm.Engine()
    inst = eng.start(approval())
    widgets = [eng.dashboard(), inst.process_view(), GraphWidget()]
    shared = {id(w._shared) for w in widgets}
    assert len(shared) == 1
    module = widgets[0]._shared
    assert isinstance(module, SharedModule)
    code = SHARED_JS.read_bytes()
    assert gzip.decompress(module.code) == code
    assert module.digest == hashlib.sha256(code).hexdigest()[:16]
    assert all(w._shared_digest == module.digest for w in widgets)
    assert len(module.code) < len(code) * 0.8  # compressed for the trip
    for w in widgets:
        w.close()


def test_a_closed_shared_module_is_made_again():
    """After the shared module was closed (Widget.close_all, say), the next widget gets a new
    one with the same digest: the browser still finds its copy by digest."""
    first = GraphWidget()
    old = first._shared
    old.close()
    second = GraphWidget()
    assert second._shared is not old and second._shared.comm is not None
    assert second._shared_digest == old.digest
    assert shared_module.shared_module() is second._shared
    first.close()
    second.close()


def test_a_widget_state_is_a_few_kilobytes():
    """What a live process view sends (and a saved notebook keeps) for itself is its loader,
    its BPMN document and marks, and a reference to the shared module: kilobytes."""
    eng = bpm.Engine()
    view = eng.start(approval()).process_view()
    eng.advance("PT1H")
    state = view.get_state()
    assert state["_shared"].startswith("IPY_MODEL_")
    size = len(json.dumps(state))
    assert size < 20_000, size
    assert len(state["_esm"]) < 4_000
    view.close()


BUILD = f"""\
import sys
sys.path.insert(0, {str(Path(__file__).parent / "scenarios")!r})
import gobpm_nb as bpm
from recovery_processes import approval
eng = bpm.Engine()
inst = eng.start(approval())
eng.advance("PT1H")"""


@pytest.mark.slow  # a Jupyter kernel
def test_a_notebook_saved_with_three_widgets_grows_by_kilobytes_per_widget(tmp_path):
    """Executed with its widget state stored, a notebook showing a dashboard, a process view
    and a lineage holds the shared module once and a few kilobytes per widget."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in
                (BUILD, "eng.dashboard()", "inst.process_view()", "inst.lineage()")]
    NotebookClient(nb, timeout=120, kernel_name="python3", store_widget_state=True,
                   record_timing=False).execute()
    path = tmp_path / "three.ipynb"
    nbformat.write(nb, path)
    models = nb.metadata["widgets"][STATE_MIME]["state"]
    sizes = {mid: len(json.dumps(model)) for mid, model in models.items()}
    shared = [mid for mid, m in models.items() if "digest" in m["state"]]
    views = [mid for mid, m in models.items() if m["state"].get("_shared")]
    assert len(shared) == 1 and len(views) == 3, sorted(sizes.values())
    assert all(sizes[mid] < 40_000 for mid in views), [sizes[mid] for mid in views]
    payload = len(gzip.compress(SHARED_JS.read_bytes(), 9, mtime=0))
    assert sizes[shared[0]] < payload * 4 / 3 + 2_000  # the base64 of the gzip, once
    total = path.stat().st_size
    assert total < sizes[shared[0]] + 3 * 40_000 + 60_000, total
    print(f"saved notebook: {total} bytes; shared module {sizes[shared[0]]} bytes; "
          f"widgets {[sizes[mid] for mid in views]} bytes")
