"""A dashboard in front of a class: it opens on an instance that is still running, its
picker says what each instance is, and a notice lasts only until the next command."""

from __future__ import annotations

import gobpm_nb as bpm


def quick_and_slow():
    """A process that ends at once when ``fast`` is true, else waits for a user task."""
    p = bpm.Process("ticket")
    p.start("start")
    p.exclusive_gateway("fast?", default="work")
    p.user_task("work", assignee="kim")
    p.end("done")
    p.flow("start", "fast?")
    p.flow("fast?", "done", condition="fast")
    p.flow("fast?", "work", "done")
    return p.validate()


def started(*fast):
    eng = bpm.Engine()
    for n, flag in enumerate(fast):
        eng.start(quick_and_slow(), {"fast": flag}, key=f"T-{n}")
    eng.run(until=eng.now)
    return eng


def test_dashboard_opens_on_the_first_active_instance_not_a_completed_one():
    """Two tickets completed before the third waits: the dashboard shows the waiting one."""
    eng = started(True, True, False, False)
    board = eng.dashboard()
    assert [i.state for i in eng.instances()] == ["completed", "completed", "active", "active"]
    assert board.selected == "T-2"
    board.close()


def test_dashboard_opens_on_the_first_instance_when_none_is_active():
    eng = started(True, True)
    board = eng.dashboard()
    assert board.selected == "T-0"
    board.close()


def test_instance_picker_labels_each_instance_with_its_process_and_state():
    """The picker's rows say id (the business key), process and version, state and, for an
    active one, where it lives."""
    eng = started(True, False)
    board = eng.dashboard()
    assert board.instance_rows == [
        {"id": "T-0", "process": "ticket v1", "state": "completed", "residency": "finished",
         "label": "T-0 · ticket v1 · completed"},
        {"id": "T-1", "process": "ticket v1", "state": "active", "residency": "dehydrated",
         "label": "T-1 · ticket v1 · active (dehydrated)"}]
    assert [row["id"] for row in board.instance_rows] == board.instances
    board.close()


def test_publish_notice_clears_on_the_next_successful_command():
    """A message that reached nobody leaves a warning by the form; the next Step clears it,
    and a failed command leaves an error that the next good command clears."""
    eng = started(False)
    board = eng.dashboard()
    board._handle_custom_msg({"kind": "publish", "name": "nobody-listens"}, [])
    assert board.publish_notice["level"] == "warning"
    board._handle_custom_msg({"kind": "step"}, [])
    assert board.publish_notice == {} and board.error == ""
    board._handle_custom_msg({"kind": "advance", "duration": "soon"}, [])
    assert board.error.startswith("command 'advance' failed")
    board._handle_custom_msg({"kind": "advance", "duration": "PT1H"}, [])
    assert board.error == ""
    board.close()
