"""The population dashboard: what it shows of a run (counters, pools, clock, the heat map of
tokens on the diagram) agrees with the population's own tables and the engine's tokens, it
follows a run without changing it, and its display is the same every time."""

from collections import Counter

import pytest

import gobpm_nb as bpm
from gobpm_nb.population.board import board_of, clock_text
from gobpm_nb.population.driver import Driver, drive
from gobpm_nb.render.heat import MEASURE, SHADES, heat_legend, shade
from gobpm_nb.ui.population import ENDED, NOT_RUN, PopulationDashboard


def two_tasks():
    p = bpm.Process("order")
    p.start("s")
    p.user_task("check", name="Check order")
    p.user_task("ship", name="Ship")
    p.end("e", name="Shipped")
    p.flow("s", "check", "ship", "e")
    return p


def cut_off(**changes):
    """Orders every 6 minutes for 8 hours to one clerk (10 min a check) and two packers,
    stopped when arrivals stop: a queue at the check is left standing."""
    fields = dict(start="2026-01-05T09:00:00", horizon="PT8H", drain="PT0S", seed=3,
                  sla="PT1H", arrivals={"poisson": {"mean": "PT6M"}},
                  durations={"check": {"exponential": {"mean": "PT10M"}},
                             "ship": {"exponential": {"mean": "PT8M"}}},
                  pools={"clerks": {"size": 1}, "packers": {"size": 2}},
                  assign={"check": "clerks", "ship": "packers"})
    return bpm.Scenario(two_tasks(), **(fields | changes))


def test_heat_counts_are_the_tokens_the_engine_holds_at_every_instant():
    """At every instant the driver ran, the heat map is the engine's tokens: one open user
    task per token in this model, on the task's element."""
    d = Driver(cut_off())
    checked = []

    def watch(now):
        board = board_of(d, now)
        tasks = Counter(t.node for t in d.eng.tasks())
        assert board.heat == {n: tasks[n] for n in ("check", "ship") if tasks[n]}
        assert board.tokens == d.eng.stats()["tasks"]
        checked.append(now)

    d.watch = watch
    ended = d.go(False)
    assert len(checked) > 100 and checked[-1] == ended
    final = board_of(d, ended)
    assert final == drive(cut_off(), False).final  # what the run keeps for its dashboard
    assert final.heat["check"] > 5  # the queue left standing at the cut-off
    assert final.tokens == sum(1 for c in d.cases.values() if c.end is None)


def test_counters_at_the_end_are_the_populations_own_tables():
    pop = cut_off().run(progress=False)
    board, cases = pop.final, pop.cases()
    assert board.counters == {
        "cases started": len(cases),
        "running": int((~cases["ended"]).sum()),
        "completed": int((cases["state"] == "completed").sum()),
        "SLA breached": int(cases["sla_breached"].sum()),
    }
    assert not (cases["ended"] & (cases["state"] != "completed")).any()  # else counted apart
    assert board.counters["running"] > 5 and board.counters["SLA breached"] > 0
    log, tasks = pop.event_log(), pop.tasks()
    for row, task in zip(board.pools, ("check", "ship"), strict=True):
        mine = log[log["org:resource"].str.startswith(row["pool"] + "-")]
        started = int((mine["lifecycle:transition"] == "start").sum())
        done = int((mine["lifecycle:transition"] == "complete").sum())
        assert row["busy"] == started - done
        left = tasks.loc[task]
        assert row["busy"] + row["waiting"] == left["count"] - left["done"] - left["withdrawn"]
    assert [row["pool"] for row in board.pools] == ["clerks", "packers"]
    assert board.pools[0]["waiting"] > 5 and board.pools[0]["busy"] == 1
    assert board.clock == clock_text(pop.ended) == "Mon 2026-01-05 16:58"


def test_a_warm_up_is_counted_apart():
    pop = cut_off(warmup="PT2H").run(progress=False)
    assert pop.final.counters["cases started"] == len(pop.cases())
    assert pop.final.counters["warm-up cases"] > 10


