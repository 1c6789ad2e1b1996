"""Random draws of a scenario: counter-based streams (``kernel.unit``: the n-th draw of a
source is the SHA-256 of (seed, source, n)) and the distributions sampled from them by
inverse transform. One stream per source, so adding a task or a field shifts no other
draw."""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

from ..errors import ScenarioError
from ..kernel.draws import SCALE
from .reading import duration, json_value, mapping, need, number, one_of, only, shown

#: Uniforms are kept inside (0, 1) for inverse transforms that are infinite at the ends.
EDGE = 2.0 ** -53
TOP = 1.0 - EDGE
STANDARD = NormalDist()


class Stream:
    """The draws of one source: ``next()`` is the n-th number in [EDGE, 1 - EDGE], the
    ``kernel.unit`` of (seed, source, n), with the hash of its fixed start computed once."""

    __slots__ = ("seed", "source", "n", "_head")

    def __init__(self, seed: int, source: str):
        self.seed, self.source, self.n = seed, source, 0
        self._head = hashlib.sha256(f"{seed}/{source}/".encode())

    def next(self) -> float:
        self.n = n = self.n + 1
        h = self._head.copy()
        h.update(b"%d" % n)  # str(n).encode(), in one step
        u = int.from_bytes(h.digest()[:8]) * SCALE
        return EDGE if u < EDGE else TOP if u > TOP else u


@dataclass(frozen=True)
class Distribution:
    """A distribution of non-negative numbers (microseconds for durations), sampled by
    inverse transform from one uniform; ``form`` is its JSON form."""

    kind: str
    a: float
    b: float
    bins: tuple[tuple[float, float], ...]
    form: Any

    @property
    def mean(self) -> float:
        if self.kind in ("fixed", "exponential", "normal", "lognormal", "gamma"):
            return self.a
        if self.kind == "uniform":
            return (self.a + self.b) / 2
        low, total, out = 0.0, sum(w for _, w in self.bins), 0.0
        for high, w in self.bins:
            out += (low + high) / 2 * w / total
            low = high
        return out

    def sample(self, u: float) -> float:
        kind, a, b = self.kind, self.a, self.b
        if kind == "exponential":
            return -a * math.log1p(-u)
        if kind == "fixed":
            return a
        if kind == "uniform":
            return a + (b - a) * u
        if kind == "normal":
            return max(0.0, a + b * STANDARD.inv_cdf(u))
        if kind == "lognormal":
            return math.exp(a_log(a, b) + s_log(a, b) * STANDARD.inv_cdf(u)) if b else a
        if kind == "gamma":
            return gamma_inverse(a, b, u)
        return self._empirical(u)

    def _empirical(self, u: float) -> float:
        total = sum(w for _, w in self.bins)
        point, low = u * total, 0.0
        for high, w in self.bins:
            if point < w:
                return low + (high - low) * point / w
            point -= w
            low = high
        return low


def a_log(mean: float, sd: float) -> float:
    """The mean of the logarithm of a lognormal of that mean and standard deviation."""
    return math.log(mean * mean / math.sqrt(mean * mean + sd * sd))


def s_log(mean: float, sd: float) -> float:
    return math.sqrt(math.log(1 + sd * sd / (mean * mean)))


def gamma_inverse(mean: float, sd: float, u: float) -> float:
    """The gamma quantile of ``u`` for that mean and standard deviation."""
    if sd == 0:
        return mean
    from scipy.special import gammaincinv

    shape = mean * mean / (sd * sd)
    return float(gammaincinv(shape, u)) * (sd * sd / mean)


DURATIONS = ("fixed", "exponential", "normal", "lognormal", "gamma", "uniform", "empirical")


def read_duration(value: Any, path: str) -> Distribution:
    """A duration distribution (``docs/scenario.md``), in microseconds."""
    kind, body = one_of(value, path, DURATIONS)
    at = f"{path}.{kind}"
    if kind == "fixed":
        return Distribution(kind, duration(body, at), 0, (), value)
    if kind == "empirical":
        return Distribution(kind, 0, 0, _bins(body, at), value)
    body = mapping(body, at)
    names = ("mean",) if kind == "exponential" else ("low", "high") if kind == "uniform" \
        else ("mean", "sd")
    only(body, at, names)
    a = duration(need(body, names[0], at), f"{at}.{names[0]}")
    b = duration(need(body, names[1], at), f"{at}.{names[1]}") if len(names) == 2 else 0
    _check(kind, a, b, at, names)
    return Distribution(kind, a, b, (), value)


