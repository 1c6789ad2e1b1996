"""``Scenario``: a population what-if (``docs/scenario.md``), read once from its JSON form
(a dict, JSON or YAML text, a file) or built by keyword arguments of the same names. Every
field is checked when it is read: a bad one is a ScenarioError naming its path."""

from __future__ import annotations

import copy
import json
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..api import too_big
from ..errors import ModelError, ScenarioError
from ..errors import shown as bounded
from ..files import read_bounded
from ..kernel import to_us
from ..model import Process
from ..model import elements as el
from ..model.decisions import check_decision
from ..model.expr import Expr
from .arrivals import Arrivals, read_arrivals
from .calendars import ALWAYS, Calendar, read_calendar
from .draws import Distribution, Generator, read_duration, read_field
from .reading import count, duration, json_value, mapping, moment, need, number, only, shown, text
from .spec import UNASSIGNED, Outside, Pool, is_work

if TYPE_CHECKING:
    import pandas as pd


KEYS = ("process", "start", "warmup", "horizon", "drain", "seed", "arrivals", "data",
        "durations", "pools", "calendars", "assign", "priority", "branches", "outside", "sla")
#: The last instant a run may reach, in virtual microseconds (datetime's last day)
LAST = to_us(datetime(9999, 12, 31))
#: The most values a scenario may hold (a million arrivals replayed with their data fit)
MAX_VALUES = 20_000_000
#: The deepest a scenario may nest its values (the engine's start data may nest 100 levels)
MAX_DEPTH = 100
#: Below this many values a YAML scenario's aliases are never counted against its length
MIN_VALUES = 10_000
#: The most cases a run may expect to arrive (each is kept, with its work, to the end:
#: a million is a few gigabytes)
MAX_CASES = 1_000_000
#: The most resources a pool may have (a million: more is no queue at all, and its figures
#: would no longer fit the tables' whole-number columns)
MAX_POOL = 1_000_000
#: The highest cost per hour of a pool's resource (a billion: the costs of a run are sums
#: of these times hours, and must stay finite)
MAX_COST = 1e9
DEFAULTS: dict[str, Any] = {"start": "2026-01-01T00:00:00", "warmup": "PT0S",
                            "horizon": "P30D", "drain": "P365D", "seed": 0}


