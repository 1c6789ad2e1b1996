"""Reading files from anywhere: a DOCTYPE is refused and no entity is ever resolved (no local
file read, no network); encodings come from the file's own declaration; the shipped XSD is
the one its README names."""

import hashlib
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from bpmn_shapes import BPMN_DIR, MIWG_DIR
from lxml import etree

import gobpm_nb as bpm
from gobpm_nb.bpmn import source

MINIMAL = ('<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d" '
           'targetNamespace="http://example.com"><process id="p" isExecutable="true">'
           '<documentation>{name}</documentation><startEvent id="s"/><endEvent id="e"/>'
           '<sequenceFlow id="f" sourceRef="s" targetRef="e"/></process></definitions>')


def with_entity(system_id):
    """A BPMN document whose process documentation is an external entity at
    ``system_id``."""
    return (f'<?xml version="1.0"?>\n<!DOCTYPE definitions [\n'
            f'  <!ENTITY secret SYSTEM "{system_id}">\n]>\n'
            + MINIMAL.format(name="&secret;"))


def never_blocks(fn, fifo, timeout=10.0):
    """Run ``fn`` in a thread; True if it returned. Opening ``fifo`` for reading would block
    until a writer comes, so a call that read it would still be running: it is released
    (a writer opened) before failing."""
    outcome = {}

    def run():
        try:
            outcome["value"] = fn()
        except Exception as exc:  # the refusal under test
            outcome["error"] = exc

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)
        worker.join(timeout)
        return False, outcome
    return True, outcome


@pytest.mark.parametrize("form", ["bytes", "text", "path"])
def test_a_doctype_is_refused_in_every_form_of_source(tmp_path, form):
    """A document with a DOCTYPE is refused with a ModelError, given as bytes, text or a
    path."""
    doc = with_entity("file:///etc/hostname")
    path = tmp_path / "evil.bpmn"
    path.write_text(doc)
    given = {"bytes": doc.encode(), "text": doc, "path": path}[form]
    with pytest.raises(bpm.ModelError, match="DOCTYPE is refused"):
        bpm.load_bpmn(given)


def test_an_entity_pointing_at_a_local_file_is_never_read(tmp_path):
    """The entity names a FIFO: reading it would block. load_bpmn refuses at once, and the
    parser itself (past the DOCTYPE check) neither opens it nor expands the entity."""
    fifo = tmp_path / "secret"
    os.mkfifo(fifo)
    doc = with_entity(fifo.as_uri()).encode()
    returned, outcome = never_blocks(lambda: bpm.load_bpmn(doc), fifo)
    assert returned and isinstance(outcome.get("error"), bpm.ModelError)
    returned, outcome = never_blocks(lambda: etree.fromstring(doc, source.parser()), fifo)
    assert returned
    root = outcome["value"]  # parsed, the entity left as a reference, not expanded
    doc_node = root.find(".//{http://www.omg.org/spec/BPMN/20100524/MODEL}documentation")
    assert etree.tostring(doc_node).endswith(b">&secret;</documentation>")


def test_a_file_behind_an_entity_never_reaches_the_model_or_its_messages(tmp_path):
    """A readable secret file named by an entity: refused, and its text is nowhere."""
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-42")
    with pytest.raises(bpm.ModelError) as info:
        bpm.load_bpmn(with_entity(secret.as_uri()))
    assert "TOP-SECRET-42" not in str(info.value)


def test_internal_entity_expansion_is_refused():
    """A billion-laughs document (internal entities, no file) is refused by its DOCTYPE."""
    laughs = ('<?xml version="1.0"?>\n<!DOCTYPE definitions [\n<!ENTITY a "ha">\n'
              + "".join(f'<!ENTITY {chr(98 + i)} "{("&" + chr(97 + i) + ";") * 10}">\n'
                        for i in range(8))
              + "]>\n" + MINIMAL.format(name="&i;"))
    with pytest.raises(bpm.ModelError, match="DOCTYPE"):
        bpm.load_bpmn(laughs)