def _check(kind: str, a: float, b: float, at: str, names: tuple[str, ...]) -> None:
    if kind == "uniform" and b < a:
        raise ScenarioError(f"{at}.high", "is shorter than low")
    if kind in ("lognormal", "gamma") and a <= 0:
        raise ScenarioError(f"{at}.mean", "must be longer than zero")


def _bins(body: Any, path: str) -> tuple[tuple[float, float], ...]:
    body = mapping(body, path)
    only(body, path, ("bins",))
    rows = need(body, "bins", path)
    if not isinstance(rows, list) or not rows:
        raise ScenarioError(f"{path}.bins", f"{shown(rows)} is not a list of [upper, weight]")
    out, last = [], -1
    for i, row in enumerate(rows):
        at = f"{path}.bins[{i}]"
        if not isinstance(row, (list, tuple)) or len(row) != 2:
            raise ScenarioError(at, f"{shown(row)} is not a pair [upper edge, weight]")
        high, weight = duration(row[0], f"{at}[0]"), number(row[1], f"{at}[1]", 0)
        if high <= last:
            raise ScenarioError(f"{at}[0]", "upper edges must grow from bin to bin")
        out.append((float(high), weight))
        last = high
    if not sum(w for _, w in out) > 0:
        raise ScenarioError(f"{path}.bins", "the weights add up to 0")
    return tuple(out)


@dataclass(frozen=True)
class Generator:
    """A case data field's generator: a number distribution, a choice or a fixed value."""

    kind: str
    a: float
    b: float
    choices: tuple[tuple[str, float], ...]
    value: Any
    form: Any

    def sample(self, u: float) -> Any:
        kind, a, b = self.kind, self.a, self.b
        if kind == "fixed":
            return self.value
        if kind == "uniform":
            return a + (b - a) * u
        if kind == "integer":
            return int(a + math.floor(u * (b - a + 1)))
        if kind == "normal":
            return a + b * STANDARD.inv_cdf(u)
        if kind == "exponential":
            return -a * math.log1p(-u)
        point = u * sum(w for _, w in self.choices)
        for name, w in self.choices:
            if point < w:
                return name
            point -= w
        return self.choices[-1][0]


FIELDS = ("uniform", "integer", "normal", "exponential", "choice", "fixed")


def read_field(value: Any, path: str) -> Generator:
    """A case data field's generator (``docs/scenario.md``)."""
    kind, body = one_of(value, path, FIELDS)
    at = f"{path}.{kind}"
    if kind == "fixed":
        return Generator(kind, 0, 0, (), json_value(body, at), value)
    body = mapping(body, at)
    if kind == "choice":
        pairs = tuple((k, number(w, f"{at}.{k}", 0)) for k, w in body.items())
        if not sum(w for _, w in pairs) > 0:
            raise ScenarioError(at, "the weights add up to 0")
        return Generator(kind, 0, 0, pairs, None, value)
    names = ("mean",) if kind == "exponential" else ("mean", "sd") if kind == "normal" \
        else ("low", "high")
    only(body, at, names)
    a = number(need(body, names[0], at), f"{at}.{names[0]}")
    b = number(need(body, names[1], at), f"{at}.{names[1]}") if len(names) == 2 else 0.0
    if kind == "integer" and (a != int(a) or b != int(b)):
        raise ScenarioError(at, "low and high must be whole numbers")
    if kind in ("uniform", "integer") and b < a:
        raise ScenarioError(f"{at}.high", "is below low")
    if kind in ("normal", "exponential") and (b if kind == "normal" else a) < 0:
        raise ScenarioError(f"{at}.{names[-1]}", "must be at least 0")
    return Generator(kind, a, b, (), None, value)
