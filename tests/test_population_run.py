"""A population run drives the real engine: work waits for its pool's resources and
calendar, boundary timers escalate as for one instance, and the event log is XES-shaped."""

import warnings

import pandas as pd
import pytest

import gobpm_nb as bpm
from gobpm_nb.population.results import XES as COLUMNS


def one_task():
    p = bpm.Process("desk")
    p.start("s")
    p.user_task("check", name="Check order")
    p.end("e")
    p.flow("s", "check", "e")
    return p


def test_cases_queue_for_a_busy_clerk_first_in_first_out():
    """Three cases arriving at once to one clerk with a fixed 1 h task: they are served one
    after the other, in arrival order; waiting and processing add up to the cycle time."""
    sc = bpm.Scenario(
        one_task(), start="2026-01-05T09:00:00", horizon="PT1H",
        arrivals={"replay": [{"at": "2026-01-05T09:00:00"}] * 3},
        durations={"check": {"fixed": "PT1H"}},
        pools={"clerk": {"size": 1, "cost_per_hour": 30}}, assign={"check": "clerk"})
    c = sc.run(progress=False).cases()
    assert list(c["case"]) == ["i1", "i2", "i3"]
    assert [t.hour for t in c["end"]] == [10, 11, 12]
    assert list(c["waiting"] / pd.Timedelta(hours=1)) == [0, 1, 2]
    assert (c["waiting"] + c["processing"] == c["cycle_time"]).all()
    assert list(c["cost"]) == [30.0, 30.0, 30.0]
    assert list(c["end_event"]) == ["e", "e", "e"]


def test_the_largest_pool_brings_in_only_the_resources_work_needs():
    """A pool of a million resources: three cases at once are served at once, by
    resources 1, 2 and 3 (the lowest numbered free one takes the work); one given back is
    the next taken."""
    sc = bpm.Scenario(
        one_task(), start="2026-01-05T09:00:00", horizon="PT3H",
        arrivals={"replay": [{"at": "2026-01-05T09:00:00"}] * 3
                  + [{"at": "2026-01-05T11:00:00"}]},
        durations={"check": {"fixed": "PT1H"}},
        pools={"crowd": {"size": 1_000_000}}, assign={"check": "crowd"})
    pop = sc.run(progress=False)
    c = pop.cases()
    assert list(c["waiting"] / pd.Timedelta(hours=1)) == [0, 0, 0, 0]
    log = pop.event_log()
    starts = log[log["lifecycle:transition"] == "start"]
    assert list(starts["org:resource"]) == ["crowd-1", "crowd-2", "crowd-3", "crowd-1"]


def test_work_of_no_duration_in_a_loop_stops_the_run_naming_the_case_and_task():
    """A review sent back every time (a weight of 1 on the way back) with no duration given:
    the case would go round for ever at one instant, the clock standing. The run stops with
    a ScenarioError naming the instant, the case and the task; ten thousand cases served at
    one instant by one clerk in no time, one piece of work each, run to their end."""
    p = bpm.Process("again")
    p.start("s")
    p.user_task("review")
    p.exclusive_gateway("ok?")
    p.end("e")
    p.flow("s", "review", "ok?", "e")
    p.flow("ok?", "review")
    back, on = (f.id for f in sorted(p.definition().outgoing["ok?"],
                                     key=lambda f: f.target != "review"))
    sc = bpm.Scenario(p, start="2026-01-05T09:00:00", horizon="PT1H",
                      arrivals={"replay": [{"at": "2026-01-05T09:00:00"}]},
                      branches={"ok?": {back: 1, on: 0}})
    with pytest.raises(bpm.ScenarioError, match=r"^durations: the run stands still at "
                       r"2026-01-05T09:00:00Z: case i1 took up more than 10,000 pieces of "
                       r"work of no duration at that instant, the last at review;"):
        sc.run(progress=False)
    crowd = bpm.Scenario(one_task(), start="2026-01-05T09:00:00", horizon="PT1H",
                         arrivals={"replay": [{"at": "2026-01-05T09:00:00"}] * 10_001},
                         pools={"clerk": {"size": 1}}, assign={"check": "clerk"})
    assert crowd.run(progress=False).cases()["ended"].all()