def test_the_parser_is_hardened():
    """The parser resolves no entities, loads no DTD, touches no network, refuses huge
    trees."""
    parser = source.parser()
    doc = b'<!DOCTYPE x [<!ENTITY e "expanded">]><x>&e;</x>'
    assert etree.tostring(etree.fromstring(doc, parser)) == b"<x>&e;</x>"
    assert etree.fromstring(b"<x/>", parser).getroottree().docinfo.doctype == ""


ISO_FILES = sorted(p for p in MIWG_DIR.glob("*.bpmn")
                   if b'encoding="ISO-8859-1"' in p.read_bytes()[:100])


def test_the_miwg_files_declaring_iso_8859_1_are_the_a_and_b_models():
    """Five MIWG files declare ISO-8859-1: the A and B models but A.2.1 (UTF-8)."""
    assert [p.stem for p in ISO_FILES] == ["A.1.0", "A.2.0", "A.3.0", "A.4.0", "B.1.0"]


@pytest.mark.parametrize("path", ISO_FILES + [BPMN_DIR / "latin1.bpmn"], ids=lambda p: p.stem)
def test_each_iso_8859_1_file_parses_as_bytes_path_and_text(path):
    """An ISO-8859-1 file reads the same from its path, its bytes and its decoded text."""
    from_path = bpm.load_bpmn(path)
    from_bytes = bpm.load_bpmn(path.read_bytes())
    from_text = bpm.load_bpmn(path.read_bytes().decode("iso-8859-1"))
    names = [[e.name for e in p.elements] for p in from_path.processes.values()]
    assert names == [[e.name for e in p.elements] for p in from_bytes.processes.values()]
    assert names == [[e.name for e in p.elements] for p in from_text.processes.values()]
    assert from_path.report == from_bytes.report == from_text.report


def test_latin1_names_decode_to_their_characters():
    """Bytes 0xFC and 0xE4 in an ISO-8859-1 file are ü and ä in the model, and UTF-8 in
    the file written back."""
    model = bpm.load_bpmn(BPMN_DIR / "latin1.bpmn")
    p = model.process()
    assert (p.name, p.elements[1].name, p.elements[2].name) == \
        ("Prüfung", "Prüfen & bestätigen", "Erledigt \u2013 fertig")
    text = model.to_bpmn()
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>')
    assert bpm.load_bpmn(text.encode("utf-8")).process().name == "Prüfung"


@pytest.mark.parametrize("given, match", [
    (b"<definitions", "not well-formed XML"),
    ("this/path/does/not/exist.bpmn", "cannot read BPMN file"),
    (42, "a path, bytes or XML text, not int"),
])
def test_unreadable_sources_are_model_errors(given, match):
    """Not XML, a missing file, or not a source at all: a ModelError saying which."""
    with pytest.raises(bpm.ModelError, match=match):
        bpm.load_bpmn(given)


def test_a_device_a_pipe_a_directory_or_a_huge_file_is_refused_before_it_is_read(
        tmp_path, monkeypatch):
    """``/dev/zero`` filled the machine's memory (5 GB in ten seconds, for ever) and a FIFO
    waited for a writer for ever; now each, like a directory or a file over 100 MiB, is a
    ModelError naming the file and why."""
    import os

    from gobpm_nb import files

    fifo = tmp_path / "model.bpmn"
    os.mkfifo(fifo)
    for path, why in (("/dev/zero", "not a regular file"), (fifo, "not a regular file"),
                      (tmp_path, "not a regular file"),
                      ("a\0b.bpmn", "not a valid file name \\(nor XML text")):
        with pytest.raises(bpm.ModelError, match=f"^cannot read BPMN file .*: it is {why}"
                           if "regular" in why else f"^cannot read BPMN file .*: {why}"):
            bpm.load_bpmn(path)
    big = tmp_path / "big.bpmn"
    big.write_bytes(b"<definitions/>" + b" " * 2048)
    monkeypatch.setattr(files, "LARGEST", 1024)
    with pytest.raises(bpm.ModelError, match="^cannot read BPMN file .*big.bpmn': it is "
                                             "larger than 1,024 bytes, the most read$"):
        bpm.load_bpmn(big)


