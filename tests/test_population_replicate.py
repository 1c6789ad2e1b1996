"""Replications on Dask: the same answer whatever the number of workers, and an M/M/c
queue's mean waiting time (Erlang C) inside the replications' confidence interval."""

import math

import pytest

import gobpm_nb as bpm
from gobpm_nb.population.replicate import seed_of

distributed = pytest.importorskip("distributed")


def desk():
    p = bpm.Process("desk")
    p.start("s")
    p.user_task("serve")
    p.end("e")
    p.flow("s", "serve", "e")
    return p


def mmc(c, gap, service, horizon="P2D", seed=1):
    return bpm.Scenario(desk(), warmup="PT12H", horizon=horizon, seed=seed,
                        arrivals={"poisson": {"mean": gap}},
                        durations={"serve": {"exponential": {"mean": service}}},
                        pools={"clerks": {"size": c}}, assign={"serve": "clerks"})


def on_cluster(workers, fn):
    with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        return fn(client)


@pytest.mark.slow
def test_a_replication_is_the_same_across_runs_and_worker_counts():
    """Four replications on one worker and on two give byte-identical tables (each
    replication's summary, and the means and intervals), and so does a run again."""
    sc = mmc(2, "PT10M", "PT8M", horizon="P1D")
    one = on_cluster(1, lambda c: sc.replicate(4, client=c))
    two = on_cluster(2, lambda c: sc.replicate(4, client=c))
    again = on_cluster(2, lambda c: sc.replicate(4, client=c))
    assert one.to_csv() == two.to_csv() == again.to_csv()
    runs = one.attrs["runs"]
    assert runs.to_csv() == two.attrs["runs"].to_csv()
    assert list(runs["seed"]) == [seed_of(1, i) for i in range(4)]
    assert runs["cases"].nunique() > 1  # the seeds differ, so do the replications


@pytest.mark.slow
def test_two_scenarios_replicated_at_once_on_one_cluster_keep_their_own_answers():
    """A class shares one cluster: two what-ifs of one seed (one clerk, three clerks)
    replicated at the same time, from two threads, each get their own figures (the ones a
    cluster of their own gives), never the other's."""
    from concurrent.futures import ThreadPoolExecutor

    one, three = mmc(1, "PT10M", "PT8M", horizon="P1D"), mmc(3, "PT10M", "PT8M", horizon="P1D")
    alone = [on_cluster(1, lambda c, sc=sc: sc.replicate(3, client=c)) for sc in (one, three)]

    def both(client):
        with ThreadPoolExecutor(2) as pool:
            jobs = [pool.submit(sc.replicate, 3, client) for sc in (one, three)]
            return [j.result() for j in jobs]

    shared = on_cluster(2, both)
    assert [t.to_csv() for t in shared] == [t.to_csv() for t in alone]
    assert shared[0].loc["waiting_h", "mean"] > shared[1].loc["waiting_h", "mean"]


def test_a_run_is_byte_identical_when_repeated():
    """Two runs of one scenario give the same cases and the same event log, byte for byte."""
    sc = mmc(2, "PT10M", "PT8M", horizon="P1D")
    a, b = sc.run(progress=False), sc.run(progress=False)
    assert a.cases().to_csv() == b.cases().to_csv()
    assert a.event_log().to_csv() == b.event_log().to_csv()


def test_fewer_than_two_or_more_than_a_hundred_thousand_replications_are_refused():
    """Refused before any cluster starts or any seed is drawn (a billion asked for were a
    billion seeds and Dask tasks made first)."""
    sc = mmc(1, "PT10M", "PT8M")
    for n in (1, 0, -5, 2.0, True, "10", [3] * 100):
        with pytest.raises(bpm.ScenarioError, match="^n: .{0,80}replications need a count"):
            sc.replicate(n)
    with pytest.raises(bpm.ScenarioError, match=r"^n: 1,000,000,000 replications: at most "
                                                r"100,000 \(each is a whole run\)$"):
        sc.replicate(10 ** 9)


def erlang_c_wait(c, lam, mu):
    """The mean waiting time in queue of an M/M/c queue (Erlang C)."""
    a = lam / mu
    rho = a / c
    top = a ** c / math.factorial(c) / (1 - rho)
    p_wait = top / (sum(a ** k / math.factorial(k) for k in range(c)) + top)
    return p_wait / (c * mu - lam)


@pytest.mark.slow
def test_mmc_mean_waiting_is_within_the_confidence_interval_of_erlang_c():
    """Two clerks, Poisson arrivals every 10 min on average, exponential 15 min service,
    24/7: ten replications on the default local cluster; Erlang C's mean wait (19.3 min)
    is inside their 95 % interval, and so is the utilisation (0.75)."""
    sc = mmc(2, "PT10M", "PT15M", horizon="P10D", seed=3)
    kpis = sc.replicate(10)
    expected = erlang_c_wait(2, 1 / 10, 1 / 15) / 60  # hours
    row = kpis.loc["waiting_h:serve"]
    assert row["ci_low"] <= expected <= row["ci_high"], (row, expected)
    util = kpis.loc["utilisation:clerks"]
    assert util["ci_low"] <= 0.75 <= util["ci_high"], util