def test_a_case_taking_up_twelve_thousand_pieces_of_work_at_once_is_not_standing_still():
    """A multi-instance over 12,000 line items, each taking a minute, all started at one
    instant (the pool has no limit): work that takes time moves the clock on, so the run
    goes to its end (it stopped as "standing still", counting them as a loop's)."""
    p = bpm.Process("lines")
    p.start("s")
    p.user_task("check")
    p.multi_instance("check", collection="items", element="item")
    p.end("e")
    p.flow("s", "check", "e")
    sc = bpm.Scenario(p, start="2026-01-05T09:00:00", horizon="PT1H",
                      arrivals={"replay": [{"at": "2026-01-05T09:00:00",
                                            "data": {"items": list(range(12_000))}}]},
                      durations={"check": {"fixed": "PT1M"}})
    pop = sc.run(progress=False)
    (case,) = pop.cases().itertuples()
    assert case.ended and case.cycle_time == pd.Timedelta(minutes=1)
    assert pop.tasks().loc["check", "count"] == 12_000


def test_a_process_without_a_plain_start_is_no_scenario():
    """Cases arrive at a plain start event: a process that starts only by a message is
    refused as the scenario is read, naming the process."""
    p = bpm.Process("paid")
    p.message_start("s", message="go")
    p.user_task("check")
    p.end("e")
    p.flow("s", "check", "e")
    with pytest.raises(bpm.ScenarioError, match="^process: process 'paid' has no plain "
                                                "start event"):
        bpm.Scenario(p, arrivals={"poisson": {"mean": "PT1H"}})


def test_priority_takes_the_highest_first():
    """With a priority expression, of three cases arriving at once the one with the highest
    amount is taken first, then the next highest."""
    sc = bpm.Scenario(
        one_task(), start="2026-01-05T09:00:00", horizon="PT1H",
        arrivals={"replay": [{"at": "2026-01-05T09:00:00", "data": {"amount": a}}
                             for a in (5, 1, 9)]},
        durations={"check": {"fixed": "PT1H"}}, pools={"clerk": {"size": 1}},
        assign={"check": "clerk"}, priority={"clerk": "amount"})
    c = sc.run(progress=False).cases().set_index("case")
    assert [c.loc[i, "end"].hour for i in ("i3", "i1", "i2")] == [10, 11, 12]


def test_no_work_at_night_or_on_a_holiday():
    """A clerk working 09:00-17:00 on weekdays, with a holiday: a case arriving in the
    evening is started the next working morning; work that does not fit the day pauses
    overnight; nothing is worked on the holiday or the weekend."""
    sc = bpm.Scenario(
        one_task(), start="2026-12-23T00:00:00", horizon="P3D",
        arrivals={"replay": [{"at": "2026-12-23T20:00:00"}, {"at": "2026-12-24T16:00:00"}]},
        durations={"check": {"fixed": "PT2H"}},
        pools={"clerk": {"size": 1, "calendar": "office"}},
        calendars={"office": {d: ["09:00-17:00"] for d in ("mon", "tue", "wed", "thu", "fri")}
                   | {"holidays": ["2026-12-25"]}},
        assign={"check": "clerk"})
    pop = sc.run(progress=False)
    log = pop.event_log()
    times = [t.isoformat() for t in log["time:timestamp"]]
    assert times == ["2026-12-24T09:00:00+00:00", "2026-12-24T11:00:00+00:00",
                     "2026-12-24T16:00:00+00:00", "2026-12-28T10:00:00+00:00"]
    util = pop.utilisation("PT1H")["clerk"]
    night = util[(util.index.hour < 9) | (util.index.hour >= 17)]
    assert (night == 0).all()
    assert (util[util.index.normalize() == pd.Timestamp("2026-12-25", tz="UTC")] == 0).all()


def escalating():
    p = bpm.Process("claim")
    p.start("s")
    p.user_task("review")
    p.timer_boundary("late", attached_to="review", duration="PT2H")
    p.user_task("escalate")
    p.end("done")
    p.end("escalated")
    p.flow("s", "review", "done")
    p.flow("late", "escalate", "escalated")
    return p


