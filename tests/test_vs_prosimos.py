"""The scenario written as Prosimos' simulation parameters (benchmarks/prosimos_json.py): what
each field becomes, what Prosimos cannot express is refused naming the field, and Prosimos
runs what it writes; and benchmarks/vs_prosimos.py prints every figure (slow)."""

import copy
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gobpm_nb.errors import ScenarioError

BENCH = Path(__file__).resolve().parent.parent / "benchmarks"
sys.path.insert(0, str(BENCH))
from prosimos_json import ProsimosUnsupported, to_prosimos  # noqa: E402
from vs_prosimos import SCENARIOS  # noqa: E402

ORDER_FILE, ORDER = SCENARIOS["order"]
MODEL = BENCH / "data" / ORDER_FILE


def order(**changes):
    sc = copy.deepcopy(ORDER)
    sc.update(changes)
    return sc


def converted(sc=None, model=MODEL):
    return to_prosimos(order() if sc is None else sc, model)


def test_durations_pools_and_branches_are_written_in_seconds_per_pool():
    """Each task's distribution, in seconds, on the pool that does it."""
    tasks = {t["task_id"]: t["resources"] for t in converted().parameters[
        "task_resource_distribution"]}
    assert tasks["check"] == [{"resource_id": "clerks", "distribution_name": "expon",
                               "distribution_params": [{"value": 480.0}, {"value": 0.0},
                                                       {"value": 480000.0}]}]
    assert tasks["pack"][0]["distribution_name"] == "norm"
    assert [p["value"] for p in tasks["pack"][0]["distribution_params"]][:3] == [600, 120, 0]
    assert tasks["notify"][0]["distribution_params"] == [{"value": 300.0}]
    assert list(tasks) == ["check", "pack", "notify"]  # the model's order


def test_pools_become_resource_profiles_with_their_calendars():
    params = converted().parameters
    clerks = params["resource_profiles"][0]
    assert clerks["id"] == "clerks"
    assert clerks["resource_list"] == [{"id": "clerks", "name": "clerks", "cost_per_hour": 30,
                                        "amount": 2, "calendar": "office",
                                        "assignedTasks": []}]
    office = next(c for c in params["resource_calendars"] if c["id"] == "office")
    assert office["time_periods"][0] == {"from": "MONDAY", "to": "MONDAY",
                                         "beginTime": "09:00:00", "endTime": "17:00:00"}
    assert len(office["time_periods"]) == 5


def test_a_pool_without_calendar_works_all_day_every_day():
    sc = order()
    del sc["pools"]["warehouse"]["calendar"]
    profile = converted(sc).parameters["resource_profiles"][1]["resource_list"][0]
    always = next(c for c in converted(sc).parameters["resource_calendars"]
                  if c["id"] == profile["calendar"])
    assert always["time_periods"] == [{"from": "MONDAY", "to": "SUNDAY",
                                       "beginTime": "00:00:00", "endTime": "23:59:59.999"}]


def test_branch_weights_become_probabilities_by_flow_or_by_target():
    """Weights 7 and 3 are 0.7 and 0.3; a weight may name the node its flow leads to."""
    probs = converted(order(branches={"gw": {"pack": 7, "notify": 3}})).parameters[
        "gateway_branching_probabilities"]
    assert probs == [{"gateway_id": "gw", "probabilities": [
        {"path_id": "flow_a", "value": 0.7}, {"path_id": "flow_b", "value": 0.3}]}]


def test_poisson_arrivals_and_the_cases_the_span_holds():
    """Arrivals every 30 minutes over a day of warm-up and 28 days: 1,392 cases expected."""
    inp = converted()
    assert inp.parameters["arrival_time_distribution"] == {
        "distribution_name": "expon",
        "distribution_params": [{"value": 1800.0}, {"value": 0.0}, {"value": 1800000.0}]}
    assert inp.cases == 29 * 48
    assert inp.starting_at == "2026-01-05T00:00:00+00:00"


