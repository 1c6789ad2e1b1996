"""`.ci/run` leaves a clean clone clean: what the tests write is ignored by git, and the
committed pictures are written only on request (`.ci/screenshots`)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def ignored(path: str) -> bool:
    done = subprocess.run(["git", "check-ignore", "-q", "--no-index", path], cwd=ROOT,
                          check=False)
    return done.returncode == 0


@pytest.fixture
def browser_module(monkeypatch):
    monkeypatch.delenv("GOBPM_SCREENSHOTS", raising=False)
    import importlib

    import test_browser
    return importlib.reload(test_browser)


def test_the_browser_test_writes_its_pictures_to_an_ignored_folder_only(browser_module,
                                                                        tmp_path):
    """A plain run keeps its pictures under build/ (ignored) and copies none over the
    committed ones."""
    out = browser_module.OUTPUT.relative_to(ROOT)
    assert ignored(f"{out}/order-to-cash.png"), out
    assert not browser_module.KEEP_SHOTS
    shot, committed = tmp_path / "a.png", tmp_path / "docs" / "a.png"
    shot.write_bytes(b"png")
    browser_module.keep(shot, committed)
    assert not committed.exists()


def test_committed_pictures_are_made_by_their_own_command():
    script = (ROOT / ".ci" / "screenshots").read_text(encoding="utf-8")
    assert "GOBPM_SCREENSHOTS=docs" in script and "tests/test_browser.py" in script
    assert "screenshots" not in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_notebook_checkpoints_are_ignored():
    assert ignored("notebooks/.ipynb_checkpoints/01-build-and-step-checkpoint.ipynb")