class Scenario:
    """A population what-if on one process: see ``docs/scenario.md``. Build it with
    keyword arguments (the JSON form's keys) or ``Scenario.load``; ``run()`` it,
    ``replicate(n)`` it, ``replace(...)`` a field for the next what-if."""

    def __init__(self, model: Any, *, lanes: dict[str, str] | None = None, **fields: Any):
        """``model``: a Process, or a BpmnModel (its lanes name the pools of their tasks);
        ``lanes``: task id -> lane name, for a Process; ``fields``: the JSON form's keys."""
        unknown = [k for k in fields if k not in KEYS]
        if unknown:
            raise ScenarioError(unknown[0], f"unknown field (expected one of {', '.join(KEYS)})")
        if _values_over(fields, MAX_VALUES):  # one list used a billion times, say
            raise ScenarioError("", f"the scenario holds more than {MAX_VALUES:,} values, "
                                    "each shared one counted where it is used")
        self.model = model
        self.form: dict[str, Any] = copy.deepcopy(fields)
        given = DEFAULTS | fields
        self.process = _process(model, given.get("process"))
        if not self.process.definition().start:
            raise ScenarioError("process", f"process {self.process.id!r} has no plain start "
                                           "event: a scenario's cases arrive there")
        self.lanes = self._lanes(lanes) if lanes is not None else \
            lanes_of(model, self.process.id)
        self.start = moment(given["start"], "start")
        self.warmup = duration(given["warmup"], "warmup")
        self.horizon = duration(given["horizon"], "horizon")
        if self.horizon <= 0:
            raise ScenarioError("horizon", "must be longer than zero (cases arrive in it, "
                                           "after the warm-up)")
        self.drain = duration(given["drain"], "drain")
        self.seed = count(given["seed"], "seed")
        if self.start + self.warmup + self.horizon + self.drain > LAST:
            raise ScenarioError("start", "the run would go past the last day of the year 9999 "
                                         "(start + warmup + horizon + drain)")
        if "arrivals" not in given:
            raise ScenarioError("arrivals", "missing")
        self.arrivals: Arrivals = read_arrivals(given["arrivals"])
        coming = self.arrivals.expected(self.start, self.start + self.warmup + self.horizon)
        if coming > MAX_CASES:
            raise ScenarioError("arrivals", f"about {coming:,.0f} cases would arrive in the "
                                            f"warm-up and horizon, more than {MAX_CASES:,} "
                                            "(a run keeps every case): arrive less often, "
                                            "or over a shorter horizon")
        self.data: dict[str, Generator] = {
            k: read_field(v, f"data.{k}") for k, v in mapping(given.get("data", {}),
                                                               "data").items()}
        self.durations = self._durations(given.get("durations", {}))
        self.calendars: dict[str, Calendar] = {
            k: read_calendar(k, v, f"calendars.{k}")
            for k, v in mapping(given.get("calendars", {}), "calendars").items()}
        self.pools = self._pools(given.get("pools", {}))
        self.assign = self._assign(given.get("assign", {}))
        self.priority = self._priority(given.get("priority", {}))
        self.branches = self._branches(given.get("branches", {}))
        self.outside = self._outside(given.get("outside", []))
        self.sla = duration(given["sla"], "sla") if given.get("sla") is not None else None

    # -- reading ----------------------------------------------------------------------------
    @classmethod
    def load(cls, source: Any, model: Any) -> Scenario:
        """A scenario from its JSON form: a dict, JSON or YAML text, or a path to a
        ``.json``/``.yaml``/``.yml`` file."""
        if isinstance(source, dict):
            return cls(model, **source)
        if isinstance(source, Path) or (isinstance(source, str) and "\n" not in source
                                        and source.endswith((".json", ".yaml", ".yml"))):
            source = _read(Path(source))
        if not isinstance(source, str):
            raise ScenarioError("", f"a scenario is a dict, JSON or YAML text or a path, got "
                                    f"{type(source).__name__}")
        return cls(model, **_parse_text(source))

    def _lanes(self, value: Any) -> dict[str, str]:
        """A Process's lanes given by hand: element id -> lane name."""
        nodes = self.process.definition().nodes
        out = {}
        for node, lane in mapping(value, "lanes").items():
            if node not in nodes:
                raise ScenarioError(f"lanes.{node}", f"no element {node!r} in process "
                                                     f"{self.process.id!r}")
            out[node] = text(lane, f"lanes.{node}")
        return out

    def _durations(self, value: Any) -> dict[str, Distribution]:
        out = {}
        for task, form in mapping(value, "durations").items():
            self._task(task, f"durations.{task}")
            out[task] = read_duration(form, f"durations.{task}")
        return out

    def _pools(self, value: Any) -> dict[str, Pool]:
        out = {}
        for name, form in mapping(value, "pools").items():
            path = f"pools.{name}"
            body = mapping(form, path)
            only(body, path, ("size", "calendar", "cost_per_hour"))
            size = count(need(body, "size", path), f"{path}.size", 1, MAX_POOL)
            cal = ALWAYS
            if body.get("calendar") is not None:
                cname = text(body["calendar"], f"{path}.calendar")
                if cname not in self.calendars:
                    raise ScenarioError(f"{path}.calendar", f"no calendar {cname!r} in "
                                                            "calendars")
                cal = self.calendars[cname]
            cost = number(body.get("cost_per_hour", 0), f"{path}.cost_per_hour", 0, MAX_COST)
            out[name] = Pool(name, size, cal, cost)
        return out

    def _assign(self, value: Any) -> dict[str, Pool]:
        out = {t: self.pools[lane] for t, lane in self.lanes.items() if lane in self.pools}
        for task, pool in mapping(value, "assign").items():
            self._task(task, f"assign.{task}")
            if text(pool, f"assign.{task}") not in self.pools:
                raise ScenarioError(f"assign.{task}", f"no pool {shown(pool)} in pools")
            out[task] = self.pools[pool]
        return out

    def _priority(self, value: Any) -> dict[str, Expr]:
        out = {}
        for pool, source in mapping(value, "priority").items():
            if pool not in self.pools:
                raise ScenarioError(f"priority.{pool}", f"no pool {pool!r} in pools")
            try:
                out[pool] = Expr(text(source, f"priority.{pool}"))
            except ModelError as exc:
                raise ScenarioError(f"priority.{pool}", str(exc)) from None
        return out

    def _branches(self, value: Any) -> dict[str, dict[str, float]]:
        out = {}
        defn = self.process.definition()
        for gateway, weights in mapping(value, "branches").items():
            path = f"branches.{gateway}"
            pairs = {k: number(w, f"{path}.{k}", 0) for k, w in mapping(weights, path).items()}
            node = defn.nodes.get(gateway)
            if not isinstance(node, (el.ExclusiveGateway, el.InclusiveGateway)):
                raise ScenarioError(path, f"{gateway!r} is not an exclusive or inclusive "
                                          f"gateway of process {self.process.id!r}")
            problems = check_decision(node, el.Decision(tuple(pairs.items())),
                                      list(defn.outgoing[gateway]))
            if problems:
                raise ScenarioError(path, "; ".join(problems))
            out[gateway] = pairs
        return out

    def _outside(self, value: Any) -> list[Outside]:
        if not isinstance(value, list):
            raise ScenarioError("outside", f"{shown(value)} is not a list")
        out = []
        for i, form in enumerate(value):
            path = f"outside[{i}]"
            body = mapping(form, path)
            only(body, path, ("message", "signal", "after", "share", "key", "payload"))
            kinds = [k for k in ("message", "signal") if k in body]
            if len(kinds) != 1:
                raise ScenarioError(path, "give exactly one of message, signal")
            name = text(body[kinds[0]], f"{path}.{kinds[0]}")
            after = read_duration(body.get("after", {"fixed": "PT0S"}), f"{path}.after")
            share = number(body.get("share", 1), f"{path}.share", 0)
            if share > 1:
                raise ScenarioError(f"{path}.share", f"{share!r} is above 1")
            key = text(body["key"], f"{path}.key") if body.get("key") is not None else None
            payload = json_value(dict(mapping(body["payload"], f"{path}.payload")),
                                 f"{path}.payload") if body.get("payload") is not None else None
            out.append(Outside(kinds[0], name, after, share, key, payload))
        return out

    def _task(self, task: str, path: str) -> None:
        node = self.process.definition().nodes.get(task)
        if not is_work(node):
            raise ScenarioError(path, f"no user task or worker service task {task!r} in "
                                      f"process {self.process.id!r}")

    # -- using ------------------------------------------------------------------------------
    def pool_of(self, task: str) -> Pool:
        return self.assign.get(task, UNASSIGNED)

    def runnable(self) -> Process:
        """The process as the run deploys it: the branches' gateways decide by weight."""
        p = Process.of(self.process.definition())
        for gateway, weights in self.branches.items():
            p.decide(gateway, weights)
        return p

    def replace(self, **changes: Any) -> Scenario:
        """The same scenario with some fields replaced (a what-if of a what-if)."""
        return Scenario(self.model, lanes=self.lanes, **(self.form | changes))

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled (for Dask) as its process, lanes and JSON form: a BPMN model's parsed
        file does not travel."""
        return _restore, (self.process, self.lanes, self.form)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (times and spans given as Python objects come back as ISO text)."""
        out: dict[str, Any] = _jsonable(self.form)
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1)

    def run(self, *, progress: bool | None = None, dashboard: Any = None) -> Any:
        """Run the scenario once on a fresh engine (see ``docs/scenario.md``); ``progress``
        shows a progress bar over virtual time, from the start to the end of arrivals (None:
        only for runs over a second). ``dashboard=True`` shows a population dashboard in the
        cell's output that follows the run; a dashboard of ``dashboard()`` (displayed
        first) is followed as it is."""
        from .driver import drive

        if progress not in (None, True, False):
            raise TypeError(f"progress must be True, False or None, got {shown(progress)}")
        if dashboard is None or dashboard is False:
            return drive(self, progress)
        from .board import dashboards, empty_board

        board, handle = dashboards().shown(self, dashboard, empty_board(self))
        pop = drive(self, progress, board)
        if handle is not None:
            handle.update(board)  # the cell's output keeps the run's end
        return pop

    def dashboard(self) -> Any:
        """A population dashboard of this scenario (``gobpm_nb.ui.PopulationDashboard``),
        not run yet: display it, then ``run(dashboard=board)`` and it follows the run."""
        from .board import dashboards, empty_board

        return dashboards().PopulationDashboard(self, empty_board(self))

    def replicate(self, n: int, client: Any = None) -> pd.DataFrame:
        """``n`` replications on Dask (a local cluster, or ``client``): the mean of each
        KPI with its 95 % confidence interval (Student t)."""
        from .replicate import replicate

        return replicate(self, n, client)

    def __repr__(self) -> str:
        return f"Scenario({self.process.id!r}, arrivals={self.arrivals.kind}, " \
               f"pools={sorted(self.pools)}, seed={self.seed})"


