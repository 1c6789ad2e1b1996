"""The import report as a person reads it: grouped by process (its pool, executable or not,
runs or not), each note with the element's name beside its id, its line and a hint; the same
in a notebook as an HTML table, every value escaped."""

from __future__ import annotations

from bpmn_shapes import MIWG_DIR
from lxml import html

import gobpm_nb as bpm
from gobpm_nb.bpmn import Note

C10 = MIWG_DIR / "C.1.0.bpmn"
INVOICE_POOL = "sid-5FBB6CB3-8A7C-42B5-9024-15BB2684EC57"


def test_the_report_is_still_a_list_of_notes_by_line():
    report = bpm.load_bpmn(C10).report
    assert isinstance(report, list) and all(isinstance(n, Note) for n in report)
    assert [n.line for n in report] == sorted(n.line for n in report)
    assert report == list(report) and len(report) == 6


def test_printed_report_groups_the_errors_under_the_pool_that_cannot_run():
    """C.1.0: the error is in the Team-Assistant pool, not executable, beside three warnings;
    the process that runs says so; each note shows the element's name, not only its id."""
    text = str(bpm.load_bpmn(C10).report)
    lines = text.splitlines()
    assert lines[0] == "Import report: 1 error, 5 warnings"
    heads = [line for line in lines if line.startswith("process ")]
    assert heads == [
        f"process Team-Assistant ({INVOICE_POOL}) · pool Team-Assistant · not executable · "
        "cannot run: 1 error, 3 warnings",
        "process BPMN MIWG Test Case C.1.0 (bpmn-miwg-test-case-c.1.0) · pool Process Engine "
        "- Invoice Receipt · executable · runs, 2 warnings"]
    assert "  warning line  118  startEvent 'Invoice received' " \
        "(sid-36EA43D1-0FE6-4197-AC57-7A43785B784B): no messageRef: it is the message " \
        "'Invoice received' (its name)" in text
    assert "→ in the modeler, choose the message this event sends or waits for" in text
    assert "Note(" not in text


def test_report_html_is_a_table_per_process_with_names_and_hints():
    report = bpm.load_bpmn(C10).report
    page = html.fromstring(report._repr_html_())
    heads = [h.text_content() for h in page.iter("h4")]
    assert heads[0].endswith("not executable · cannot run: 1 error, 3 warnings")
    rows = [[td.text_content() for td in tr.iter("td")] for tr in page.iter("tr")
            if tr.get("data-severity")]
    assert len(rows) == 6
    assert rows[0][:4] == ["warning", "118", "startEvent Invoice received",
                           "sid-36EA43D1-0FE6-4197-AC57-7A43785B784B"]
    assert rows[0][5] == "in the modeler, choose the message this event sends or waits for"


def test_report_html_escapes_names_from_the_file(tmp_path):
    """A hostile element name is text in the HTML, never markup."""
    p = bpm.Process("hostile")
    p.start("s")
    p.message_catch("wait", "<script>alert(1)</script>", message="m")
    p.end("e")
    p.flow("s", "wait", "e")
    xml = p.to_bpmn().replace('messageRef="', 'data-x="')  # no messageRef: a note
    report = bpm.load_bpmn(xml.encode()).report
    assert report and "<script>" not in report._repr_html_()
    assert "&lt;script&gt;" in report._repr_html_()
