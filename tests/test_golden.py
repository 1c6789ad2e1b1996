"""The golden fact log: the engine does exactly what it did when the log was checked in."""

from pathlib import Path

from golden import GOLDEN, lines, play


def test_the_golden_scenario_emits_the_checked_in_fact_log_byte_for_byte():
    """Every fact of the golden scenario, in order, equals the checked-in log (regenerate it
    with `python tests/scenarios/golden.py --write` only for a change meant to change facts)."""
    expected = Path(GOLDEN).read_text(encoding="utf-8").splitlines()
    got = lines(play())
    first = next((n for n, (a, b) in enumerate(zip(expected, got, strict=False)) if a != b),
                 None)
    assert first is None and len(got) == len(expected), (
        f"fact {first} differs:\n  expected {expected[first] if first is not None else ''}\n"
        f"  got      {got[first] if first is not None else ''}\n"
        f"({len(got)} facts, {len(expected)} expected)")
