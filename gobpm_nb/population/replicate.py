"""Replications on Dask: the same scenario under ``n`` seeds, each derived from (seed,
index) by the draws' primitive, run as independent Dask tasks (a local cluster by
default, or the ``distributed.Client`` given). Each replication is a pure function of its
scenario and seed, gathered in index order: the answer is the same whatever the number
of workers."""

from __future__ import annotations

import hashlib
import json
import math
import os
from typing import TYPE_CHECKING, Any

from ..errors import ScenarioError, shown
from ..kernel import unit

if TYPE_CHECKING:
    import pandas as pd

    from .spec import Plan


#: The most replications one call runs: each is a whole run (a billion asked for were a
#: billion seeds computed and tasks made before any ran)
MOST = 100_000


def seed_of(seed: int, index: int) -> int:
    """The seed of replication ``index`` (a 53-bit number from (seed, index))."""
    return int(unit(seed, "replication", index) * 2 ** 53)


def one(sc: Plan, seed: int) -> dict[str, float]:
    """One replication's summary (what a Dask worker runs)."""
    pop = sc.replace(seed=seed).run(progress=False)
    return {k: float(v) for k, v in pop.summary().items()}


def replicate(sc: Plan, n: int, client: Any = None) -> pd.DataFrame:
    """Means with 95 % confidence intervals (Student t) over ``n`` replications; the
    replications' own summaries are in ``.attrs["runs"]``."""
    import pandas as pd

    if isinstance(n, bool) or not isinstance(n, int) or n < 2:
        raise ScenarioError("n", f"{shown(n)}: replications need a count of at least 2")
    if n > MOST:
        raise ScenarioError("n", f"{n:,} replications: at most {MOST:,} (each is a whole run)")
    seeds = [seed_of(sc.seed, i) for i in range(n)]
    rows = _on_dask(sc, seeds, client)
    runs = pd.DataFrame(rows, index=pd.Index(range(n), name="replication"))
    runs.insert(0, "seed", seeds)
    out = summarise(runs.drop(columns="seed"))
    out.attrs["runs"] = runs
    return out


def summarise(runs: pd.DataFrame) -> pd.DataFrame:
    """Mean, standard deviation and the 95 % Student t interval of each column."""
    import pandas as pd
    from scipy.stats import t

    n = len(runs)
    q = float(t.ppf(0.975, n - 1))
    mean, sd = runs.mean(), runs.std(ddof=1)
    half = q * sd / math.sqrt(n)
    return pd.DataFrame({"mean": mean, "sd": sd, "ci_low": mean - half,
                         "ci_high": mean + half, "n": runs.count()})


def _on_dask(sc: Plan, seeds: list[int], client: Any) -> list[dict[str, float]]:
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise ImportError("replications run on Dask: pip install 'gobpm_nb[population]'"
                          ) from None
    own: Any = None
    if client is None:
        workers = max(1, min(len(seeds), os.cpu_count() or 1))
        cluster: Any = LocalCluster  # untyped
        own = cluster(n_workers=workers, threads_per_worker=1, processes=True,
                      dashboard_address=None)
        connect: Any = Client
        client = connect(own)
    # a task's key names the scenario too: on a cluster others share, a replication of
    # another scenario under the same seed is another task, never this one's result
    doc = [sc.process.definition().signature, sc.lanes, sc.to_dict()]
    which = hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:16]
    try:
        futures = [client.submit(one, sc, s, pure=False, key=f"replication-{which}-{i}-{s}")
                   for i, s in enumerate(seeds)]
        results: list[dict[str, float]] = client.gather(futures)
    finally:
        if own is not None:
            client.close()
            own.close()
    return results