def test_a_boundary_timer_escalates_cases_that_wait_too_long():
    """One reviewer, 90 min reviews, four cases at once: the first two are reviewed in
    time; the two still queued after 2 h are withdrawn from the queue by the interrupting
    boundary timer (the engine's), and the escalation task is done by the managers."""
    sc = bpm.Scenario(
        escalating(), start="2026-01-05T09:00:00", horizon="PT1H",
        arrivals={"replay": [{"at": "2026-01-05T09:00:00"}] * 4},
        durations={"review": {"fixed": "PT90M"}, "escalate": {"fixed": "PT10M"}},
        pools={"reviewer": {"size": 1}, "managers": {"size": 3}},
        assign={"review": "reviewer", "escalate": "managers"})
    pop = sc.run(progress=False)
    c = pop.cases()
    assert list(c["end_event"]) == ["done", "escalated", "escalated", "escalated"]
    t = pop.tasks()
    assert t.loc["review", "count"] == 4
    assert t.loc["review", "done"] == 1
    assert t.loc["review", "withdrawn"] == 3
    assert t.loc["escalate", "done"] == 3
    ends = [e.strftime("%H:%M") for e in c["end"]]
    assert ends == ["10:30", "11:10", "11:10", "11:10"]


def test_an_item_withdrawn_while_worked_on_ends_with_ate_abort_in_the_event_log():
    """The review the boundary timer interrupts after it started ends with XES's
    ``ate_abort`` at the instant it was withdrawn; the two withdrawn from the queue, never
    started, have no row; the completed one has ``complete``."""
    sc = bpm.Scenario(
        escalating(), start="2026-01-05T09:00:00", horizon="PT1H",
        arrivals={"replay": [{"at": "2026-01-05T09:00:00"}] * 4},
        durations={"review": {"fixed": "PT90M"}, "escalate": {"fixed": "PT10M"}},
        pools={"reviewer": {"size": 1}, "managers": {"size": 3}},
        assign={"review": "reviewer", "escalate": "managers"})
    log = sc.run(progress=False).event_log()
    review = log[log["concept:name"] == "review"]
    seen = [(t.strftime("%H:%M"), step) for t, step in
            zip(review["time:timestamp"], review["lifecycle:transition"], strict=True)]
    assert seen == [("09:00", "start"), ("10:30", "complete"), ("10:30", "start"),
                    ("11:00", "ate_abort")]


def test_the_event_log_has_xes_columns_in_time_order():
    """The event log's columns are the XES ones; each work item has a start then a
    complete, rows are in time order, and resources name their pool."""
    sc = bpm.Scenario(one_task(), horizon="P1D", seed=3,
                      arrivals={"poisson": {"mean": "PT30M"}},
                      durations={"check": {"exponential": {"mean": "PT20M"}}},
                      pools={"clerks": {"size": 2}}, assign={"check": "clerks"})
    log = sc.run(progress=False).event_log()
    assert list(log.columns) == COLUMNS
    assert log["time:timestamp"].is_monotonic_increasing
    assert set(log["lifecycle:transition"]) == {"start", "complete"}
    assert set(log["concept:name"]) == {"Check order"}
    assert set(log["org:resource"]) <= {"clerks-1", "clerks-2"}
    for _, rows in log.groupby("case:concept:name"):
        assert list(rows["lifecycle:transition"]) == ["start", "complete"]


def test_the_xes_export_reads_back_through_pm4py(tmp_path):
    """to_xes writes a file pm4py reads back with the same events."""
    pm4py = pytest.importorskip("pm4py")
    sc = bpm.Scenario(one_task(), horizon="PT12H", seed=2,
                      arrivals={"poisson": {"mean": "PT30M"}},
                      durations={"check": {"exponential": {"mean": "PT20M"}}},
                      pools={"clerks": {"size": 1}}, assign={"check": "clerks"})
    pop = sc.run(progress=False)
    path = tmp_path / "run.xes"
    pop.to_xes(str(path))
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Install the optional requirement", UserWarning)
        back = pm4py.read_xes(str(path))
    log = pop.event_log()
    assert len(back) == len(log)
    assert list(back["case:concept:name"]) == list(log["case:concept:name"])
    assert list(back["lifecycle:transition"]) == list(log["lifecycle:transition"])
    assert list(pd.to_datetime(back["time:timestamp"], utc=True)) == \
        list(log["time:timestamp"])
    for wrong in ("", tmp_path / "run.csv", None):  # pm4py would add ".xes" and write
        with pytest.raises(ValueError, match="ending in .xes or .xes.gz"):
            pop.to_xes(wrong)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.xes"]


