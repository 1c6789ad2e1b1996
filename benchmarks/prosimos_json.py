"""A population scenario (its JSON form) and its BPMN model, written the way Prosimos reads them.

``to_prosimos(scenario, bpmn)`` returns a ``ProsimosInput``: Prosimos' simulation parameters
(the JSON ``prosimos start-simulation --json_path`` and ``run_simulation(json_path=...)`` read:
``resource_profiles``, ``resource_calendars``, ``task_resource_distribution``,
``arrival_time_distribution``, ``arrival_time_calendar``, ``gateway_branching_probabilities``),
the model as Prosimos reads it, the start date and the number of cases the horizon holds
(Prosimos simulates a number of cases, not a span of time). What Prosimos cannot express is
refused with ``ProsimosUnsupported``, whose message starts with the scenario field (or the
model element) at fault; nothing is silently dropped.

How each part is written (Prosimos 2.1, its parser ``simulation_properties_parser.py`` and the
distributions of ``pix_framework.statistics.distribution``; every time in seconds):

- ``durations``: ``fixed`` -> ``fix [value]``; ``exponential {mean}`` -> ``expon [mean, min 0,
  max]``; ``normal {mean, sd}`` -> ``norm [mean, sd, min 0, max]``; ``lognormal``/``gamma
  {mean, sd}`` -> ``lognorm``/``gamma [mean, variance, min 0, max]``; ``uniform {low, high}``
  -> ``uniform [low, high]``. Prosimos draws again a value outside [min, max]; max is set
  ``TAIL`` standard deviations above the mean, so it cuts nothing a run would meet. A normal
  draw below zero is drawn again there and is zero here: the two differ only where the
  standard deviation is a large part of the mean. ``empirical`` is refused: Prosimos has a
  histogram for arrivals only.
- ``pools``: one resource profile per pool, one resource of ``amount`` = size (Prosimos makes
  ``pool_0`` ... ``pool_{size-1}``), its calendar and cost per hour; a pool without a calendar
  gets ``ALWAYS`` (every day, all day). ``assign`` names the pool of each task; a task it does
  not name goes to the pool its lane names (its innermost lane's name, or id when unnamed,
  as here). Both sides
  pause a task's work outside its pool's calendar and resume it at the next opening.
- ``calendars``: each weekday's ranges become time periods; ``holidays`` are refused
  (Prosimos' calendars are weekly).
- ``arrivals``: ``poisson {mean}`` -> exponential inter-arrival times, arrival calendar
  ``ALWAYS``; ``schedule`` -> the hours it names as the arrival calendar and exponential
  inter-arrival times at its one rate (a schedule whose hours have different rates is refused:
  Prosimos has one inter-arrival distribution; within that, Prosimos moves an arrival that
  falls outside the calendar to the calendar's next opening, where the scenario's arrivals
  start afresh, a small difference at each opening); ``replay`` is refused. ``cases`` is the
  number of arrivals expected from ``start`` over ``warmup`` + ``horizon``, when the scenario's
  cases arrive.
- ``branches``: each exclusive split's weights, by flow id or by the node a flow leads to,
  written as probabilities; every exclusive split of the model needs them, with a weight for
  each of its flows (Prosimos chooses by probability only).
- ``data``, ``priority`` and ``outside`` are refused when they hold anything (case attributes,
  priority rules and outside triggers are not converted); ``seed`` and ``warmup`` are the
  run's (Prosimos draws from numpy's global generator; the caller seeds it and trims the
  warm-up); ``sla`` is a KPI threshold, not a parameter; ``drain`` is left out (Prosimos runs
  every case to its end, as a long drain does here).
- The model: one process, made of start events without a definition, plain or terminate end
  events, the tasks a pool takes here (user tasks and worker jobs, written as ``bpmn:task``:
  Prosimos reads no other kind), exclusive and parallel gateways and sequence flows (lanes and
  text are kept). Anything else (a task that runs at once here, subprocesses, boundary and
  intermediate events, event-based and inclusive gateways, multi-instance or loop tasks) is
  refused, naming the element. The scenario's defaults are this engine's (``docs/scenario.md``):
  the model's one process, ``start`` 2026-01-01T00:00:00 (UTC), ``horizon`` P30D, no
  warm-up.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import isodate
from lxml import etree

from gobpm_nb.errors import ScenarioError

BPMN = "http://www.omg.org/spec/BPMN/20100524/MODEL"
#: Task kinds Prosimos runs once written as ``bpmn:task``.
TASKS = {"task", "userTask", "manualTask", "serviceTask", "scriptTask", "businessRuleTask"}
#: What else a process may hold: run as drawn, or ignored by both sides.
KEPT = {"startEvent", "endEvent", "exclusiveGateway", "parallelGateway", "sequenceFlow",
        "laneSet", "textAnnotation", "association", "documentation", "extensionElements",
        "dataObject", "dataObjectReference"}
DAYS = {"mon": "MONDAY", "tue": "TUESDAY", "wed": "WEDNESDAY", "thu": "THURSDAY",
        "fri": "FRIDAY", "sat": "SATURDAY", "sun": "SUNDAY"}
WEEKDAY = {k: i for i, k in enumerate(DAYS)}  # mon 0 ... sun 6, as datetime.weekday()
END_OF_DAY = "23:59:59.999"
#: The calendar a pool without one, and Poisson arrivals, have: every day, all day.
ALWAYS = "always"
#: Standard deviations (or means, for the exponential) above the mean where Prosimos' draws
#: are cut: far enough that a run never meets it.
TAIL = 1000
SCENARIO_KEYS = {"process", "start", "warmup", "horizon", "drain", "seed", "arrivals", "data",
                 "durations", "pools", "calendars", "assign", "priority", "branches",
                 "outside", "sla"}


class ProsimosUnsupported(ScenarioError):
    """The scenario or its model holds what Prosimos cannot express (or is not a scenario);
    ``field`` (and ``path``, as for every ``ScenarioError``) is the scenario field or model
    element at fault, the message starts with it."""

    def __init__(self, field: str, why: str) -> None:
        super().__init__(field, why)
        self.field = field


@dataclass(frozen=True)
class ProsimosInput:
    """What Prosimos runs: ``parameters`` (its simulation-parameters JSON, as a dict),
    ``bpmn`` (the model as it reads it), ``starting_at`` (the scenario's start, ISO 8601
    with a UTC offset) and ``cases`` (the arrivals the scenario's horizon holds, expected)."""

    parameters: dict[str, Any]
    bpmn: bytes
    starting_at: str
    cases: int


def to_prosimos(scenario: dict[str, Any], bpmn: bytes | str | Path) -> ProsimosInput:
    """The scenario (its JSON form, a dict) and its BPMN model (bytes, text or a path) as
    Prosimos reads them; raises ``ProsimosUnsupported`` naming the first field or element
    Prosimos cannot express."""
    unknown = sorted(set(scenario) - SCENARIO_KEYS)
    if unknown:
        raise ProsimosUnsupported(unknown[0], "not a field of a scenario")
    for field in ("data", "priority", "outside"):
        if scenario.get(field):
            raise ProsimosUnsupported(field, f"Prosimos' parameters are not given {field}: "
                                             "leave it out to compare with Prosimos")
    root = _read_model(bpmn)
    process = _the_process(root, scenario.get("process"))
    tasks = _check_elements(process)
    pool_tasks = _pool_tasks(root, process.get("id", ""))
    for task in tasks:
        if task not in pool_tasks:
            raise ProsimosUnsupported(task, "a task that runs at once here, taking no pool's "
                                            "time; Prosimos gives every task to a pool")
    calendars = _calendars(scenario.get("calendars") or {})
    pools = scenario.get("pools") or {}
    parameters: dict[str, Any] = {
        "resource_profiles": _profiles(pools, calendars),
        "resource_calendars": [{"id": k, "name": k, "time_periods": v}
                               for k, v in sorted(calendars.items())],
        "task_resource_distribution": _task_distributions(scenario, tasks, process, pools),
        "gateway_branching_probabilities": _branches(scenario.get("branches") or {}, process),
    }
    start = _start(scenario)
    span = sum(_seconds(k, scenario.get(k, d)) for k, d in (("warmup", "PT0S"),
                                                              ("horizon", "P30D")))
    arrivals, calendar, cases = _arrivals(_required(scenario, "arrivals", dict), start, span)
    parameters["arrival_time_distribution"] = arrivals
    parameters["arrival_time_calendar"] = calendar
    return ProsimosInput(parameters, _as_prosimos_reads(root), start.isoformat(), cases)


def _required(scenario: dict[str, Any], field: str, kind: type) -> Any:
    value = scenario.get(field)
    if not isinstance(value, kind):
        raise ProsimosUnsupported(field, f"missing, or not a {kind.__name__}")
    return value


def _seconds(field: str, text: Any) -> float:
    """An ISO 8601 duration in seconds (months and years refused: their length varies)."""
    try:
        value = isodate.parse_duration(text)
    except (isodate.ISO8601Error, TypeError, ValueError) as exc:
        raise ProsimosUnsupported(field, f"not an ISO 8601 duration: {text!r}") from exc
    if not isinstance(value, timedelta):
        raise ProsimosUnsupported(field, f"{text!r} counts months or years")
    if value.total_seconds() < 0:
        raise ProsimosUnsupported(field, f"{text!r} is negative")
    return value.total_seconds()


def _start(scenario: dict[str, Any]) -> datetime:
    """The scenario's start; a start without an offset is UTC (as Prosimos' dates are)."""
    text = scenario.get("start", "2026-01-01T00:00:00")
    if not isinstance(text, str):
        raise ProsimosUnsupported("start", f"not ISO 8601 text: {text!r}")
    try:
        start = datetime.fromisoformat(text)
    except ValueError as exc:
        raise ProsimosUnsupported("start", f"not an ISO 8601 date and time: {text!r}") from exc
    return start if start.tzinfo else start.replace(tzinfo=UTC)


def _read_model(bpmn: bytes | str | Path) -> etree._Element:
    """The model's root: ``bpmn`` is its bytes, its text (starting with ``<``) or a path."""
    if isinstance(bpmn, str) and not bpmn.lstrip().startswith("<"):
        bpmn = Path(bpmn)
    data = bpmn.read_bytes() if isinstance(bpmn, Path) else \
        bpmn.encode() if isinstance(bpmn, str) else bpmn
    parser = etree.XMLParser(resolve_entities=False, no_network=True, remove_comments=True)
    try:
        return etree.fromstring(data, parser)
    except etree.XMLSyntaxError as exc:
        raise ProsimosUnsupported("model", f"not XML: {exc}") from exc


def _local(node: etree._Element) -> str:
    return etree.QName(node).localname


def _the_process(root: etree._Element, pid: Any) -> etree._Element:
    processes = root.findall(f"{{{BPMN}}}process")
    if len(processes) != 1:
        raise ProsimosUnsupported("process", f"the model holds {len(processes)} processes; "
                                             "Prosimos runs every process of a file as one")
    if pid is not None and processes[0].get("id") != pid:
        raise ProsimosUnsupported("process", f"the model's process is "
                                             f"{processes[0].get('id')!r}, not {pid!r}")
    return processes[0]


def _pool_tasks(root: etree._Element, pid: str) -> set[str]:
    """The ids of the tasks a population run gives to a pool: user tasks and worker jobs, as
    this engine reads the model (every other task runs at once, taking no one's time)."""
    import gobpm_nb as bpm

    try:
        process = bpm.load_bpmn(etree.tostring(root)).process(pid)
    except bpm.ModelError as exc:
        raise ProsimosUnsupported("model", f"this engine does not run it: {exc}") from exc
    return {e.id for e in process.elements
            if e.kind == "user_task" or (e.kind == "service_task" and getattr(e, "topic", None))}


def _check_elements(process: etree._Element) -> list[str]:
    """The ids of the process's tasks, in document order, after checking that Prosimos runs
    every element of the process as drawn."""
    tasks = []
    for node in process:
        tag, eid = _local(node), node.get("id", "?")
        kids = {_local(k) for k in node}
        definitions = {k for k in kids if k.endswith("EventDefinition")}
        loop = kids & {"multiInstanceLoopCharacteristics", "standardLoopCharacteristics"}
        if tag in TASKS and not loop:
            tasks.append(eid)
        elif tag == "startEvent" and not definitions:
            continue
        elif tag == "endEvent" and definitions <= {"terminateEventDefinition"}:
            continue
        elif tag in KEPT - {"startEvent", "endEvent"}:
            continue
        else:
            what = f"{tag}{' with a loop' if loop else ''}{_definitions(definitions)}"
            raise ProsimosUnsupported(eid, f"a {what}: Prosimos does not run it as drawn")
    return tasks


def _definitions(definitions: set[str]) -> str:
    return f" ({', '.join(sorted(definitions))})" if definitions else ""


def _calendars(spec: Any) -> dict[str, list[dict[str, str]]]:
    """Calendar name -> Prosimos time periods; ``ALWAYS`` added."""
    if not isinstance(spec, dict):
        raise ProsimosUnsupported("calendars", "not an object")
    out = {}
    for name, days in spec.items():
        field = f"calendars.{name}"
        if not isinstance(days, dict):
            raise ProsimosUnsupported(field, "not an object")
        periods = []
        for day, ranges in days.items():
            if day == "holidays":
                if ranges:
                    raise ProsimosUnsupported(f"{field}.holidays", "Prosimos' calendars are "
                                                                   "weekly: no holidays")
                continue
            if day not in DAYS:
                raise ProsimosUnsupported(f"{field}.{day}", f"not a day ({', '.join(DAYS)})")
            if not isinstance(ranges, list):
                raise ProsimosUnsupported(f"{field}.{day}", "not a list of ranges")
            periods += [_period(f"{field}.{day}", DAYS[day], r) for r in ranges]
        if not periods:
            raise ProsimosUnsupported(field, "no working hours")
        out[name] = periods
    if ALWAYS in out:
        raise ProsimosUnsupported(f"calendars.{ALWAYS}", "a name the conversion keeps")
    out[ALWAYS] = [{"from": "MONDAY", "to": "SUNDAY", "beginTime": "00:00:00",
                    "endTime": END_OF_DAY}]
    return out


def _period(field: str, day: str, text: Any) -> dict[str, str]:
    """``"09:00-17:00"`` -> one Prosimos time period on ``day`` (``24:00`` ends the day)."""
    try:
        begin, end = (datetime.strptime(t.strip(), "%H:%M") if t.strip() != "24:00" else None
                      for t in str(text).split("-"))
    except ValueError as exc:
        raise ProsimosUnsupported(field, f"not a range HH:MM-HH:MM: {text!r}") from exc
    if begin is None or (end is not None and end <= begin):
        raise ProsimosUnsupported(field, f"{text!r} ends before it begins")
    return {"from": day, "to": day, "beginTime": begin.strftime("%H:%M:%S"),
            "endTime": end.strftime("%H:%M:%S") if end else END_OF_DAY}


def _profiles(pools: Any, calendars: dict[str, Any]) -> list[dict[str, Any]]:
    if not isinstance(pools, dict) or not pools:
        raise ProsimosUnsupported("pools", "missing: Prosimos needs a pool for every task")
    out = []
    for name, pool in pools.items():
        field = f"pools.{name}"
        if not isinstance(pool, dict):
            raise ProsimosUnsupported(field, "not an object")
        for key in sorted(set(pool) - {"size", "calendar", "cost_per_hour"}):
            raise ProsimosUnsupported(f"{field}.{key}", "not converted for Prosimos")
        size, calendar = pool.get("size", 1), pool.get("calendar", ALWAYS)
        if not isinstance(size, int) or isinstance(size, bool) or size < 1:
            raise ProsimosUnsupported(f"{field}.size", f"not a whole number >= 1: {size!r}")
        if calendar not in calendars:
            raise ProsimosUnsupported(f"{field}.calendar", f"no calendar {calendar!r}")
        cost = pool.get("cost_per_hour", 0)
        if not isinstance(cost, (int, float)) or isinstance(cost, bool):
            raise ProsimosUnsupported(f"{field}.cost_per_hour", f"not a number: {cost!r}")
        out.append({"id": name, "name": name, "resource_list": [
            {"id": name, "name": name, "cost_per_hour": cost, "amount": size,
             "calendar": calendar, "assignedTasks": []}]})
    return out


def _lanes(process: etree._Element) -> dict[str, str]:
    """Task id -> the name of the innermost lane that holds it (its id when unnamed)."""
    out = {}
    for lane in process.iter(f"{{{BPMN}}}lane"):  # document order: an inner lane comes later
        for ref in lane.findall(f"{{{BPMN}}}flowNodeRef"):
            out[(ref.text or "").strip()] = lane.get("name") or lane.get("id", "")
    return out


def _task_distributions(scenario: dict[str, Any], tasks: list[str], process: etree._Element,
                        pools: dict[str, Any]) -> list[dict[str, Any]]:
    durations, assign = scenario.get("durations") or {}, scenario.get("assign") or {}
    for field, given in (("durations", durations), ("assign", assign)):
        if not isinstance(given, dict):
            raise ProsimosUnsupported(field, "not an object")
        for key in given:
            if key not in tasks:
                raise ProsimosUnsupported(f"{field}.{key}", f"no task {key!r} in the process")
    lanes, out = _lanes(process), []
    for task in tasks:
        pool = assign.get(task) or lanes.get(task)
        if pool is None:
            raise ProsimosUnsupported(f"assign.{task}", "missing: no pool named, and no lane "
                                                        "holds the task")
        if pool not in pools:
            raise ProsimosUnsupported(f"assign.{task}", f"no pool {pool!r}")
        if task not in durations:
            raise ProsimosUnsupported(f"durations.{task}", "missing: Prosimos needs the "
                                                           "duration of every task")
        dist = _distribution(f"durations.{task}", durations[task])
        out.append({"task_id": task, "resources": [{"resource_id": pool, **dist}]})
    return out


def _distribution(field: str, spec: Any) -> dict[str, Any]:
    """A scenario duration -> Prosimos' ``distribution_name`` and ``distribution_params``."""
    if not isinstance(spec, dict) or len(spec) != 1:
        raise ProsimosUnsupported(field, "not one distribution ({kind: parameters})")
    (kind, args), = spec.items()
    field = f"{field}.{kind}"
    if kind == "fixed":
        return _params("fix", _seconds(field, args))
    if kind == "empirical":
        raise ProsimosUnsupported(field, "Prosimos has no histogram for task durations")
    names = {"exponential": ("expon", {"mean"}), "normal": ("norm", {"mean", "sd"}),
             "lognormal": ("lognorm", {"mean", "sd"}), "gamma": ("gamma", {"mean", "sd"}),
             "uniform": ("uniform", {"low", "high"})}
    if kind not in names:
        raise ProsimosUnsupported(field, f"not a distribution ({', '.join(['fixed', *names])})")
    name, keys = names[kind]
    if not isinstance(args, dict) or set(args) != keys:
        raise ProsimosUnsupported(field, f"needs exactly {', '.join(sorted(keys))}")
    s = {k: _seconds(f"{field}.{k}", v) for k, v in args.items()}
    if kind == "exponential":
        return _params(name, s["mean"], 0, TAIL * s["mean"])
    if kind == "uniform":
        if s["high"] < s["low"]:
            raise ProsimosUnsupported(field, "high is below low")
        return _params(name, s["low"], s["high"])
    if kind != "normal" and s["mean"] <= 0:
        raise ProsimosUnsupported(f"{field}.mean", "must be above zero")
    top = s["mean"] + TAIL * s["sd"]
    spread = s["sd"] if kind == "normal" else s["sd"] ** 2  # norm: sd; lognorm, gamma: variance
    return _params(name, s["mean"], spread, 0, top)


def _params(name: str, *values: float) -> dict[str, Any]:
    return {"distribution_name": name,
            "distribution_params": [{"value": float(v)} for v in values]}


def _branches(spec: Any, process: etree._Element) -> list[dict[str, Any]]:
    """Each exclusive split's probabilities, by flow, in the model's order."""
    if not isinstance(spec, dict):
        raise ProsimosUnsupported("branches", "not an object")
    flows: dict[str, list[str]] = {}
    target: dict[str, str] = {}
    for flow in process.findall(f"{{{BPMN}}}sequenceFlow"):
        flows.setdefault(flow.get("sourceRef", ""), []).append(flow.get("id", ""))
        target[flow.get("id", "")] = flow.get("targetRef", "")
    splits = [g.get("id", "") for g in process.findall(f"{{{BPMN}}}exclusiveGateway")
              if len(flows.get(g.get("id", ""), [])) > 1]
    for gw in spec:
        if gw not in splits:
            raise ProsimosUnsupported(f"branches.{gw}", "no exclusive split of that id")
    out = []
    for gw in splits:
        given = spec.get(gw)
        if not isinstance(given, dict):
            raise ProsimosUnsupported(f"branches.{gw}", "missing: Prosimos chooses a flow "
                                                        "out of an exclusive split by chance")
        by_target = {target[f]: f for f in flows[gw]}
        given = {by_target.get(k, k): v for k, v in given.items()}  # a target names its flow
        for flow in sorted(set(given) - set(flows[gw])):
            raise ProsimosUnsupported(f"branches.{gw}.{flow}",
                                      f"not a flow out of {gw!r}, nor the node it leads to")
        for flow in flows[gw]:
            p = given.get(flow)
            if not isinstance(p, (int, float)) or isinstance(p, bool) or p < 0:
                raise ProsimosUnsupported(f"branches.{gw}.{flow}", f"not a weight >= 0: {p!r}")
        total = sum(given.values())
        if total <= 0:
            raise ProsimosUnsupported(f"branches.{gw}", "the weights sum to zero")
        out.append({"gateway_id": gw, "probabilities": [  # weights, as probabilities
            {"path_id": f, "value": given[f] / total} for f in flows[gw]]})
    return out


def _arrivals(spec: dict[str, Any], start: datetime,
              horizon: float) -> tuple[dict[str, Any], list[dict[str, str]], int]:
    """Prosimos' inter-arrival distribution, its arrival calendar and the arrivals expected
    within the horizon."""
    if len(spec) != 1:
        raise ProsimosUnsupported("arrivals", "not one kind (poisson, schedule or replay)")
    (kind, args), = spec.items()
    if kind == "replay":
        raise ProsimosUnsupported("arrivals.replay", "Prosimos' parameters have no list of "
                                                     "start times")
    if kind == "poisson":
        if not isinstance(args, dict) or set(args) != {"mean"}:
            raise ProsimosUnsupported("arrivals.poisson", "needs exactly mean")
        mean = _seconds("arrivals.poisson.mean", args["mean"])
        if mean <= 0:
            raise ProsimosUnsupported("arrivals.poisson.mean", "must be above zero")
        always = [{"from": "MONDAY", "to": "SUNDAY", "beginTime": "00:00:00",
                   "endTime": END_OF_DAY}]
        return _params("expon", mean, 0, TAIL * mean), always, round(horizon / mean)
    if kind != "schedule":
        raise ProsimosUnsupported(f"arrivals.{kind}", "not poisson, schedule or replay")
    hours = _schedule(args)
    rates = sorted(set(hours.values()))
    if len(rates) != 1:
        raise ProsimosUnsupported("arrivals.schedule", f"hours with different rates "
                                                       f"({', '.join(map(str, rates))} an "
                                                       "hour): Prosimos has one "
                                                       "inter-arrival distribution")
    mean = 3600 / rates[0]
    return (_params("expon", mean, 0, TAIL * mean), _hour_periods(hours),
            round(_expected(hours, start, horizon)))


def _schedule(spec: Any) -> dict[tuple[int, int], float]:
    """(weekday, hour) -> arrivals in that hour, for the hours with any."""
    if not isinstance(spec, dict):
        raise ProsimosUnsupported("arrivals.schedule", "not an object")
    out = {}
    for day, hours in spec.items():
        field = f"arrivals.schedule.{day}"
        if day not in DAYS or not isinstance(hours, dict):
            raise ProsimosUnsupported(field, f"not a day ({', '.join(DAYS)}) of hours")
        for hour, count in hours.items():
            if not (isinstance(hour, str) and hour.isdigit() and 0 <= int(hour) <= 23):
                raise ProsimosUnsupported(f"{field}.{hour}", "not an hour 00-23")
            if not isinstance(count, (int, float)) or isinstance(count, bool) or count < 0:
                raise ProsimosUnsupported(f"{field}.{hour}", f"not a count: {count!r}")
            if count:
                out[WEEKDAY[day], int(hour)] = float(count)
    if not out:
        raise ProsimosUnsupported("arrivals.schedule", "no arrivals at all")
    return out


def _hour_periods(hours: dict[tuple[int, int], float]) -> list[dict[str, str]]:
    """The scheduled hours as time periods, consecutive hours of a day joined."""
    days, out = list(DAYS.values()), []
    for day in range(7):
        taken = sorted(h for d, h in hours if d == day)
        for i, hour in enumerate(taken):
            if i and taken[i - 1] == hour - 1:
                continue
            end = hour
            while end + 1 in taken:
                end += 1
            out.append({"from": days[day], "to": days[day], "beginTime": f"{hour:02d}:00:00",
                        "endTime": f"{end + 1:02d}:00:00" if end < 23 else END_OF_DAY})
    return out


def _expected(hours: dict[tuple[int, int], float], start: datetime, horizon: float) -> float:
    """Arrivals the schedule expects from ``start`` over ``horizon`` seconds."""
    total, at, end = 0.0, start, start + timedelta(seconds=horizon)
    while at < end:
        nxt = min(end, at.replace(minute=0, second=0, microsecond=0) + timedelta(hours=1))
        rate = hours.get((at.weekday(), at.hour), 0.0)
        total += rate * (nxt - at).total_seconds() / 3600
        at = nxt
    return total


def _as_prosimos_reads(root: etree._Element) -> bytes:
    """The model with every task written as ``bpmn:task`` (Prosimos reads no other kind)."""
    copy = etree.fromstring(etree.tostring(root))
    for process in copy.findall(f"{{{BPMN}}}process"):
        for node in process:
            if isinstance(node.tag, str) and _local(node) in TASKS:
                node.tag = f"{{{BPMN}}}task"
    return bytes(etree.tostring(copy, xml_declaration=True, encoding="UTF-8"))
