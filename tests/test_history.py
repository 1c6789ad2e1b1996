"""The command envelope and the history's bookkeeping: what every public command costs, what
it keeps, and how its arguments are packed."""

import enum
import sys
import traceback
from datetime import timedelta

import pytest

import gobpm_nb as bpm
from gobpm_nb.travel import history
from gobpm_nb.travel.entries import Entries, as_text


def waiting_process():
    p = bpm.Process("wait")
    p.start("start")
    p.message_catch("paid", message="paid", key="order")
    p.end("end")
    p.flow("start", "paid", "end")
    return p


def test_a_traceback_names_the_command_it_went_through():
    """The envelope's frame bears the command's name (not a wrapper's); the command keeps
    its own name, docstring and signature."""
    eng = bpm.Engine()
    with pytest.raises(bpm.EngineError) as info:
        eng.complete_task("no-such-task")
    names = [f.name for f in traceback.extract_tb(info.value.__traceback__)]
    assert names.count("complete_task") >= 2 and "run" not in names
    assert "envelope" not in names
    method = bpm.Engine.publish_message
    assert method.__name__ == "publish_message" and "Correlate" in (method.__doc__ or "")


def test_the_envelope_costs_three_calls_of_the_history():
    """Around a command's own work, the history runs three functions: the envelope, begin
    and end (the arguments are checked and kept in C, ``Entries`` is not called)."""
    eng = bpm.Engine()
    eng.start(waiting_process(), {"order": "o-1"})
    eng.run()
    eng.publish_message("warm", key="k")  # nothing lazy is charged below
    seen = []

    def profile(frame, event, arg):
        if event == "call" and frame.f_globals.get("__name__") in (
                "gobpm_nb.travel.history", "gobpm_nb.travel.entries"):
            seen.append(frame.f_code.co_qualname)

    sys.setprofile(profile)
    try:
        eng.publish_message("paid", key="o-1", payload={"n": 1, "l": [1.5, None, True]})
        eng.step()
    finally:
        sys.setprofile(None)
    assert seen == ["command.publish_message", "History.begin", "History.end",
                    "command.step", "History.begin", "History.end"]


def test_begin_reads_the_mark_end_compares():
    """``History.begin`` reads the engine's mark inline; it is ``history.mark``, which a
    failed command's end compares with (a command that changed nothing is not recorded)."""
    eng = bpm.Engine()
    eng.start(waiting_process(), {"order": "o-1"})
    state = eng._state
    pending = state.history.begin(state, "step", (), {})
    assert pending[2] == history.mark(state)
    state.history.end(state, pending, None)
    assert eng.history()[-1].name == "step"


def test_arguments_are_kept_as_they_were_when_the_command_began():
    eng = bpm.Engine()
    payload = {"n": [1, 2]}
    span = timedelta(hours=1)
    eng.publish_message("x", key="k", payload=payload)
    eng.advance(span)
    payload["n"].append(3)
    *_, published, advanced = eng.history()
    assert published.kwargs == {"key": "k", "payload": {"n": [1, 2]}}
    assert advanced.args == (span,) and type(advanced.args[0]) is timedelta


class Level(enum.IntEnum):
    HIGH = 1


class Text(str):
    pass


def deep(levels):
    out = []
    for _ in range(levels):
        out = [out]
    return out


def test_json_text_holds_only_what_reads_back_exactly():
    assert as_text(("a",), {"k": {"n": [1, 2.5, None, True]}}) == \
        '[["a"],{"k":{"n":[1,2.5,null,true]}}]'
    for odd in [(1, 2), {1: "a"}, {True: 1}, float("nan"), float("inf"), 10 ** 5000,
                Level.HIGH, Text("a"), {"a"}, b"x", deep(5000), timedelta(1)]:
        assert as_text((odd,), {}) is None, odd
        assert as_text((), {"k": [odd]}) is None, odd


def same(got, given):
    """Equal values of the same types; a process read back is its frozen builder."""
    if isinstance(given, bpm.Process):
        return type(got) is bpm.Process and \
            got.definition().signature == given.definition().signature
    if isinstance(given, dict):
        return type(got) is dict and list(got) == list(given) and all(
            same(got[k], v) for k, v in given.items())
    if isinstance(given, (list, tuple)):
        return type(got) is type(given) and len(got) == len(given) and all(
            same(a, b) for a, b in zip(got, given, strict=True))
    return type(got) is type(given) and got == given


def test_packed_arguments_read_back_as_given():
    """Plain values as JSON text, a process as its frozen builder's number (alone: an int),
    anything else as copied values, all read back as they were given."""
    entries = Entries()
    p = waiting_process()
    cases = [((p,), {}), ((p, {"order": "o-1"}), {"key": "k"}), ((), {"process": p}),
             (("paid",), {"key": "o-1", "payload": {"n": [1]}}), ((), {}),
             ((timedelta(1),), {}), (("x",), {"key": Level.HIGH}), ((p, (1, 2)), {})]
    for args, kwargs in cases:
        packed = entries.pack(args, kwargs)
        entries.add("start", packed, 0, 0, 0, 0, -1)
        got = entries[-1]
        assert same(got.args, args) and same(got.kwargs or {}, kwargs)
        assert (got.kwargs is None) == (not kwargs)
    assert type(entries.pack((p,), {})) is int
    assert type(entries.pack((p, {"order": "o-1"}), {})) is str
    assert type(entries.pack(("x",), {"key": Level.HIGH})) is tuple