def test_a_bin_of_no_time_or_too_many_bins_is_refused_naming_freq():
    """Utilisation and queues over time refuse a bin of no time and a bin so short that the
    window would be cut into more than a million (a microsecond's bins once took the
    machine's whole memory), naming ``freq`` and the count."""
    sc = bpm.Scenario(one_task(), horizon="P1D", seed=2,
                      arrivals={"poisson": {"mean": "PT30M"}},
                      durations={"check": {"fixed": "PT20M"}},
                      pools={"clerks": {"size": 1}}, assign={"check": "clerks"})
    pop = sc.run(progress=False)
    with pytest.raises(bpm.ScenarioError, match="^freq: 'PT0S' is no time"):
        pop.utilisation("PT0S")
    with pytest.raises(bpm.ScenarioError, match=r"^freq: 'PT0.01S' cuts .* into [\d,]+ bins, "
                                                r"more than 1,000,000"):
        pop.queues("PT0.01S")
    by_minute = pop.utilisation("PT1M")  # the day measured, by the minute: allowed
    assert by_minute.index[1] - by_minute.index[0] == pd.Timedelta(minutes=1)
    assert len(by_minute) == 24 * 60


def test_warm_up_cases_are_left_out():
    """Cases arriving in the warm-up run but are in no KPI and not in the event log."""
    sc = bpm.Scenario(one_task(), start="2026-01-05T00:00:00", warmup="PT1H",
                      horizon="PT1H",
                      arrivals={"replay": [{"at": "2026-01-05T00:30:00"},
                                           {"at": "2026-01-05T01:30:00"}]})
    pop = sc.run(progress=False)
    assert list(pop.cases()["case"]) == ["i2"]
    assert set(pop.event_log()["case:concept:name"]) == {"i2"}


def test_branches_and_outside_messages_use_the_engine():
    """A gateway's branch weights are the engine's decision draws; a message sent from
    outside for a share of the cases reaches the ones waiting for it."""
    p = bpm.Process("pay")
    p.start("s")
    p.exclusive_gateway("route")
    p.message_catch("paid", message="paid", key="order")
    p.end("settled")
    p.end("free")
    p.flow("s", "route")
    p.flow("route", "paid", "settled")
    p.flow("route", "free")
    sc = bpm.Scenario(p, horizon="P2D", seed=4, arrivals={"poisson": {"mean": "PT30M"}},
                      data={"order": {"integer": {"low": 1, "high": 10**9}}},
                      branches={"route": {"paid": 0.75, "free": 0.25}},
                      outside=[{"message": "paid", "key": "order", "share": 0.8,
                                "after": {"exponential": {"mean": "PT1H"}}}])
    c = sc.run(progress=False).cases()
    share = (c["end_event"] == "free").mean()
    assert 0.15 < share < 0.35
    paid = c[c["end_event"] != "free"]
    assert 0.65 < paid["ended"].mean() < 0.95


def test_an_engine_without_a_history_refuses_a_rewind_and_still_branches():
    """keep_history=False records no command: a rewind is refused, saying so; branch()
    copies the engine where it stands."""
    eng = bpm.Engine(keep_history=False, dehydrate=False)
    eng.start(one_task())
    eng.run()
    assert eng.history() == []
    with pytest.raises(bpm.EngineError, match="keep_history=False"):
        eng.rewind(0)
    b = eng.branch()
    assert [t.node for t in b.tasks()] == ["check"]


def test_next_due_is_the_engine_s_next_deadline():
    """next_due is when the earliest armed timer falls due, None when none is armed."""
    eng = bpm.Engine(start="2026-01-01T00:00:00Z", dehydrate=False)
    assert eng.next_due is None
    eng.start(escalating())
    eng.run(until="2026-01-01T00:00:00Z")
    assert eng.next_due.isoformat() == "2026-01-01T02:00:00+00:00"


