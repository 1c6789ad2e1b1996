"""Population scenarios: the JSON/YAML form, its typed errors naming the field, and the
draws (one stream per source)."""

import json

import pytest

import gobpm_nb as bpm
from gobpm_nb.kernel import unit
from gobpm_nb.population.draws import Stream, read_duration


def order():
    p = bpm.Process("order")
    p.start("s")
    p.user_task("check")
    p.exclusive_gateway("ok?")
    p.service_task("ship", topic="ship")
    p.end("shipped")
    p.end("refused")
    p.flow("s", "check", "ok?")
    p.flow("ok?", "ship", "shipped")
    p.flow("ok?", "refused")
    return p


BASE = {"arrivals": {"poisson": {"mean": "PT10M"}}}


@pytest.mark.parametrize("change, path, words", [
    ({"durations": {"check": {"exponential": {"mean": "PT8X"}}}},
     "durations.check.exponential.mean", "'PT8X' is not an ISO 8601 duration"),
    ({"durations": {"check": {"normal": {"mean": "PT8M"}}}}, "durations.check.normal.sd",
     "missing"),
    ({"durations": {"check": {"weibull": {"mean": "PT8M"}}}}, "durations.check",
     "give exactly one of fixed"),
    ({"durations": {"nope": {"fixed": "PT1M"}}}, "durations.nope", "no user task"),
    ({"durations": {"check": {"empirical": {"bins": [["PT5M", 1], ["PT1M", 1]]}}}},
     "durations.check.empirical.bins[1][0]", "grow"),
    ({"arrivals": {"poisson": {"mean": "P1M"}}}, "arrivals.poisson.mean", "months"),
    ({"arrivals": {"schedule": {"mon": {"25": 3}}}}, "arrivals.schedule.mon.25", "hour"),
    ({"arrivals": {"replay": [{"at": "2026-01-02T00:00:00"}, {"at": "2026-01-01T00:00:00"}]}},
     "arrivals.replay[1].at", "before"),
    ({"arrivals": {"replay": [{"at": "yesterday"}]}}, "arrivals.replay[0].at",
     "not an ISO 8601 date-time"),
    ({"data": {"amount": {"uniform": {"low": 5, "high": 1}}}}, "data.amount.uniform.high",
     "below low"),
    ({"data": {"kind": {"choice": {"a": "lots"}}}}, "data.kind.choice.a", "not a finite"),
    ({"pools": {"clerks": {"size": 0}}}, "pools.clerks.size", "at least 1"),
    ({"pools": {"clerks": {"size": 1, "calendar": "office"}}}, "pools.clerks.calendar",
     "no calendar 'office'"),
    ({"calendars": {"office": {"mon": ["9:00-17:00"]}}}, "calendars.office.mon[0]",
     "HH:MM-HH:MM"),
    ({"calendars": {"office": {"holidays": ["Christmas"]}}}, "calendars.office.holidays[0]",
     "not an ISO 8601 date"),
    ({"assign": {"check": "clerks"}}, "assign.check", "no pool 'clerks'"),
    ({"pools": {"c": {"size": 1}}, "priority": {"c": "amount +"}}, "priority.c",
     "does not parse"),
    ({"branches": {"ok?": {"nowhere": 1}}}, "branches.ok?", "not one of its outgoing"),
    ({"branches": {"check": {"ship": 1}}}, "branches.check", "not an exclusive"),
    ({"outside": [{"message": "paid", "share": 1.5}]}, "outside[0].share", "above 1"),
    ({"outside": [{"after": {"fixed": "PT1H"}}]}, "outside[0]", "message, signal"),
    ({"sla": "four hours"}, "sla", "not an ISO 8601 duration"),
    ({"seed": -1}, "seed", "whole number"),
    ({"process": "other"}, "process", "not the model's process"),
    ({"colour": "blue"}, "colour", "unknown field"),
    ({"arrivals": None}, "arrivals", "expected a mapping"),
    # values a hostile or careless cell gives, refused as they are read, not when running
    ({"pools": {"clerks": {"size": 2 ** 70}}}, "pools.clerks.size", "above 1,000,000"),
    ({"pools": {"c": {"size": 1, "cost_per_hour": 1e308}}}, "pools.c.cost_per_hour",
     "above 1e+09"),
    ({"pools": {"c": {"size": 1}}, "assign": {"check": ["c"]}}, "assign.check",
     "not a non-empty string"),
    ({"process": ["p"]}, "process", "not a non-empty string"),
    ({"data": {"amount": {"fixed": float("nan")}}}, "data.amount.fixed",
     "JSON cannot hold"),
    ({"arrivals": {"replay": [{"at": "2026-01-02T00:00:00", "data": {"x": (1, 2)}}]}},
     "arrivals.replay[0].data", "not a JSON value"),
    ({"outside": [{"message": "paid", "payload": {"x": float("inf")}}]},
     "outside[0].payload", "JSON cannot hold"),
    ({"start": "9999-12-01T00:00:00"}, "start", "past the last day of the year 9999"),
    ({"horizon": "PT0S"}, "horizon", "longer than zero"),
    ({"arrivals": {"poisson": {"mean": "PT1S"}}}, "arrivals",
     "about 2,592,000 cases would arrive in the warm-up and horizon, more than 1,000,000"),
    ({"arrivals": {"schedule": {"mon": {"09": 1e308}}}}, "arrivals.schedule.mon.09",
     "above 1e+06"),
])
def test_a_bad_field_is_a_scenario_error_naming_its_path(change, path, words):
    """Every parse error is a ScenarioError (a GobpmError) whose message begins with the
    path of the field at fault and says what is wrong."""
    with pytest.raises(bpm.ScenarioError) as caught:
        bpm.Scenario.load(BASE | change, model=order())
    assert isinstance(caught.value, bpm.GobpmError)
    assert caught.value.path == path
    assert str(caught.value).startswith(f"{path}: ")
    assert words in str(caught.value)