def test_a_schedule_of_one_rate_is_its_hours_as_the_arrival_calendar():
    """Six an hour from 09 to 11 on Monday (10:00 and 11:00 joined), and 14 on Tuesday."""
    sc = order(arrivals={"schedule": {"mon": {"09": 6, "10": 6, "11": 0}, "tue": {"14": 6}}},
               warmup="PT0S", horizon="P7D")
    inp = converted(sc)
    assert inp.parameters["arrival_time_calendar"] == [
        {"from": "MONDAY", "to": "MONDAY", "beginTime": "09:00:00", "endTime": "11:00:00"},
        {"from": "TUESDAY", "to": "TUESDAY", "beginTime": "14:00:00", "endTime": "15:00:00"}]
    assert inp.parameters["arrival_time_distribution"]["distribution_params"][0] == {
        "value": 600.0}
    assert inp.cases == 18  # one week from a Monday: three scheduled hours of six


def test_a_task_without_assignment_goes_to_the_pool_its_lane_names():
    sc = order()
    del sc["assign"]
    tasks = {t["task_id"]: t["resources"][0]["resource_id"]
             for t in converted(sc).parameters["task_resource_distribution"]}
    assert tasks == {"check": "clerks", "pack": "warehouse", "notify": "clerks"}


def test_the_model_is_written_with_plain_tasks_for_prosimos():
    text = converted().bpmn.decode()
    assert "userTask" not in text
    assert text.count("<bpmn:task ") == 3


def refused(sc, model=MODEL):
    with pytest.raises(ProsimosUnsupported) as info:
        to_prosimos(sc, model)
    return info.value


def without(key):
    sc = order()
    del sc[key]
    return sc


@pytest.mark.parametrize("sc, field", [
    (order(calendars={"office": {**ORDER["calendars"]["office"], "holidays": ["2026-01-06"]},
                      "shop": ORDER["calendars"]["shop"]}), "calendars.office.holidays"),
    (order(durations={**ORDER["durations"],
                      "pack": {"empirical": {"bins": [["PT5M", 1]]}}}),
     "durations.pack.empirical"),
    (order(durations={**ORDER["durations"], "check": {"exponential": {"mean": "soon"}}}),
     "durations.check.exponential.mean"),
    (order(durations={**ORDER["durations"], "check": {"triangular": {"mean": "PT1M"}}}),
     "durations.check.triangular"),
    (order(durations={k: v for k, v in ORDER["durations"].items() if k != "notify"}),
     "durations.notify"),
    (order(durations={**ORDER["durations"], "ship": {"fixed": "PT1H"}}), "durations.ship"),
    (order(arrivals={"replay": [{"at": "2026-01-05T09:00:00"}]}), "arrivals.replay"),
    (order(arrivals={"schedule": {"mon": {"09": 6, "10": 8}}}), "arrivals.schedule"),
    (order(arrivals={"poisson": {"mean": "PT1M", "calendar": "office"}}), "arrivals.poisson"),
    (without("arrivals"), "arrivals"),
    (order(data={"amount": {"uniform": {"low": 1, "high": 2}}}), "data"),
    (order(priority={"clerks": "amount"}), "priority"),
    (order(outside=[{"message": "paid", "after": {"fixed": "P1D"}}]), "outside"),
    (without("branches"), "branches.gw"),
    (order(branches={"gw": {"flow_a": 1, "nope": 0}}), "branches.gw.nope"),
    (order(branches={"gw": {"flow_a": 1}}), "branches.gw.flow_b"),
    (order(branches={"gw": {"flow_a": 0.7, "flow_b": 0.3}, "merge": {"to_end": 1}}),
     "branches.merge"),
    (order(assign={**ORDER["assign"], "check": "nobody"}), "assign.check"),
    (order(pools={**ORDER["pools"], "clerks": {"size": 0}}), "pools.clerks.size"),
    (order(pools={**ORDER["pools"], "clerks": {"size": 2, "calendar": "night"}}),
     "pools.clerks.calendar"),
    (order(pools={**ORDER["pools"], "clerks": {"size": 2, "shifts": 3}}), "pools.clerks.shifts"),
    (order(calendars={"office": {"mon": ["17:00-09:00"]}, "shop": {}}),
     "calendars.office.mon"),
    (order(calendars={"office": {"someday": ["09:00-17:00"]}, "shop": {}}),
     "calendars.office.someday"),
    (order(process="invoice"), "process"),
    (order(horizon="P1M"), "horizon"),
    (order(shifts=2), "shifts"),
])
def test_what_prosimos_cannot_express_is_refused_naming_the_field(sc, field):
    err = refused(sc)
    assert err.field == err.path == field
    assert isinstance(err, ScenarioError)
    assert str(err).startswith(f"{field}: ")