def test_the_plots_draw_cycle_times_pools_and_a_comparison():
    """The cycle-time histogram, the pools over time and the side-by-side figure draw from
    the run's data (matplotlib, no display)."""
    import matplotlib

    matplotlib.use("Agg")
    sc = bpm.Scenario(one_task(), horizon="P1D", seed=5, sla="PT1H",
                      arrivals={"poisson": {"mean": "PT30M"}},
                      durations={"check": {"exponential": {"mean": "PT25M"}}},
                      pools={"clerks": {"size": 1}}, assign={"check": "clerks"})
    a, b = sc.run(progress=False), sc.replace(pools={"clerks": {"size": 2}}).run(
        progress=False)
    ax = a.plot_cycle_times()
    assert ax.get_xlabel() == "cycle time (hours)"
    assert sum(p.get_height() for p in ax.patches) == a.cases()["ended"].sum()
    top, bottom = a.plot_pools()
    assert top.get_ylabel() == "utilisation" and bottom.get_ylabel() == "queue"
    fig = bpm.compare(a, b, labels=("one clerk", "two clerks"))
    titles = [x.get_title() for x in fig.axes]
    assert "one clerk" in titles and "two clerks" in titles
    assert b.summary()["waiting_h"] < a.summary()["waiting_h"]


def test_the_pools_plot_of_a_scenario_without_pools_says_so():
    """Every task in no pool (served at once): the pools plot draws no line and says there
    is no pool, rather than an empty legend (matplotlib's warning is an error here)."""
    import matplotlib

    matplotlib.use("Agg")
    sc = bpm.Scenario(one_task(), horizon="PT12H", seed=5,
                      arrivals={"poisson": {"mean": "PT30M"}},
                      durations={"check": {"fixed": "PT10M"}})
    top, _ = sc.run(progress=False).plot_pools()
    assert not top.lines and top.get_legend() is None
    assert [t.get_text() for t in top.texts] == ["no pools in the scenario"]


def test_compare_takes_three_populations_and_names_what_was_wrong():
    """Three scenarios side by side: a column of pools per population, each titled with its
    label, and the cycle-time histograms of all three overlaid; a missing or extra label, or
    something that is not a population, is a TypeError naming the count or the type."""
    import matplotlib

    matplotlib.use("Agg")
    sc = bpm.Scenario(one_task(), horizon="PT12H", seed=5, sla="PT1H",
                      arrivals={"poisson": {"mean": "PT30M"}},
                      durations={"check": {"exponential": {"mean": "PT25M"}}},
                      pools={"clerks": {"size": 1}}, assign={"check": "clerks"})
    pops = [sc.replace(pools={"clerks": {"size": n}}).run(progress=False) for n in (1, 2, 3)]
    fig = bpm.compare(*pops, labels=["one", "two", "three"])
    titles = [x.get_title() for x in fig.axes]
    assert [t for t in titles if t in ("one", "two", "three")] == ["one", "two", "three"]
    assert titles[0] == "Cycle time"
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert legend == ["one", "SLA", "two", "three"]
    assert len(fig.axes) == 1 + 2 * 3
    with pytest.raises(TypeError, match="3 strings, one per population; it was given 2"):
        bpm.compare(*pops, labels=["one", "two"])
    with pytest.raises(TypeError, match="two to 26 populations.*1 argument"):
        bpm.compare(pops[0])
    with pytest.raises(TypeError, match="two to 26 populations.*27 argument"):
        bpm.compare(*pops * 9)  # 27 columns: past Z for its labels, and 150 inches wide
    with pytest.raises(TypeError, match="Scenario"):
        bpm.compare(pops[0], sc)


def test_a_weekly_schedule_brings_cases_only_in_its_hours():
    """Arrivals by weekday and hour: cases arrive only in the hours listed, about as many
    as the rates say."""
    sc = bpm.Scenario(one_task(), start="2026-01-05T00:00:00", horizon="P14D", seed=2,
                      arrivals={"schedule": {"mon": {"09": 20, "10": 10},
                                             "fri": {"15": 30}}})
    arrivals = sc.run(progress=False).cases()["arrival"]
    assert set(zip(arrivals.dt.dayofweek, arrivals.dt.hour, strict=True)) == \
        {(0, 9), (0, 10), (4, 15)}
    assert 90 < len(arrivals) < 150  # 2 weeks x 60 a week