def test_the_shipped_xsd_files_are_the_ones_the_readme_names():
    """Each XSD file's SHA-256 is the one listed in gobpm_nb/bpmn/xsd/README.md."""
    folder = Path(source.__file__).parent / "xsd"
    readme = (folder / "README.md").read_text(encoding="utf-8")
    listed = dict((name, digest) for digest, name in
                  re.findall(r"`([0-9a-f]{64})`\s+`([\w.]+\.xsd)`", readme))
    assert sorted(listed) == ["BPMN20.xsd", "BPMNDI.xsd", "DC.xsd", "DI.xsd", "Semantic.xsd"]
    for name, digest in listed.items():
        assert hashlib.sha256((folder / name).read_bytes()).hexdigest() == digest, name


def gateway_file(condition):
    """A one-gateway process whose first branch carries ``condition`` (XML-escaped)."""
    return ('<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d" '
            'targetNamespace="http://example.com"><process id="p" isExecutable="true">'
            '<startEvent id="s"/><exclusiveGateway id="g"/><endEvent id="e1"/>'
            '<endEvent id="e2"/><sequenceFlow id="f0" sourceRef="s" targetRef="g"/>'
            '<sequenceFlow id="yes" sourceRef="g" targetRef="e1"><conditionExpression>'
            f'{condition}</conditionExpression></sequenceFlow>'
            '<sequenceFlow id="no" sourceRef="g" targetRef="e2"/></process></definitions>')


DEEP = {"200 parentheses": "(" * 200 + "a" + ")" * 200, "1,000 nots": "not " * 1000 + "a",
        "1,000 JUEL negations": "${" + "!" * 1000 + "a}",
        "300 FEEL not()": "= " + "not(" * 300 + "a" + ")" * 300}


@pytest.mark.parametrize("condition", DEEP.values(), ids=DEEP.keys())
def test_a_deeply_nested_condition_is_an_error_note_on_its_flow_not_a_recursion_error(
        condition):
    """load_bpmn reports the nesting limit on the flow that carries it (it used to raise
    RecursionError); the process is refused."""
    model = bpm.load_bpmn(gateway_file(condition))
    [note] = model.report
    assert (note.severity, note.element) == ("error", "yes")
    assert "nests deeper than 50 levels" in note.message
    with pytest.raises(bpm.ModelError, match="nests deeper"):
        model.process()


def test_the_check_command_reports_a_deep_condition_without_a_traceback(tmp_path):
    """python -m gobpm_nb check on such a file: the note in its table, exit 1, nothing on
    stderr."""
    path = tmp_path / "deep.bpmn"
    path.write_text(gateway_file("(" * 200 + "a" + ")" * 200))
    proc = subprocess.run([sys.executable, "-m", "gobpm_nb", "check", str(path)],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(Path(bpm.__file__).parents[1])})
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stderr == "" and "Traceback" not in proc.stdout
    assert "nests deeper than 50 levels" in proc.stdout


def test_xml_text_with_a_lone_surrogate_is_a_model_error_naming_the_character():
    """Text decoded wrongly (a lone surrogate) cannot be XML: ModelError naming the
    character and its line, not UnicodeEncodeError."""
    text = MINIMAL.format(name="bad \ud800 name").replace("<process", "\n<process")
    with pytest.raises(bpm.ModelError, match=r"character 0xd800 on line 2 is not valid in XML"):
        bpm.load_bpmn(text)


def test_xml_text_that_starts_with_a_byte_order_mark_is_read_as_xml():
    """A BOM file read as text begins with U+FEFF: it is XML text, not a file name."""
    model = bpm.load_bpmn("\ufeff" + '<?xml version="1.0" encoding="UTF-8"?>\n'
                          + MINIMAL.format(name="x"))
    assert list(model.processes) == ["p"] and model.report == []
