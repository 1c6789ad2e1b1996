"""The seam between the builder and BPMN files: ``Process.from_bpmn``/``to_bpmn`` reach the
bpmn package through the model's codec registry, the model never imports it, and the bpmn
package never imports the engine."""

import ast

import pytest
from bpmn_shapes import BPMN_DIR
from test_structure import PACKAGE, import_graph

import gobpm_nb as bpm
from gobpm_nb.bpmn.codec import BpmnCodec
from gobpm_nb.model import interchange


def package_imports(prefix):
    """Every gobpm_nb module that modules under ``prefix`` import (lazy ones included)."""
    found = set()
    for name, targets in import_graph().items():
        if name == prefix or name.startswith(prefix + "."):
            found |= targets
    return found


def test_the_bpmn_package_never_imports_the_engine_the_kernel_or_the_api():
    """bpmn reads and writes models only (files through ``gobpm_nb.files``, the bounded
    reader): no engine, kernel, api or ui import."""
    reached = package_imports("gobpm_nb.bpmn")
    assert reached and all(m.startswith(("gobpm_nb.model", "gobpm_nb.errors",
                                         "gobpm_nb.files", "gobpm_nb.bpmn"))
                           for m in reached), reached


def test_the_model_never_imports_the_bpmn_package():
    """The model reaches files only through its registry: no import of gobpm_nb.bpmn."""
    assert not any(m.startswith("gobpm_nb.bpmn") for m in package_imports("gobpm_nb.model"))
    assert (PACKAGE / "model" / "interchange.py").exists()


def test_from_bpmn_and_to_bpmn_go_through_the_registered_codec():
    """Importing gobpm_nb registers the BPMN codec; from_bpmn reads the executable process
    and to_bpmn writes it back."""
    assert isinstance(interchange.codec("bpmn"), BpmnCodec)
    p = bpm.Process.from_bpmn(BPMN_DIR / "signals.bpmn")
    assert p.id == "signals" and "<bpmn:process id=\"signals\"" in p.to_bpmn()
    assert bpm.Process.from_bpmn((BPMN_DIR / "camunda7.bpmn").read_bytes(), id="score").id \
        == "score"


def test_without_a_registered_codec_the_calls_say_what_to_import(monkeypatch):
    """With no codec for the format, from_bpmn raises a ModelError naming the package."""
    monkeypatch.setattr(interchange, "_CODECS", {})
    with pytest.raises(bpm.ModelError, match="import gobpm_nb.bpmn"):
        bpm.Process.from_bpmn(BPMN_DIR / "signals.bpmn")
    with pytest.raises(bpm.ModelError, match="no codec for format 'bpmn'"):
        bpm.Process("p").to_bpmn()


def test_from_bpmn_refuses_a_process_with_errors_listing_them():
    """The shortcut raises the same ModelError as model.process()."""
    with pytest.raises(bpm.ModelError) as info:
        bpm.Process.from_bpmn(BPMN_DIR / "unsupported.bpmn")
    assert len(info.value.problems) == 2


def test_a_flow_may_be_given_its_id_for_one_pair_only():
    """flow(a, b, id=...) names that flow; with a chain of more ids, an id is refused."""
    p = bpm.Process("p")
    assert p.flow("a", "b", id="f1") == ["f1"]
    with pytest.raises(bpm.ModelError, match="give exactly two ids"):
        p.flow("a", "b", "c", id="f2")


def test_a_placeholder_keeps_the_graph_and_validation_refuses_it():
    """unsupported() stands in for an element read from a file: flows around it are fine,
    validate() names it and the reason, once."""
    p = bpm.Process("p")
    p.start("s")
    p.unsupported("sub", tag="subProcess", reason="subprocesses are not supported yet",
                  activity=True)
    p.unsupported("esc", tag="boundaryEvent", reason="escalation", attached_to="sub")
    p.end("e")
    p.flow("s", "sub", "e")
    p.flow("esc", "e")
    with pytest.raises(bpm.ModelError) as info:
        p.validate()
    assert info.value.problems == [
        "subProcess 'sub' is not supported: subprocesses are not supported yet",
        "boundaryEvent 'esc' is not supported: escalation"]


def test_the_registry_module_declares_a_protocol_not_an_implementation():
    """interchange.py imports nothing from the package but errors (and, for annotations
    only, the process module)."""
    tree = ast.parse((PACKAGE / "model" / "interchange.py").read_text())
    names = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert names == {"__future__", "typing", "errors", "process"}


def test_the_bpmn_package_and_lxml_load_on_first_use():
    """`import gobpm_nb` leaves lxml (~5 MB of memory) unloaded; `Process.from_bpmn` and
    `load_bpmn` load it when first called and read the file as always."""
    import subprocess
    import sys
    from pathlib import Path

    source = Path(__file__).resolve().parents[1] / "benchmarks" / "data" / "one_timer.bpmn"
    script = (
        "import sys, gobpm_nb as bpm\n"
        "assert 'lxml' not in sys.modules and 'gobpm_nb.bpmn' not in sys.modules\n"
        f"p = bpm.Process.from_bpmn(open({str(source)!r}).read())\n"
        "assert 'lxml' in sys.modules\n"
        f"m = bpm.load_bpmn({str(source)!r})\n"
        "print(p.id, type(m).__name__, m.process().id)\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True)
    assert out.stdout.split() == ["one_timer", "BpmnModel", "one_timer"]