def model_with(inside: str) -> bytes:
    """The order model with ``inside`` added to its process."""
    text = MODEL.read_text()
    return text.replace("  </bpmn:process>", inside + "\n  </bpmn:process>").encode()


@pytest.mark.parametrize("inside, element, words", [
    ('<bpmn:boundaryEvent id="late" attachedToRef="check"><bpmn:timerEventDefinition>'
     '<bpmn:timeDuration>PT1H</bpmn:timeDuration></bpmn:timerEventDefinition>'
     '</bpmn:boundaryEvent>', "late", "boundaryEvent (timerEventDefinition)"),
    ('<bpmn:subProcess id="sub" />', "sub", "subProcess"),
    ('<bpmn:scriptTask id="log" />', "log", "task that runs at once here"),
])
def test_model_elements_prosimos_does_not_run_are_refused_naming_them(inside, element, words):
    err = refused(order(), model_with(inside))
    assert err.field == element
    assert words in str(err)


def test_a_file_of_two_processes_is_refused():
    second = '</bpmn:process><bpmn:process id="other"><bpmn:startEvent id="s2" />'
    err = refused(order(), model_with(second))
    assert err.field == "process" and "2 processes" in str(err)


def test_prosimos_runs_what_the_conversion_writes(tmp_path):
    """Prosimos reads the parameters and the model, and simulates 30 cases through check,
    then pack or notify, by the pools named."""
    pytest.importorskip("prosimos")
    from prosimos.simulation_engine import run_simulation

    inp = converted()
    (tmp_path / "m.bpmn").write_bytes(inp.bpmn)
    (tmp_path / "p.json").write_text(json.dumps(inp.parameters))
    _, log = run_simulation(str(tmp_path / "m.bpmn"), str(tmp_path / "p.json"), 30,
                            starting_at=inp.starting_at)
    assert len(log.trace_list) == 30
    runs = [(e.task_id, log.sim_setup.resources_map[e.resource_id].pool_info.pool_id)
            for t in log.trace_list for e in t.event_list]
    assert {t for t, _ in runs} == {"check", "pack", "notify"}
    assert all(pool == dict(ORDER["assign"])[task] for task, pool in runs)
    assert all([e.task_id for e in t.event_list][0] == "check" and len(t.event_list) == 2
               for t in log.trace_list)


@pytest.mark.slow
def test_the_benchmark_prints_every_figure_of_both_models(tmp_path):
    """Two replications of a week on each side: each KPI row with both sides' figures and
    their verdict, the closed form, both speeds and their ratio (Prosimos' side alone, and
    saying so, in a build without the population run)."""
    import gobpm_nb as bpm

    sides = ("prosimos", "gobpm_nb") if hasattr(bpm, "Scenario") else ("prosimos",)
    out = tmp_path / "figures.json"
    proc = subprocess.run([sys.executable, str(BENCH / "vs_prosimos.py"), "--reps", "2",
                           "--horizon", "P7D", "--json", str(out)],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = proc.stdout
    figure = r"[\d.]+ ± +[\d.]+"
    row = " +".join([figure] * len(sides)) + (" +(inside|overlap|NO)" if len(sides) == 2
                                              else "")
    for kpi in ("cycle time", "waiting check", "waiting pack", "waiting notify",
                "utilisation clerks", "utilisation warehouse", "waiting serve",
                "utilisation servers"):
        assert re.search(rf"^{kpi} +{row}$", text, re.MULTILINE), (kpi, text)
    assert "closed form (Erlang C)  waiting 28.1" in text
    for side in sides:
        assert len(re.findall(rf"^speed {side}: \d+ cases in [\d.]+ s = \d+ cases/s$", text,
                              re.MULTILINE)) == 2, text
    ratios = re.findall(r"^ratio=\d+\.\d\d target>=3\.00$", text, re.MULTILINE)
    assert len(ratios) == (2 if len(sides) == 2 else 0)
    assert ("has no Scenario" in text) == (len(sides) == 1)
    models = json.loads(out.read_text())["models"]
    assert set(models) == {"order", "mmc"}
    assert set(models["mmc"]) == set(sides)