def _read(path: Path) -> str:
    """A scenario file's text (UTF-8), or a ScenarioError saying why it cannot be read."""
    try:
        return read_bounded(path).decode("utf-8")
    except ValueError as why:  # UnicodeDecodeError is one
        reason = "it is not UTF-8 text" if isinstance(why, UnicodeDecodeError) else str(why)
        raise ScenarioError("", f"cannot read scenario file {bounded(str(path))}: "
                                f"{reason}") from None


def _restore(process: Process, lanes: dict[str, str], form: dict[str, Any]) -> Scenario:
    return Scenario(process, lanes=lanes, **form)


def _process(model: Any, pid: Any) -> Process:
    if pid is not None:
        text(pid, "process")
    if isinstance(model, Process):
        if pid is not None and pid != model.id:
            raise ScenarioError("process", f"{shown(pid)} is not the model's process "
                                           f"{model.id!r}")
        return model
    if hasattr(model, "processes") and hasattr(model, "process"):  # a BpmnModel
        if pid is not None and pid not in model.processes:
            raise ScenarioError("process", f"no process {shown(pid)} in the model (it has "
                                           f"{', '.join(model.processes)})")
        try:
            found: Process = model.process(pid)
        except ModelError as exc:
            raise ScenarioError("process", str(exc)) from None
        return found
    raise ScenarioError("", f"the model is a Process or a BpmnModel, got "
                            f"{type(model).__name__}")


