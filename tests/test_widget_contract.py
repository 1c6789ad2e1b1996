"""The widgets' contract with the front end is written from Python (gobpm_nb/ui/contract.py):
the committed widgets/src/contract.js is what Python writes now, every synced trait has its
words in its class docstring, and the front-end build refuses a stale contract or a trait
no model declares."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import traitlets as t

from gobpm_nb import vocabulary
from gobpm_nb.render.marks import colours
from gobpm_nb.ui import contract
from gobpm_nb.ui.widgets import GraphWidget

ROOT = Path(__file__).resolve().parent.parent
WIDGETS = ROOT / "widgets"


def test_the_committed_contract_is_what_python_writes_now():
    """widgets/src/contract.js differs from a fresh generation: regenerate and commit it."""
    assert contract.stale() is None, contract.stale()


def test_check_fails_on_a_stale_contract_and_says_what_to_run(tmp_path, capsys):
    stale = tmp_path / "contract.js"
    stale.write_text(contract.render().replace(vocabulary.HOLD_KINDS[-1], "hold"), "utf-8")
    assert contract.main(["--check", str(stale)]) == 1
    said = capsys.readouterr().err
    assert "contract check failed" in said and "python -m gobpm_nb.ui.contract" in said
    assert contract.main([str(stale)]) == 0 and contract.main(["--check", str(stale)]) == 0


def test_the_contract_carries_the_python_side():
    """Trait names in declaration order, the palette of the marks, the vocabulary words."""
    exported = contract.exports()
    assert exported["TRAITS"]["graph"][:3] == ["_shared", "_shared_digest", "view"]
    assert "selected" in exported["TRAITS"]["dashboard"]
    assert exported["TRAITS"]["shared"] == ["digest", "code"]
    assert exported["PALETTE"] == colours() and vocabulary.DEHYDRATED in exported["PALETTE"]
    assert exported["HOLD_KINDS"] == list(vocabulary.HOLD_KINDS)
    assert exported["HOLD_COLUMNS"][:3] == ["instance", "track", "kind"]


def test_a_synced_trait_needs_words_in_its_class_docstring():
    class Careless(GraphWidget):
        """A graph that can zoom, and pan without saying so.

        Traits (all synced):
            zoom: float; how far the graph is zoomed.
        """

        __module__ = "gobpm_nb.ui.widgets"  # as if declared there: its traits are ours
        zoom = t.Float(1.0).tag(sync=True)
        pan = t.Float(0.0).tag(sync=True)

    with pytest.raises(ValueError, match=r"no words for synced trait\(s\) \['pan'\]"):
        contract.typedef("graph", Careless, "CarelessTraits")


def _node_build(widgets: Path, out: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHON=sys.executable,
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    return subprocess.run([shutil.which("node") or "node", "build.mjs", "--out", str(out)],
                          cwd=widgets, env=env, capture_output=True, text=True, timeout=600,
                          check=False)


@pytest.mark.parametrize("change, said", [
    (("src/contract.js", '"#2b8a3e"', '"#000000"'), "contract check failed"),
    (("src/graphView.js", 'trait(model, "title"', 'trait(model, "titel"'),
     'src/graphView.js: "titel"'),
])
def test_the_front_end_build_refuses_a_stale_contract_or_an_unknown_trait(tmp_path, change,
                                                                           said):
    """A copy of widgets/ with one change: `node build.mjs` stops before bundling."""
    if shutil.which("node") is None or not (WIDGETS / "node_modules" / "esbuild").exists():
        pytest.skip("Node.js and widgets/node_modules are needed to run the build")
    copy = tmp_path / "widgets"
    shutil.copytree(WIDGETS / "src", copy / "src")
    shutil.copy(WIDGETS / "build.mjs", copy / "build.mjs")
    (copy / "node_modules").symlink_to(WIDGETS / "node_modules")
    name, old, new = change
    text = (copy / name).read_text(encoding="utf-8")
    assert old in text
    (copy / name).write_text(text.replace(old, new), encoding="utf-8")
    done = _node_build(copy, tmp_path / "out")
    assert done.returncode == 1, done.stdout + done.stderr
    assert said in done.stderr and not (tmp_path / "out").exists(), done.stderr
