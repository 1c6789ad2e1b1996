"""What a saved notebook keeps of a view: its drawing, where no widget state is saved.

A view's output holds the widget (``application/vnd.jupyter.widget-view+json``), its text
and its PNG. JupyterLab and Notebook 7 draw the widget whenever its model can be found and,
in a trusted notebook, show "Error displaying widget: model not found" where it cannot —
a notebook saved without widget state (JupyterLab's default) and opened again with a new
kernel — before any code of this package runs. A frozen view (``inst.lineage()``,
``inst.process_view()``) is a picture of one moment, and its PNG is that picture; a live
view's PNG (``live=True``, and the dashboard's lineage) is what it showed when its cell ran,
captioned "live view, shown at fact N". So when such a notebook is saved through a Jupyter
server running this extension, each output of a view (marked ``gobpm_nb`` in its output
metadata) whose widget the notebook does not save is written as its PNG and text only. The
page that saved it keeps its live widgets; reopened, the notebook shows each view's drawing,
never an error. Every view of a notebook saved with widget state is saved as it is: it
draws again from that state.

The extension is enabled by the ``jupyter_server_config.d/gobpm_nb.json`` file the package
installs (``jupyter-config/`` in the repository); ``jupyter server extension disable
gobpm_nb.ui.saving`` turns it off.
"""

from __future__ import annotations

from typing import Any

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
#: The output metadata key every view's display carries: ``{"frozen": true|false}``.
MARK = "gobpm_nb"


def keep_drawings(nb: dict[str, Any]) -> int:
    """Write each output of a view whose widget ``nb`` does not save as its drawing
    and text (drop its widget view); returns how many were changed."""
    metadata = nb.get("metadata") or {}
    saved = ((metadata.get("widgets") or {}).get(WIDGET_STATE) or {}).get("state") or {}
    changed = 0
    for cell in nb.get("cells") or []:
        for output in cell.get("outputs") or []:
            data = output.get("data") or {}
            view = data.get(WIDGET_VIEW)
            mark = (output.get("metadata") or {}).get(MARK)
            if not isinstance(view, dict) or "image/png" not in data or \
                    not isinstance(mark, dict):
                continue
            if view.get("model_id") in saved:
                continue  # the notebook saves the widget: it draws again from that state
            del data[WIDGET_VIEW]
            changed += 1
    return changed


def pre_save(model: dict[str, Any], **_kwargs: Any) -> None:
    """The Jupyter server's pre-save hook: :func:`keep_drawings` on a notebook."""
    if model.get("type") == "notebook" and isinstance(model.get("content"), dict):
        keep_drawings(model["content"])


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "gobpm_nb.ui.saving"}]


def _load_jupyter_server_extension(server: Any) -> None:
    server.contents_manager.register_pre_save_hook(pre_save)
