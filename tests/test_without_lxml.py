"""Without lxml (Pyodide has no wheel of it): the package imports, runs, draws and writes with
the standard library (``gobpm_nb.bpmn.plaintree``), and reads BPMN files with the same
hardening and source lines, saying in the report that the file was not checked against the
XSD. The runs below hide lxml from a fresh interpreter (``sys.modules['lxml'] = None``)."""

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import gobpm_nb as bpm
from gobpm_nb.bpmn import drawing, plaintree, xmllib
from gobpm_nb.bpmn.document import serialize
from gobpm_nb.bpmn.schema import NOT_VALIDATED
from gobpm_nb.bpmn.writer import new_document

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"  # (not bpmn_shapes's: it imports lxml, and so is imported here)
FILES = sorted([*(DATA / "bpmn").glob("*.bpmn"), *(DATA / "miwg").glob("*.bpmn"),
                *(DATA / "miwg_extra").glob("*.bpmn"),
                ROOT / "benchmarks" / "data" / "one_timer.bpmn"])
HIDE = "import sys\nsys.modules['lxml'] = None  # what Pyodide has: no lxml\n"
APPROVAL = """
import gobpm_nb as bpm
p = bpm.Process("approval")
p.start("start")
p.user_task("approve", assignee="alice")
p.timer_boundary("late", attached_to="approve", duration="PT24H", interrupting=True)
p.end("done"); p.end("escalated")
p.flow("start", "approve", "done")
p.flow("late", "escalated")
"""


def run_hidden(script):
    """Run ``script`` in a fresh interpreter that cannot import lxml; its stdout as JSON."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", HIDE + script], capture_output=True,
                         text=True, cwd=ROOT, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def read_all():
    """For every file: its notes, its processes' element kinds, the file written back, and
    each process written as a new file and drawn (the XML a process view shows)."""
    out = {}
    for f in FILES:
        m = bpm.load_bpmn(f)
        rec = {"notes": [list(n) for n in m.report], "back": m.to_bpmn(),
               "kinds": {pid: [[e.id, type(e).__name__] for e in p.elements]
                         for pid, p in m.processes.items()}}
        for pid, p in m.processes.items():
            rec[f"new {pid}"] = serialize(new_document(p))
            if not m.errors(pid):
                picture = drawing.drawing(p.definition())
                rec[f"drawn {pid}"] = [picture.xml, dict(picture.flows), picture.source]
        out[str(f)] = rec
    return out


def test_the_package_runs_draws_and_writes_with_no_lxml():
    """Hidden lxml: gobpm_nb, the engine and gobpm_nb.ui import; the lineage view, the
    process view and the dashboard render; ``to_bpmn()`` of a process built in Python is
    the text lxml writes, byte for byte, and reads back to the same process."""
    got = run_hidden(APPROVAL + """
import json, gobpm_nb.ui
from gobpm_nb.bpmn import xmllib
eng = bpm.Engine()
inst = eng.start(p, data={"amount": 120})
eng.advance("PT1H")
views = {}
for view in (inst.lineage(), inst.process_view(), eng.dashboard()):
    bundle = view._repr_mimebundle_()
    views[type(view).__name__] = sorted(bundle[0] if isinstance(bundle, tuple) else bundle)
text = p.to_bpmn()
back = bpm.Process.from_bpmn(text)
print(json.dumps({"lxml": xmllib.LXML, "loaded": sys.modules["lxml"] is not None,
                  "views": views, "bpmn": text, "state": inst.state,
                  "bpmn_view": bool(inst.process_view().bpmn),
                  "back": [[e.id, type(e).__name__] for e in back.elements],
                  "flows": [[f.source, f.target] for f in back.flows]}))
