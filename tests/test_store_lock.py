"""SQLiteStore's one-writer lock where the runtime has no ``flock`` (Pyodide in a browser),
and where it has one (CPython on a POSIX system)."""

from __future__ import annotations

import errno
import fcntl
import os
import subprocess
import sys
from pathlib import Path

import pytest

import gobpm_nb as bpm
from gobpm_nb.persist import stores


def waiting():
    p = bpm.Process("waiting")
    p.start("s")
    p.user_task("approve", assignee="ada")
    p.end("e")
    p.flow("s", "approve", "e")
    return p


def no_flock(monkeypatch, how):
    """Take ``flock`` away as Pyodide does: missing from ``fcntl``, or failing with ENOSYS."""
    if how == "missing":
        monkeypatch.delattr(fcntl, "flock")
    else:
        def flock(fd, op):
            raise OSError(errno.ENOSYS, "Function not implemented")
        monkeypatch.setattr(fcntl, "flock", flock)


@pytest.mark.parametrize("how", ["missing", "ENOSYS"])
def test_without_flock_a_store_opens_writes_and_reads(tmp_path, monkeypatch, how):
    """No flock: the store still opens, its engine writes checkpoints, a recovery reads them
    back; a second store on the open file in this process is refused, as with flock; closing
    frees the file and leaves the process's table of lock files empty."""
    no_flock(monkeypatch, how)
    db = tmp_path / "run.db"
    eng = bpm.Engine(store=bpm.SQLiteStore(db))
    eng.start(waiting(), {"n": 1})
    eng.run()
    assert eng.store.ids() == ["i1"]
    assert list(stores._HELD_HERE.values()) == [os.path.realpath(f"{db}.lock")]
    with pytest.raises(bpm.StoreError, match=r"run\.db.* is open in another store"):
        bpm.SQLiteStore(db)
    (tmp_path / "link").symlink_to(tmp_path, target_is_directory=True)
    with pytest.raises(bpm.StoreError, match="open in another store"):
        bpm.SQLiteStore(tmp_path / "link" / "run.db")  # the same file by another path
    eng.store.close()
    assert stores._HELD_HERE == {}
    again = bpm.Engine.recover(bpm.SQLiteStore(db), processes=[waiting()])
    assert [(i.id, i.data, i.residency) for i in again.instances()] == \
        [("i1", {"n": 1}, "dehydrated")]
    assert [t.node for t in again.tasks()] == ["approve"]
    again.store.close()
    assert stores._HELD_HERE == {}


def test_without_flock_two_files_are_two_locks(tmp_path, monkeypatch):
    """The table holds a file, not the whole store class: two files open side by side."""
    no_flock(monkeypatch, "missing")
    a, b = bpm.SQLiteStore(tmp_path / "a.db"), bpm.SQLiteStore(tmp_path / "b.db")
    assert len(stores._HELD_HERE) == 2
    a.close()
    b.close()
    assert stores._HELD_HERE == {}


CHILD = """
import sys
import gobpm_nb as bpm
try:
    bpm.SQLiteStore(sys.argv[1])
except bpm.StoreError as exc:
    print("refused:", exc)
else:
    print("opened")
"""


def test_with_flock_another_process_is_refused(tmp_path):
    """Where flock exists it is the lock, not the table: a store open here refuses one in
    another process (a table in this process could not), and the file opens there once it
    is closed here."""
    db = tmp_path / "run.db"
    env = dict(os.environ, PYTHONPATH=str(Path(bpm.__file__).parent.parent))

    def child():
        return subprocess.run([sys.executable, "-c", CHILD, str(db)], env=env, text=True,
                              capture_output=True, check=True, timeout=60).stdout

    store = bpm.SQLiteStore(db)
    assert stores._HELD_HERE == {}
    assert child().startswith(f"refused: SQLiteStore {str(db)!r} is open in another store")
    store.close()
    assert child() == "opened\n"
