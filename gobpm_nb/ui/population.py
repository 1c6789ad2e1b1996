"""A population dashboard: a scenario's run on its process, as it runs and as it ended.

``Scenario.run(dashboard=True)`` shows one in the cell's output and follows the run;
``sc.dashboard()`` makes one to display first and pass as ``run(dashboard=board)``;
``Population.dashboard()`` shows a finished run's end. It draws a board
(``gobpm_nb.population.board.Board``, read from the run between two of its instants; this
layer does not import the population's, which finds this module through the package
root's ``register_dashboards``): the virtual clock, the case counters, each pool's busy
resources and waiting work, and the tokens standing on each element of the process now,
as a heat map on the same BPMN diagram the process view draws
(:mod:`gobpm_nb.render.heat`).

How it follows a run: the driver calls the dashboard's watch once per virtual instant it
ran; the watch notes the instant and pokes a :class:`~gobpm_nb.ui.coalesce.Coalescer`, which
rebuilds the traits at most once per ``INTERVAL`` of wall time, and a rebuild that took
``c`` seconds is followed by at least ``BUDGET * c`` seconds without one (as the live views
do: :mod:`gobpm_nb.ui.live`). When the run ends the dashboard shows its exact end. A run
with no dashboard calls nothing. What the dashboard shows is a function of the run and the
instant only (the wall clock only decides *which* instants a preview shows), so the end
is the same every time.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ..render.dot import captioned
from ..render.heat import MEASURE, heat_dot, heat_legend, heat_marks
from .coalesce import Coalescer
from .live import BUDGET, INTERVAL
from .process import Drawings
from .views import marked, with_png
from .widgets import PopulationWidget

#: A board: ``at``, ``clock``, ``counters``, ``pools``, ``heat``, ``tokens`` (its class is
#: the population's; a scenario (``Plan``) is read for ``process``, ``seed``, ``pools``).
Board = Any
Plan = Any

NOT_RUN, RUNNING, ENDED = "not run yet", "running", "ended"


class PopulationDashboard(PopulationWidget):
    """The dashboard of a scenario's run (see the module): build it with
    ``sc.dashboard()``, ``pop.dashboard()`` or ``sc.run(dashboard=True)``."""

    def __init__(self, scenario: Plan, board: Board) -> None:
        """A dashboard of ``scenario`` showing ``board`` (before a run: its start)."""
        super().__init__(legend=heat_legend())
        self._drawings = Drawings()
        self._definition: Any = None
        self._labels: dict[str, str] = {}
        self._read: Callable[[int], Board] | None = None
        self._at = 0
        self._quiet_until = 0.0
        self._board = board
        self._text: str | None = None  # a display that follows a run: its fixed text
        self._use(scenario)
        self.phase = NOT_RUN
        self.show(board)

    def _use(self, scenario: Plan) -> None:
        """Draw ``scenario``'s process (once per definition)."""
        definition = scenario.process.definition()
        if definition is not self._definition:
            self._definition = definition
            drawn = self._drawings.of(definition)
            self.bpmn = drawn.xml if drawn is not None else ""
            self._labels = {n: str(e.label) for n, e in definition.nodes.items()}
        pools = ", ".join(sorted(scenario.pools)) or "none"
        self.title = f"population of {scenario.process.id} · seed {scenario.seed} · " \
                     f"pools: {pools}"

    # -- what it shows ----------------------------------------------------------------------
    @property
    def board(self) -> Board:
        """The instant shown now."""
        return self._board

    def show(self, board: Board) -> None:
        """Show ``board`` (one instant of a run of this dashboard's scenario)."""
        self._board = board
        status = f"{MEASURE}: {board.tokens} in all, at {board.clock}"
        with self.hold_sync():
            self.clock = board.clock
            self.counters = board.counters
            self.pools = board.pools
            self.marks = heat_marks(board.heat, self._labels, status)
            self.dot = heat_dot(self._definition, board.heat, [self.title])

    # -- following a run --------------------------------------------------------------------
    def follow(self, read: Callable[[int], Board], start: Board,
               scenario: Plan = None) -> Callable[[int], None]:
        """Follow a run: ``read(at)`` is its board at virtual time ``at``, ``start`` its
        first; returns the watch the run calls after each virtual instant it ran."""
        if scenario is not None:
            self._use(scenario)
        self._read, self._at, self._quiet_until = read, start.at, 0.0
        self.phase = RUNNING
        self.show(start)
        poke = Coalescer(self._preview, interval=INTERVAL).poke

        def watch(now: int) -> None:
            self._at = now
            poke()

        return watch

    def _preview(self) -> None:
        """The coalescer's push: show the run at the instant it reached, unless the last
        rebuild's budget says wait."""
        read = self._read
        started = time.monotonic()
        if read is None or started < self._quiet_until:
            return
        try:
            self.show(read(self._at))
        except Exception:  # a preview must never break the run; the end is shown exactly
            pass
        self._quiet_until = started + BUDGET * (time.monotonic() - started)

    def ended(self, final: Board) -> None:
        """The run ended at ``final``: show it and follow nothing more."""
        self._read = None
        self.phase = ENDED
        self.show(final)

    # -- display ----------------------------------------------------------------------------
    def caption(self) -> list[str]:
        """The lines the static drawing puts above the diagram."""
        board = self._board
        counts = " · ".join(f"{k} {v}" for k, v in board.counters.items())
        pools = " · ".join(
            f"{p['pool']}: {p['busy']}/{p['size'] if p['size'] is not None else '∞'} busy, "
            f"{p['waiting']} waiting{'' if p['open'] else ' (closed)'}" for p in board.pools)
        return [f"{self.phase} · {board.clock}", counts, pools,
                f"{MEASURE}: {board.tokens} in all"]

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        """The widget, its text and the heat map as a PNG (what an untrusted notebook
        shows). The display ``run(dashboard=True)`` makes is shown at the run's start and
        replaced by its end; its text is the same in both."""
        dot = self.dot
        for line in self.caption():
            dot = captioned(dot, line)
        bundle = with_png(super()._repr_mimebundle_(**kwargs), dot)
        data = bundle[0] if isinstance(bundle, tuple) else bundle
        if self._text is not None and isinstance(data, dict):
            data["text/plain"] = self._text
        return marked(bundle, frozen=self.phase != RUNNING)


def shown(scenario: Plan, dashboard: Any, start: Board) -> tuple[PopulationDashboard, Any]:
    """The dashboard ``scenario.run(dashboard=...)`` follows and the handle of its display:
    ``True`` shows a new one (showing ``start``) in the cell's output, which the run updates
    to its end when it ends; a ``PopulationDashboard`` is followed as it is (displayed by
    the caller: no handle)."""
    if dashboard is True:
        board = PopulationDashboard(scenario, start)
        # shown at the start, replaced by the end: one text for both (a notebook checker
        # that compares text and ignores the replacement sees the same output)
        board._text = f"PopulationDashboard(title={board.title!r}, shows its run)"
        return board, _display(board)
    if isinstance(dashboard, PopulationDashboard):
        return dashboard, None
    raise TypeError(f"dashboard must be True, False, None or a PopulationDashboard "
                    f"(sc.dashboard()), got {dashboard!r}")


def _display(board: PopulationDashboard) -> Any:
    """Display ``board`` in the running notebook cell; its handle (None outside IPython)."""
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:  # pragma: no cover - ipywidgets brings IPython
        return None
    if get_ipython() is None:
        return None
    return display(board, display_id=True)  # type: ignore[no-untyped-call]