@pytest.mark.parametrize("lanes, path, words", [
    (5, "lanes", "expected a mapping of names, got 5"),
    ({"check": 5}, "lanes.check", "5 is not a non-empty string"),
    ({"nope": "clerks"}, "lanes.nope", "no element 'nope' in process"),
])
def test_lanes_given_by_hand_are_checked_naming_the_element(lanes, path, words):
    """A Process's lanes given by hand (element id -> lane name) are read like every other
    field: a TypeError or a silently ignored unknown id before."""
    with pytest.raises(bpm.ScenarioError) as caught:
        bpm.Scenario(order(), lanes=lanes, pools={"clerks": {"size": 1}}, **BASE)
    assert caught.value.path == path and words in str(caught.value)
    sc = bpm.Scenario(order(), lanes={"check": "clerks"}, pools={"clerks": {"size": 1}},
                      **BASE)
    assert sc.pool_of("check").name == "clerks"


def test_the_issue_example_message_is_exact():
    """The message of a bad ISO duration reads as the field path, then the value."""
    with pytest.raises(bpm.ScenarioError, match=r"^durations\.check\.exponential\.mean: "
                                                r"'PT8X' is not an ISO 8601 duration$"):
        bpm.Scenario(order(), durations={"check": {"exponential": {"mean": "PT8X"}}}, **BASE)


def test_a_missing_arrivals_is_named():
    with pytest.raises(bpm.ScenarioError, match="^arrivals: missing"):
        bpm.Scenario(order())


