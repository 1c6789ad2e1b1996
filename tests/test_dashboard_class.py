"""A dashboard in front of a class: it opens on an instance that is still running, its
picker says what each instance is, and a notice lasts only until the next command."""

from __future__ import annotations

import asyncio

from conftest import ticks_until

import gobpm_nb as bpm
from gobpm_nb.ui.views import TICK


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


def dashboard_state(board):
    """What a dashboard shows of its engine (its header aside)."""
    return (board.clock, board.counters, board.tasks, board.facts, board.timeline,
            board.lineage_dot, board.process_marks)


def test_a_dashboard_says_live_and_freeze_here_stops_it_at_a_fact_and_clock():
    """The dashboard follows the engine, its header saying "live"; "freeze here" (the
    header's button sets ``live``) names the fact and clock it stopped at, and the engine's
    later commands change nothing it shows; "follow live" shows the engine as it is now."""
    eng = started(False)
    board = eng.dashboard()
    assert (board.moment, board.live, board.following) == ("live", True, True)
    eng.advance("PT1H")
    board.flush()
    assert board.clock == "2026-01-01T01:00:00Z"
    board.live = False  # "freeze here"
    moment = f"at fact {eng.history_span()[1]} · 2026-01-01 01:00"
    assert (board.moment, board.live, board.following) == (moment, False, False)
    assert repr(board).endswith(f"moment={moment!r})")
    shown = dashboard_state(board)
    eng.complete_task("T-0:work:1", {})
    eng.advance("PT2H")
    board.refresh()
    assert dashboard_state(board) == shown and board.moment == moment
    board.live = True  # "follow live"
    assert (board.moment, board.live, board.following) == ("live", True, True)
    assert board.clock == "2026-01-01T03:00:00Z" and board.tasks == []
    assert dashboard_state(board) != shown
    eng.advance("PT1H")
    board.flush()
    assert board.clock == "2026-01-01T04:00:00Z"
    board.close()


def test_a_frozen_dashboard_refuses_its_commands_and_says_why():
    """A command that reaches a frozen dashboard (its controls are disabled in the page) runs
    nothing and says "frozen at fact N … follow live to use the controls"; choosing another
    instance is refused too. Followed again, the same command runs."""
    eng = started(False, False)
    board = eng.dashboard()
    board.freeze()
    facts, selected = len(eng.facts), board.selected
    for command in ({"kind": "step"}, {"kind": "advance", "duration": "PT1H"},
                    {"kind": "complete", "task": "T-0:work:1", "outputs": {}},
                    {"kind": "publish", "name": "paid"}, {"kind": "rewind", "to": 2},
                    {"kind": "branch"}, {"kind": "select", "instance": "T-1"}):
        board._handle_custom_msg(command, [])
        assert board.error == f"frozen {board.moment} — follow live to use the controls"
        assert (len(eng.facts), board.selected, board.branch) == (facts, selected, None)
    board.selected = "T-1"  # the picker, had it not been disabled
    assert board.selected == selected and board.error.startswith("frozen at fact ")
    board._handle_custom_msg({"kind": "pause"}, [])  # pausing acts on nothing: it runs
    assert board.error == ""
    board.follow()
    board._handle_custom_msg({"kind": "advance", "duration": "PT1H"}, [])
    assert board.error == "" and board.clock == "2026-01-01T01:00:00Z"
    board.close()


def test_freezing_a_playing_dashboard_pauses_it_first():
    """Play moves the engine from the kernel's event loop: freezing stops it, so a frozen
    picture never has an engine moving behind it by its own controls."""
    eng = started(False)
    board = eng.dashboard()
    before = eng.now

    async def play_then_freeze():
        board._handle_custom_msg({"kind": "play", "speed": 3600}, [])
        assert board.playing
        await ticks_until(lambda: eng.now > before)  # play has moved the engine
        board.freeze()
        assert not board.playing
        clock = eng.now
        await asyncio.sleep(3 * TICK)  # three ticks' time, in which nothing may move
        return clock

    clock = asyncio.run(play_then_freeze())
    assert eng.now == clock > before and board.moment.startswith("at fact ")
    board.close()


def test_a_frozen_dashboard_follows_a_rewind_and_branches_once_it_follows_again():
    """Rewound from a cell while frozen, the dashboard keeps its moment; followed again, its
    history slider stands where the rewind left the engine, and "branch here" works."""
    eng = started(False)
    eng.advance("PT2H")
    board = eng.dashboard()
    board.freeze()
    shown = board.timeline
    done = eng.rewind(3)
    board.refresh()
    assert board.timeline == shown
    board.follow()
    assert board.timeline["position"] == done.seq < shown["position"]
    assert board.timeline["pending"] > 0
    board._handle_custom_msg({"kind": "branch"}, [])
    assert board.error == "" and board.branch is not None
    assert board.branch.moment == "live" and board.branch.timeline["position"] == done.seq
    board.close()