def test_the_dashboard_follows_a_run_without_changing_it():
    sc = cut_off()
    board = sc.dashboard()
    assert board.phase == NOT_RUN and board.counters["cases started"] == 0
    assert [row["busy"] for row in board.pools] == [0, 0] and board.marks["elements"] == []
    seen = []
    board.observe(lambda change: seen.append(change["new"]), names="counters")
    followed = sc.run(progress=False, dashboard=board)
    plain = sc.run(progress=False)
    assert followed.summary().equals(plain.summary())
    assert followed.final == plain.final
    # the first instant (the coalescer pushes at once), the end, and a preview at
    # most every 50 ms of wall time between them: far fewer than the run's instants
    assert 2 <= len(seen) < 40
    assert board.phase == ENDED and board.board == plain.final
    assert board.counters == plain.final.counters and board.pools == plain.final.pools
    marks = {e["id"]: e for e in board.marks["elements"]}
    assert {n: int(e["badges"][0]["text"]) for n, e in marks.items()} == plain.final.heat
    assert marks["check"]["fill"] == shade(plain.final.heat["check"])[0]
    assert f"{MEASURE}: {plain.final.tokens} in all" in board.marks["status"]


def test_a_run_without_a_dashboard_calls_nothing_per_instant():
    d = Driver(cut_off())
    assert d.watch is None


def test_the_display_is_the_same_every_time_and_has_a_static_drawing():
    first, second = cut_off().run(progress=False), cut_off().run(progress=False)
    a, b = first.dashboard(), second.dashboard()
    assert repr(a) == repr(b)
    assert repr(a) == ("PopulationDashboard(title='population of order · seed 3 · pools: "
                       "clerks, packers', phase='ended', clock='Mon 2026-01-05 16:58', "
                       + ", ".join(f"{k}={v}" for k, v in first.final.counters.items()) + ")")
    assert (a.bpmn, a.marks, a.dot, a.pools) == (b.bpmn, b.marks, b.dot, b.pools)
    assert 'bpmnElement="check"' in a.bpmn
    data, meta = a._repr_mimebundle_()
    assert data["text/plain"] == repr(a)
    assert data["image/png"]  # what an untrusted notebook shows
    assert meta["gobpm_nb"] == {"frozen": True}
    check = first.final.heat["check"]
    assert f"{check} tokens" in a.dot


def test_the_legend_says_what_is_counted_and_the_scale_is_fixed():
    legend = heat_legend()
    assert legend[0] == [f"{MEASURE}: 1", SHADES[0][1]]
    assert [label for label, _ in legend[1:]] == ["2-4", "5-9", "10-19", "20-49", "50 or more"]
    assert [shade(n)[0] for n in (1, 4, 5, 19, 20, 1000)] == \
        [SHADES[0][1], SHADES[1][1], SHADES[2][1], SHADES[3][1], SHADES[4][1], SHADES[5][1]]


def test_a_dashboard_of_the_wrong_kind_is_refused():
    with pytest.raises(TypeError, match="dashboard must be"):
        cut_off().run(progress=False, dashboard="yes")


def test_a_dashboard_outside_a_notebook_still_runs():
    pop = cut_off().run(progress=False, dashboard=True)
    assert pop.final.counters["cases started"] > 50
    assert isinstance(pop.dashboard(), PopulationDashboard)


def test_the_display_a_run_makes_keeps_one_text_from_its_start_to_its_end():
    """``run(dashboard=True)`` displays its dashboard at the start and replaces it by the end:
    a checker that compares the text of the first display sees what the notebook saved."""
    from gobpm_nb.population.board import empty_board
    from gobpm_nb.ui.population import shown

    sc = cut_off()
    board, handle = shown(sc, True, empty_board(sc))
    assert handle is None  # outside IPython nothing is displayed
    before = board._repr_mimebundle_()[0]["text/plain"]
    drive(sc, False, board)
    after, meta = board._repr_mimebundle_()
    assert before == after["text/plain"] == \
        "PopulationDashboard(title='population of order · seed 3 · pools: clerks, packers', " \
        "shows its run)"
    assert repr(board).startswith("PopulationDashboard(title=") and "phase='ended'" in repr(board)
    assert meta["gobpm_nb"] == {"frozen": True}

