"""Plots of populations (matplotlib), drawn from their DataFrames: the cycle-time
distribution, utilisation and queues over virtual time, and populations side by
side (``Population.plot_*`` and ``compare`` hand these the data)."""

from __future__ import annotations

from typing import Any


def _plt() -> Any:
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError("population plots need matplotlib: pip install "
                          "'gobpm_nb[population]'") from None
    return plt


def cycle_times(cases: Any, sla_hours: float | None, ax: Any = None, bins: int = 30,
                label: str | None = None) -> Any:
    """A histogram of the ended cases' cycle times in hours (``cases``: a
    ``Population.cases()`` frame), with the SLA as a dashed line."""
    import pandas as pd

    plt = _plt()
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3.5))
    hours = cases.loc[cases["ended"], "cycle_time"] / pd.Timedelta(hours=1)
    ax.hist(hours, bins=bins, alpha=0.6, label=label)
    if sla_hours is not None:
        ax.axvline(sla_hours, color="red", linestyle="--", label="SLA")
    ax.set_xlabel("cycle time (hours)")
    ax.set_ylabel("cases")
    ax.set_title("Cycle time")
    return ax


def pools_over_time(util: Any, queue: Any, axes: Any = None) -> Any:
    """Two panels: each pool's utilisation and queue length over virtual time."""
    plt = _plt()
    if axes is None:
        _, axes = plt.subplots(2, 1, figsize=(8, 5), sharex=True)
    for name in util.columns:
        axes[0].step(util.index, util[name], where="post", label=name)
        axes[1].step(queue.index, queue[name], where="post", label=name)
    axes[0].set_ylabel("utilisation")
    axes[0].set_ylim(0, 1.05)
    axes[1].set_ylabel("queue")
    axes[1].set_xlabel("virtual time")
    if len(util.columns):
        axes[0].legend(loc="upper right", fontsize="small")
    else:  # every task went to no pool: nothing queued, nothing to draw
        axes[0].text(0.5, 0.5, "no pools in the scenario", ha="center", va="center",
                     transform=axes[0].transAxes, color="grey")
    for ax in axes:
        ax.tick_params(axis="x", labelrotation=30)
    return axes


def side_by_side(runs: list[dict[str, Any]], labels: list[str]) -> Any:
    """Populations' data (each ``cases``, ``sla_hours``, ``util``, ``queue``): cycle-time
    histograms overlaid on top (the first one's SLA dashed), each one's pools over time in
    its own column below; the figure."""
    plt = _plt()
    fig = plt.figure(figsize=(5.5 * len(runs), 8))
    grid = fig.add_gridspec(3, len(runs), height_ratios=[2, 1, 1])
    top = fig.add_subplot(grid[0, :])
    for i, (data, label) in enumerate(zip(runs, labels, strict=True)):
        cycle_times(data["cases"], data["sla_hours"] if i == 0 else None, top, label=label)
    top.legend()
    for col, (data, label) in enumerate(zip(runs, labels, strict=True)):
        axes = [fig.add_subplot(grid[1, col]), fig.add_subplot(grid[2, col])]
        pools_over_time(data["util"], data["queue"], axes)
        axes[0].set_title(label)
    fig.tight_layout()
    return fig