def test_a_yaml_alias_bomb_is_refused_before_it_is_expanded():
    """A YAML file of a few hundred characters whose aliases stand for a billion strings
    (once took 90 s and every byte of memory) is refused as it is read, naming the aliases;
    aliases that only reuse a calendar are read as usual."""
    levels = ['&a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    levels += [f"&a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    bomb = ("arrivals: {poisson: {mean: PT1H}}\n"
            f"data: {{x: {{fixed: [{', '.join(levels)}]}}}}\n")
    with pytest.raises(bpm.ScenarioError, match="^the scenario's YAML aliases expand it to "
                                                "more than 10,000 values"):
        bpm.Scenario.load(bomb, model=order())
    reuse = ("arrivals: {poisson: {mean: PT1H}}\n"
             "calendars: {office: &week {mon: ['09:00-17:00']}, shop: *week}\n"
             "pools: {a: {size: 1, calendar: office}, b: {size: 1, calendar: shop}}\n")
    sc = bpm.Scenario.load(reuse, model=order())
    assert sc.pools["b"].calendar.week == sc.pools["a"].calendar.week


def test_a_value_shared_a_billion_times_is_refused_and_a_long_one_named_shortly():
    """Built in Python, a list shared at every level (a billion strings in all) is refused
    by count, in seconds; a bad one of half a million items is named by a message of a few
    dozen characters (its first items)."""
    x = ["lol"] * 10
    for _ in range(8):
        x = [x] * 10
    with pytest.raises(bpm.ScenarioError, match="more than 20,000,000 values"):
        bpm.Scenario(order(), data={"x": {"fixed": x}}, **BASE)
    with pytest.raises(bpm.ScenarioError) as caught:
        bpm.Scenario(order(), data={"x": {"choice": ["a"] * 500_000}}, **BASE)
    assert str(caught.value).startswith("data.x.choice: expected a mapping of names, got ['a'")
    assert len(str(caught.value)) < 120


@pytest.mark.parametrize("make", [
    lambda: '{"arrivals": ' + "[" * 100_000 + "]" * 100_000 + "}",  # JSON text
    lambda: "arrivals: " + "[" * 100_000 + "]" * 100_000 + "\n",  # YAML text
    lambda: {"arrivals": {"poisson": {"mean": "PT1H"}}, "data": {"x": {"fixed": _deep(5000)}}},
], ids=["json", "yaml", "python"])
def test_values_nested_past_a_hundred_levels_are_refused_not_a_recursion_error(make):
    """Nesting that would exhaust Python's stack while reading (a RecursionError escaped
    from json, yaml and the copy of the form) is a ScenarioError saying how deep is too
    deep."""
    with pytest.raises(bpm.ScenarioError, match="nests values more than 100 levels deep"):
        bpm.Scenario.load(make(), model=order())


def _deep(levels):
    x: list = []
    for _ in range(levels):
        x = [x]
    return x


FULL = {
    "process": "order", "start": "2026-01-05T00:00:00", "warmup": "P1D", "horizon": "P2D",
    "seed": 1, "arrivals": {"schedule": {"mon": {"09": 6, "10": 8}, "tue": {"09": 4}}},
    "data": {"amount": {"uniform": {"low": 10, "high": 500}},
             "kind": {"choice": {"a": 0.7, "b": 0.3}}},
    "durations": {"check": {"lognormal": {"mean": "PT8M", "sd": "PT2M"}},
                  "ship": {"empirical": {"bins": [["PT1M", 0.2], ["PT5M", 0.8]]}}},
    "pools": {"clerks": {"size": 2, "calendar": "office", "cost_per_hour": 30}},
    "calendars": {"office": {"mon": ["09:00-17:00"], "tue": ["09:00-12:00", "13:00-17:00"],
                             "holidays": ["2026-12-25"]}},
    "assign": {"check": "clerks"}, "priority": {"clerks": "amount"},
    "branches": {"ok?": {"ship": 0.9, "refused": 0.1}},
    "outside": [{"message": "paid", "after": {"exponential": {"mean": "P1D"}}, "share": 0.9}],
    "sla": "PT4H",
}


