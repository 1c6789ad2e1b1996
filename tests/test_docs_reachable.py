"""The notebooks' links reach their files when JupyterLab is opened as the README says: the
README's first command serves the repository root (the notebooks open in ``notebooks/``), so
a link from a notebook to ``../docs/semantics.md`` stays inside what the server serves."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
LINK = re.compile(r"\]\(([^)\s]+)\)")


def readme_command() -> list[str]:
    """The ``jupyter lab`` part of the README's first command, split like a shell."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    first = text.split("```bash\n", 1)[1].split("\n", 1)[0]
    words = shlex.split(first)
    start = next(i for i, w in enumerate(words) if w.endswith("jupyter"))
    assert words[start + 1] == "lab", first
    return words[start + 2:]


def test_readme_opens_jupyterlab_on_the_repository_root_in_notebooks():
    """No folder is given (the server's root is the clone), and the file browser starts in
    notebooks/."""
    args = readme_command()
    assert [a for a in args if not a.startswith("-")] == [], args
    assert "--FileContentsManager.preferred_dir=notebooks" in args, args


def test_every_relative_link_of_a_notebook_reaches_a_file_under_the_served_root():
    """Each markdown link of a committed notebook that is not a web address or an anchor
    names a file that exists inside the repository (the served root)."""
    checked = 0
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            if cell.cell_type != "markdown":
                continue
            for target in LINK.findall(cell.source):
                if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                    continue
                file = (path.parent / target.split("#", 1)[0]).resolve()
                assert file.is_relative_to(ROOT), (path.name, target)
                assert file.exists(), (path.name, target)
                checked += 1
    assert checked >= 20