""")
    namespace = {}
    exec(APPROVAL, namespace)  # noqa: S102 (the same process, built here under lxml)
    p = namespace["p"]
    assert got.pop("lxml") is False and got.pop("loaded") is False
    widget = "application/vnd.jupyter.widget-view+json"
    assert all(widget in kinds for kinds in got.pop("views").values())
    assert got.pop("bpmn") == p.to_bpmn()
    assert got == {"state": "active", "bpmn_view": True,
                   "back": [[e.id, type(e).__name__] for e in p.elements],
                   "flows": [[f.source, f.target] for f in p.flows]}


@pytest.mark.slow  # a fresh interpreter, every file
def test_every_file_reads_writes_and_draws_as_under_lxml_but_for_the_xsd():
    """Every BPMN file of the tests, read without lxml: the same processes, the same notes
    with the same lines, the same text written back and drawn, and each process written as
    a new file the same — except that XSD validation is not done: its errors are missing,
    and one warning on <definitions> says so (refusals.bpmn's schema error is not seen, so
    it is not written as a ``gobpm:problem`` either)."""
    assert xmllib.LXML
    got = run_hidden("import json, sys\nsys.path.insert(0, 'tests')\n"
                     "from test_without_lxml import read_all\n"
                     "print(json.dumps(read_all()))\n")
    want = json.loads(json.dumps(read_all()))
    schema_only = [f for f, rec in want.items()
                   if any(n[4].startswith("not valid BPMN 2.0 XML") for n in rec["notes"])]
    assert [Path(f).name for f in schema_only] == ["refusals.bpmn"]
    for f, rec in want.items():
        notes = got[f].pop("notes")
        said = [(n[0], n[2], n[6]) for n in notes if n[4] == NOT_VALIDATED]
        assert said == [("warning", "definitions", None)], f  # once, of the document
        assert [n for n in notes if n[4] != NOT_VALIDATED] == \
            [n for n in rec.pop("notes") if not n[4].startswith("not valid BPMN 2.0 XML")], f
        if f in schema_only:
            lines = rec.pop("new refusals").splitlines(keepends=True)
            schema = [x for x in lines if "not valid BPMN 2.0 XML" in x]
            assert len(schema) == 1 and "<gobpm:problem>" in schema[0]
            assert got[f].pop("new refusals") == "".join(x for x in lines if x not in schema)
        assert got[f] == rec, f


def test_a_file_that_is_not_bpmn_is_still_named_so_without_lxml():
    """The root check is the reader's own, not the XSD's: without lxml a file whose root is
    not <definitions> is refused the same way, and no XSD note is added."""
    got = run_hidden("import json, gobpm_nb as bpm\n"
                     "m = bpm.load_bpmn('<notes xmlns=\"urn:x\"><a/></notes>')\n"
                     "print(json.dumps([list(n) for n in m.report]))\n")
    assert [n[4] for n in got] == ["the root element is <notes> in namespace 'urn:x', not "
                                   "BPMN 2.0 <definitions>"]


LAUGHS = ('<?xml version="1.0"?>\n<!DOCTYPE lolz [\n <!ENTITY lol "lol">\n'
          + "".join(f' <!ENTITY lol{i} "{f"&lol{i - 1};" * 10 if i > 1 else "&lol;" * 10}">\n'
                    for i in range(1, 10))
          + ']>\n<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL">&lol9;'
          '</definitions>')


def external(uri):
    return ('<?xml version="1.0"?>\n<!DOCTYPE d [\n  <!ENTITY secret SYSTEM "' + uri
            + '">\n]>\n<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL">'
            '<documentation>&secret;</documentation></definitions>')


@pytest.mark.parametrize("doc", ["laughs", "external"])
def test_load_bpmn_refuses_entities_without_lxml(doc):
    """Hidden lxml: a billion-laughs document and an external entity are refused by
    load_bpmn with a ModelError naming the DOCTYPE; nothing is expanded."""
    text = LAUGHS if doc == "laughs" else external("file:///etc/hostname")
    got = run_hidden(f"import json, gobpm_nb as bpm\ntry:\n    bpm.load_bpmn({text!r})\n"
                     "except bpm.ModelError as exc:\n"
                     "    print(json.dumps([type(exc).__name__, str(exc)]))\n")
    assert got == ["ModelError", "<text>: a DOCTYPE is refused (a BPMN file needs none, and "
                                 "its entities could read local files or the network)"]


def test_the_standard_library_parser_itself_refuses_a_doctype_and_expands_nothing():
    """Past load_bpmn's own DOCTYPE check, plaintree's parser refuses the DOCTYPE as soon as
    it starts (a typed XMLSyntaxError naming it): the billion laughs are never expanded."""
    with pytest.raises(plaintree.XMLSyntaxError) as caught:
        plaintree.fromstring(LAUGHS.encode())
    assert (caught.value.msg, caught.value.lineno) == ("a DOCTYPE is refused", 2)


def test_an_external_entity_is_never_opened_by_the_standard_library_parser(tmp_path):
    """The entity names a FIFO: opening it would block. The parser refuses at once."""
    fifo = tmp_path / "secret"
    os.mkfifo(fifo)
    outcome = {}

    def parse():
        try:
            plaintree.fromstring(external(fifo.as_uri()).encode())
        except plaintree.XMLSyntaxError as exc:
            outcome["error"] = exc.msg

    worker = threading.Thread(target=parse, daemon=True)
    worker.start()
    worker.join(10)
    if worker.is_alive():  # release it before failing
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    assert not worker.is_alive() and outcome == {"error": "a DOCTYPE is refused"}


@pytest.mark.parametrize("doc, error", [
    (b"<a>&secret;</a>", ("undefined entity", 1)),
    (b"<a>" * 257 + b"</a>" * 257, ("elements nest more than 256 deep", 1)),
    (b"<a><b></a>", ("mismatched tag", 1)),
])
def test_the_standard_library_parser_refuses_what_lxml_refuses(doc, error):
    """An entity with no declaration is not well-formed; more than 256 levels is refused
    (libxml2's limit without huge_tree); a mismatched tag is not well-formed."""
    with pytest.raises(plaintree.XMLSyntaxError) as caught:
        plaintree.fromstring(doc)
    assert (caught.value.msg, caught.value.lineno) == error


def test_source_lines_are_where_each_start_tag_ends_as_lxml_gives_them():
    """An element's sourceline is the line its start tag ends on (libxml2's), in UTF-8 and
    in UTF-16 alike; a '>' inside an attribute value does not end the tag."""
    from lxml import etree

    doc = '<?xml version="1.0"?>\n<a>\n<b\n x="1>2"\n>t</b><c/>\n<!--n-->\n</a>\n'
    for data in (doc.encode(), doc.replace('"1.0"', '"1.0" encoding="UTF-16"')
                 .encode("utf-16")):
        got = [n.sourceline for n in plaintree.fromstring(data).iter()]
        assert got == [n.sourceline for n in etree.fromstring(data).iter()] == [2, 5, 5, 6]