def test_json_yaml_and_keywords_build_the_same_scenario(tmp_path):
    """The JSON text, a YAML file and keyword arguments give one scenario: the same form
    back, and the same run."""
    yaml = pytest.importorskip("yaml")
    a = bpm.Scenario.load(json.dumps(FULL), model=order())
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(FULL))
    b = bpm.Scenario.load(path, model=order())
    c = bpm.Scenario(order(), **FULL)
    assert a.to_dict() == c.to_dict() == FULL
    assert b.to_dict()["pools"] == FULL["pools"]
    runs = [s.run(progress=False).event_log().to_csv() for s in (a, b, c)]
    assert runs[0] == runs[1] == runs[2]


def test_draws_come_from_one_stream_per_source():
    """The n-th draw of a source is the SHA-256 of (seed, source, n): another source's
    draws never shift it, and the engine's decisions use the same primitive."""
    s = Stream(7, "duration:check")
    first = [s.next() for _ in range(3)]
    assert first == [unit(7, "duration:check", n) for n in (1, 2, 3)]
    other = Stream(7, "duration:ship")
    other.next()
    again = Stream(7, "duration:check")
    assert [again.next() for _ in range(3)] == first


def test_adding_a_task_shifts_no_other_draw():
    """A scenario with a duration for one more task draws the same arrivals and the same
    durations for the tasks it had."""
    sc = bpm.Scenario(order(), **(BASE | {"horizon": "P1D",
                                          "durations": {"check": {"fixed": "PT1M"}}}))
    more = sc.replace(durations={"check": {"fixed": "PT1M"},
                                 "ship": {"exponential": {"mean": "PT30M"}}})
    a, b = sc.run(progress=False).cases(), more.run(progress=False).cases()
    assert list(a["arrival"]) == list(b["arrival"])


@pytest.mark.parametrize("form, mean_minutes", [
    ({"exponential": {"mean": "PT8M"}}, 8), ({"normal": {"mean": "PT10M", "sd": "PT2M"}}, 10),
    ({"lognormal": {"mean": "PT10M", "sd": "PT4M"}}, 10),
    ({"gamma": {"mean": "PT10M", "sd": "PT5M"}}, 10),
    ({"uniform": {"low": "PT1M", "high": "PT5M"}}, 3),
    ({"empirical": {"bins": [["PT1M", 0.2], ["PT5M", 0.8]]}}, 0.2 * 0.5 + 0.8 * 3),
    ({"fixed": "PT1H"}, 60),
])
def test_each_duration_distribution_has_its_mean(form, mean_minutes):
    """Sampled by inverse transform from a stream, each distribution's sample mean is
    within 3 % of its mean."""
    d = read_duration(form, "d")
    s = Stream(1, "d")
    n = 20_000
    mean = sum(d.sample(s.next()) for _ in range(n)) / n / 60e6
    assert mean == pytest.approx(mean_minutes, rel=0.03)
    assert d.mean / 60e6 == pytest.approx(mean_minutes)


def test_a_scenario_file_that_cannot_be_read_is_a_scenario_error_naming_it(tmp_path):
    """A missing file was a FileNotFoundError, a binary one a UnicodeDecodeError, and
    ``/dev/zero`` (named as a .yaml file through a link) filled the memory."""
    p = bpm.Process("p")
    p.start("s")
    p.end("e")
    p.flow("s", "e")
    binary = tmp_path / "binary.yaml"
    binary.write_bytes(b"\xff\xfe\x00 not text")
    zero = tmp_path / "zero.yaml"
    zero.symlink_to("/dev/zero")
    for path, why in ((tmp_path / "missing.json", "No such file or directory"),
                      (binary, "it is not UTF-8 text"),
                      (zero, r"it is not a regular file \(a directory, a device or a pipe\)")):
        with pytest.raises(bpm.ScenarioError, match=f"^cannot read scenario file '.*"
                                                    f"{path.name}': {why}$"):
            bpm.Scenario.load(str(path), model=p)
