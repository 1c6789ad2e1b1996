"""A notebook saved without widget state keeps each view as its drawing (the Jupyter server
extension gobpm_nb.ui.saving), so reopened with a new kernel it shows the drawing, not
JupyterLab's "model not found"; views whose widget state is saved are left as they are."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import nbformat
from conftest import approval

import gobpm_nb as bpm
from gobpm_nb.ui import saving

ROOT = Path(__file__).resolve().parent.parent


def notebook_of(*views):
    """A notebook whose cells each show one view, as the kernel displayed it."""
    nb = nbformat.v4.new_notebook()
    for view in views:
        data, meta = view._repr_mimebundle_()
        cell = nbformat.v4.new_code_cell("view")
        cell.outputs = [nbformat.v4.new_output("display_data", data=data, metadata=meta)]
        nb.cells.append(cell)
    return json.loads(nbformat.writes(nb))  # what the server's pre-save hook is given


def test_every_view_is_saved_as_its_drawing_when_no_widget_state_is_saved():
    """Saved without widget state, each view's output keeps its PNG and text and loses its
    widget view: a frozen view (its moment), a live view and the dashboard (what they
    showed when their cell ran), so the reopened notebook shows a drawing, never an error.
    Another output is left as it is."""
    eng = bpm.Engine()
    inst = eng.start(approval())
    eng.advance("PT1H")
    frozen, live, board = inst.lineage(), inst.process_view(live=True), eng.dashboard()
    nb = notebook_of(frozen, live, board)
    other = nbformat.v4.new_output("display_data", data={saving.WIDGET_VIEW: {
        "model_id": "x", "version_major": 2}, "image/png": "", "text/plain": "other"})
    nb["cells"][0]["outputs"].append(json.loads(json.dumps(other)))
    model = {"type": "notebook", "content": nb}
    saving.pre_save(model=model, path="x.ipynb", contents_manager=None)
    kept = [cell["outputs"][0]["data"] for cell in nb["cells"]]
    assert [sorted(data) for data in kept] == [["image/png", "text/plain"]] * 3
    texts = ["".join(data["text/plain"]) for data in kept]
    assert texts[0].startswith("LineageView('i1'") and "at fact" in texts[0]
    assert "moment='live'" in texts[1]
    assert saving.WIDGET_VIEW in nb["cells"][0]["outputs"][1]["data"]  # not a view of ours
    for view in (frozen, live, board):
        view.close()


def test_a_frozen_view_whose_widget_state_is_saved_stays_a_widget():
    """With its model in the notebook's saved widget state the view draws again from it:
    nothing is dropped; a file that is not a notebook is not touched."""
    eng = bpm.Engine()
    view = eng.start(approval()).lineage()
    nb = notebook_of(view)
    nb["metadata"]["widgets"] = {saving.WIDGET_STATE: {"state": {view.model_id: {}}}}
    assert saving.keep_drawings(nb) == 0
    assert saving.WIDGET_VIEW in nb["cells"][0]["outputs"][0]["data"]
    other = {"type": "file", "content": "text"}
    saving.pre_save(model=other, path="x.txt", contents_manager=None)
    assert other == {"type": "file", "content": "text"}
    view.close()


def test_the_package_enables_the_save_extension_in_jupyter_servers():
    """The wheel installs the server config that enables gobpm_nb.ui.saving, and the module
    is a server extension that registers its pre-save hook."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    shared = project["tool"]["hatch"]["build"]["targets"]["wheel"]["shared-data"]
    (source, target), = shared.items()
    assert target == "etc/jupyter/jupyter_server_config.d/gobpm_nb.json"
    config = json.loads((ROOT / source).read_text())
    assert config == {"ServerApp": {"jpserver_extensions": {"gobpm_nb.ui.saving": True}}}
    assert saving._jupyter_server_extension_points() == [{"module": "gobpm_nb.ui.saving"}]

    class Contents:
        hooks: list = []

        def register_pre_save_hook(self, hook):
            self.hooks.append(hook)

    server = type("Server", (), {"contents_manager": Contents()})()
    saving._load_jupyter_server_extension(server)
    assert Contents.hooks == [saving.pre_save]