def test_the_expected_arrivals_of_a_schedule_are_its_rates_over_the_span():
    """How many cases a schedule brings on average over a span (what a scenario checks
    against its limit of a million): its rates summed hour by hour over the span, whole
    weeks and the hours left, parts of an hour counted in part."""
    from gobpm_nb.population.calendars import HOUR

    sc = bpm.Scenario(one_task(), start="2026-01-05T00:00:00", horizon="P14D",
                      arrivals={"schedule": {"mon": {"09": 20, "10": 10},
                                             "fri": {"15": 30}}})
    a, begin = sc.arrivals, sc.start  # 2026-01-05 is a Monday
    assert a.expected(begin, begin + 14 * 24 * HOUR) == 2 * 60
    assert a.expected(begin, begin + 17 * 24 * HOUR) == 2 * 60 + 30  # and Mon-Wed
    assert a.expected(begin + 9 * HOUR + HOUR // 2, begin + 10 * HOUR + HOUR // 4) == \
        20 / 2 + 10 / 4
    wide = 400 * 7 * 24 * HOUR  # 400 weeks: counted by the week, at once
    assert a.expected(begin + 3 * HOUR, begin + 3 * HOUR + wide) == 400 * 60


def test_a_run_leaves_the_collector_thresholds_as_it_found_them():
    """A run collects garbage less often while it goes: afterwards the collector's
    thresholds are the caller's again, and collection switched off stays off."""
    import gc

    before = gc.get_threshold()
    sc = bpm.Scenario(
        one_task(), start="2026-01-05T09:00:00", horizon="PT1H",
        arrivals={"replay": [{"at": "2026-01-05T09:00:00"}] * 2},
        durations={"check": {"fixed": "PT1H"}},
        pools={"clerk": {"size": 1}}, assign={"check": "clerk"})
    seen = []
    try:
        gc.set_threshold(500, 7, 9)
        sc.run(progress=False)
        seen.append(gc.get_threshold())
        gc.set_threshold(0, 7, 9)  # collection off: the run leaves it off
        sc.run(progress=False)
        seen.append(gc.get_threshold())
    finally:
        gc.set_threshold(*before)
    assert seen == [(500, 7, 9), (0, 7, 9)]


def test_the_progress_bar_measures_the_span_of_arrivals(monkeypatch):
    """An eight-hour horizon: the bar counts virtual hours out of 8 (out of the year of
    drain after it, it stood at a few per cent when the cases ended and vanished)."""
    import io

    import tqdm.auto

    sc = bpm.Scenario(one_task(), start="2026-01-05T09:00:00", horizon="PT8H",
                      arrivals={"poisson": {"mean": "PT30M"}},
                      pools={"clerk": {"size": 1}}, assign={"check": "clerk"},
                      durations={"check": {"fixed": "PT20M"}})
    out, bars, real = io.StringIO(), [], tqdm.auto.tqdm

    def recorded(*args, **kw):
        bars.append(real(*args, file=out, **kw))
        return bars[-1]

    monkeypatch.setattr(tqdm.auto, "tqdm", recorded)
    pop = sc.run(progress=True)
    (bar,) = bars
    assert bar.total == 8.0 and bar.n >= 8.0
    assert "virtual hours" in out.getvalue() and "/8.0 " in out.getvalue()
    assert pop.cases()["ended"].all()
    for odd in ("yes", 2, [True]):
        with pytest.raises(TypeError, match="^progress must be True, False or None, got"):
            sc.run(progress=odd)


def test_a_histogram_of_no_bars_or_a_billion_is_a_scenario_error_naming_bins():
    """A billion bars took minutes and gigabytes in matplotlib; none was numpy's
    ValueError."""
    import matplotlib

    matplotlib.use("Agg")
    sc = bpm.Scenario(one_task(), start="2026-01-05T09:00:00", horizon="PT4H",
                      arrivals={"poisson": {"mean": "PT30M"}},
                      durations={"check": {"fixed": "PT20M"}})
    pop = sc.run(progress=False)
    for bins in (0, -1, 10 ** 9, "x", 2.5, True):
        with pytest.raises(bpm.ScenarioError, match=r"^bins: .* a histogram needs a count "
                                                    r"of bars from 1 to 1,000$"):
            pop.plot_cycle_times(bins=bins)
    assert len(pop.plot_cycle_times(bins=1000).patches) == 1000