def lanes_of(model: Any, pid: str) -> dict[str, str]:
    """Task id -> lane name (its id when unnamed), from a BPMN file's lane sets."""
    tree = getattr(model, "tree", None)
    if tree is None:
        return {}
    out: dict[str, str] = {}
    for proc in tree.getroot().iter():
        if isinstance(proc.tag, str) and proc.tag.endswith("}process") and proc.get("id") == pid:
            for lane in proc.iter():
                if isinstance(lane.tag, str) and lane.tag.endswith("}lane"):
                    name = lane.get("name") or lane.get("id")
                    for ref in lane:
                        if isinstance(ref.tag, str) and ref.tag.endswith("}flowNodeRef"):
                            out[(ref.text or "").strip()] = name
    return out


def _parse_text(source: str) -> dict[str, Any]:
    try:
        value = json.loads(source)
    except RecursionError:
        raise _too_deep() from None
    except ValueError:
        try:
            import yaml
        except ImportError:
            raise ScenarioError("", "the scenario is not JSON, and reading YAML needs PyYAML "
                                    "(pip install 'gobpm_nb[population]')") from None
        try:
            value = yaml.safe_load(source)
        except RecursionError:
            raise _too_deep() from None
        except yaml.YAMLError as exc:
            raise ScenarioError("", f"the scenario is neither JSON nor YAML ({exc})") from None
        limit = max(len(source), MIN_VALUES)
        if _values_over(value, limit):
            raise ScenarioError("", f"the scenario's YAML aliases expand it to more than "
                                    f"{limit:,} values (one for each character of its text, "
                                    f"or {MIN_VALUES:,}): an alias bomb? write it out "
                                    "without them") from None
    if not isinstance(value, dict):
        raise ScenarioError("", f"a scenario is a mapping, got {type(value).__name__}")
    return value


def _values_over(value: Any, limit: int) -> bool:
    """Whether ``value`` holds more than ``limit`` values, each alias counted where it is
    used (as reading the scenario would expand it; the engine's ``too_big``). Nesting
    deeper than ``MAX_DEPTH`` is a ScenarioError (reading it would exhaust the stack)."""
    found = too_big(value, limit, MAX_DEPTH)
    if found == "depth":
        raise _too_deep()
    return found == "count"


def _too_deep() -> ScenarioError:
    return ScenarioError("", f"the scenario nests values more than {MAX_DEPTH} levels deep")


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, timedelta):
        import isodate

        return isodate.duration_isoformat(value)
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    return value
