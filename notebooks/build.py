"""Build the teaching notebooks from their editable sources, execute them, write the .ipynb.

The source of truth for ``notebooks/NN-name.ipynb`` is ``notebooks/src/NN-name.py``, a plain
Python file in the "percent" cell format (the one Jupytext, VS Code and Spyder read):

    # %% [markdown]
    # # A title
    # Prose, one ``# `` prefix per line.

    # %%
    print("a code cell")

An IPython magic is written commented out, as Jupytext writes it: ``# %%writefile x.py`` or
``# %matplotlib inline`` in a code cell becomes ``%%writefile x.py`` / ``%matplotlib inline``.

This script turns each source into a notebook with ``nbformat``, executes it top to bottom in a
fresh ``python3`` kernel with ``nbclient`` (widget state is not stored, timings are not
recorded) and writes the executed notebook. Everything that would differ between two builds is
fixed here, so building twice gives byte-identical files:

- cell ids are derived from the notebook name and the cell's position;
- consecutive stream outputs of one stream are merged (where the kernel cut them is timing);
- no execution timestamps are written (``record_timing=False``);
- each widget view's ``model_id`` (a random uuid made by ipywidgets) is replaced by a
  name derived from the notebook and the output's position. No widget state is stored, so the
  id referred to nothing outside the kernel that made it anyway; nbval never compares it.

Usage: ``python notebooks/build.py`` (all) or ``python notebooks/build.py 03 08`` (by number).
Prints each notebook's execution time and size; fails if a cell raises, if a notebook takes
longer than ``LIMIT_SECONDS`` or is bigger than ``LIMIT_BYTES``.
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parent
SOURCES = HERE / "src"
LIMIT_SECONDS = 30.0
LIMIT_BYTES = 300_000
MARKER = re.compile(r"# %%( |$)")
MAGIC = re.compile(r"# %{1,2}[A-Za-z]")
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}


def parse(text: str) -> list[tuple[str, str]]:
    """Split a percent-format source into ``(kind, source)`` cells, kind ``markdown``/``code``."""
    cells: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if MARKER.match(line):
            kind = "markdown" if "[markdown]" in line else "code"
            cells.append((kind, []))
        elif cells:
            if cells[-1][0] == "code" and MAGIC.match(line):
                line = line[2:]  # "# %%writefile x" -> "%%writefile x", as Jupytext does
            cells[-1][1].append(line)
        elif line.strip() and not line.startswith("#"):
            raise ValueError(f"text before the first cell marker: {line!r}")
    out = []
    for kind, lines in cells:
        if kind == "markdown":
            lines = [_unmark(line) for line in lines]
        body = "\n".join(lines).strip("\n")
        if body.strip():
            out.append((kind, body))
    return out


def _unmark(line: str) -> str:
    if line in ("#", ""):
        return ""
    if not line.startswith("# "):
        raise ValueError(f"a markdown line must start with '# ': {line!r}")
    return line[2:]


def assemble(source: Path) -> nbformat.NotebookNode:
    """The notebook of one source, not yet executed."""
    nb = new_notebook(metadata={"kernelspec": dict(KERNELSPEC),
                                "language_info": {"name": "python"}})
    stem = source.stem
    for n, (kind, body) in enumerate(parse(source.read_text(encoding="utf-8"))):
        cell = new_markdown_cell(body) if kind == "markdown" else new_code_cell(body)
        cell["id"] = f"{stem[:2]}-{n:03d}"
        nb.cells.append(cell)
    return nb


def execute(nb: nbformat.NotebookNode) -> float:
    """Run every cell in a fresh kernel, in the notebooks folder; return the wall seconds."""
    client = NotebookClient(nb, timeout=120, kernel_name="python3", store_widget_state=False,
                            record_timing=False, resources={"metadata": {"path": str(HERE)}})
    t0 = time.perf_counter()
    client.execute()
    return time.perf_counter() - t0


def settle(nb: nbformat.NotebookNode, stem: str) -> None:
    """Replace what differs from one execution to the next (see the module docstring)."""
    views = 0
    for cell in nb.cells:
        if "outputs" in cell:
            cell["outputs"] = merge_streams(cell["outputs"])
        for output in cell.get("outputs", []):
            view = output.get("data", {}).get(WIDGET_VIEW)
            if view is not None:
                views += 1
                view["model_id"] = f"{stem[:2]}-widget-{views:02d}"
    nb.metadata.pop("widgets", None)


def merge_streams(outputs: list) -> list:
    """One output per run of stdout (or stderr) text: how the kernel cut a stream into
    messages depends on when it flushed, which is timing, not content."""
    merged: list = []
    for output in outputs:
        last = merged[-1] if merged else None
        if output.get("output_type") == "stream" and last is not None and \
                last.get("output_type") == "stream" and last["name"] == output["name"]:
            last["text"] += output["text"]
        else:
            merged.append(output)
    return merged


def build(source: Path) -> tuple[Path, float, int]:
    nb = assemble(source)
    seconds = execute(nb)
    settle(nb, source.stem)
    nbformat.validate(nb)
    target = HERE / f"{source.stem}.ipynb"
    text = nbformat.writes(nb) + "\n"
    target.write_text(text, encoding="utf-8")
    return target, seconds, len(text.encode("utf-8"))


def main(argv: list[str]) -> int:
    sources = sorted(SOURCES.glob("[0-9][0-9]-*.py"))
    if argv:
        sources = [s for s in sources if s.name[:2] in argv]
        if not sources:
            print(f"no source matches {argv}", file=sys.stderr)
            return 2
    problems = []
    for source in sources:
        target, seconds, size = build(source)
        print(f"{target.name:32} {seconds:6.1f} s {size / 1000:8.1f} kB", flush=True)
        if seconds > LIMIT_SECONDS:
            problems.append(f"{target.name} took {seconds:.1f} s (limit {LIMIT_SECONDS:.0f} s)")
        if size > LIMIT_BYTES:
            problems.append(f"{target.name} is {size} bytes (limit {LIMIT_BYTES})")
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
