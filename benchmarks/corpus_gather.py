"""Gather the BPMN corpus that ``benchmarks/corpus.py`` measures: every ``*.bpmn``,
``*.bpmn2`` and ``*.bpmn20.xml`` file of a few public repositories, copied out of local bare
git mirrors into one folder per source group.

    python benchmarks/corpus_gather.py                    # into build/corpus/
    python benchmarks/corpus_gather.py /tmp/corpus --mirrors /path/to/mirrors

A mirror is a bare clone of the repository at ``<mirrors>/<owner>+<name>/repo`` (or
``<mirrors>/<owner>+<name>`` itself), for example::

    git clone --bare https://github.com/bpmn-miwg/bpmn-miwg-test-suite \\
        mirrors/bpmn-miwg+bpmn-miwg-test-suite/repo

The files are read from each mirror's ``HEAD`` (``git ls-tree`` / ``git cat-file``); a
missing mirror is reported and skipped. The MIWG suite gives one group per tool
(``miwg/<tool>``, the tool's folder name made file-system safe). A file whose bytes an
earlier file of the same group already had (the same test model kept in two modules, say;
for the MIWG suite, in the same tool's folder) is skipped and counted as a duplicate. Each
group's folder is emptied first, so the output depends only on the mirrors' commits. The
folder gets ``SOURCES.md`` (repository, commit, licence, files per group) and
``MANIFEST.tsv`` (each copied file, its repository and its path there).
"""

from __future__ import annotations

import argparse
import hashlib
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "build" / "corpus"
DEFAULT_MIRRORS = Path("/work/.mirror")
EXTENSIONS = (".bpmn", ".bpmn2", ".bpmn20.xml")


@dataclass(frozen=True)
class Source:
    group: str  # the folder under the output; "miwg" is split by tool
    repo: str  # owner/name on GitHub
    note: str  # what the files are


SOURCES = (
    Source("miwg", "bpmn-miwg/bpmn-miwg-test-suite",
           "the OMG BPMN Model Interchange Working Group suite: each tool's exports and "
           "round trips of the reference models"),
    Source("bpmn-js", "bpmn-io/bpmn-js", "bpmn-js test fixtures and spec diagrams"),
    Source("bpmn-moddle", "bpmn-io/bpmn-moddle", "bpmn-moddle test fixtures"),
    Source("spiff", "sartography/SpiffWorkflow", "SpiffWorkflow's test models"),
    Source("camunda7", "camunda/camunda-bpm-examples", "Camunda 7 example projects"),
    Source("camunda8", "camunda/camunda-8-tutorials", "Camunda 8 quick starts and solutions"),
    Source("camunda8", "camunda-community-hub/camunda-8-examples",
           "Camunda 8 community examples"),
    Source("flowable", "flowable/flowable-engine",
           "Flowable engine test resources (and Flowable 5 tests)"),
    Source("activiti", "Activiti/Activiti", "Activiti engine test resources and examples"),
)

# (pattern in the licence text, what to call it), the first match wins
LICENCES = (
    ("Creative Commons Attribution 3.0", "CC BY 3.0"),
    ("GNU LESSER GENERAL PUBLIC LICENSE", "LGPL-3.0"),
    ("Apache License", "Apache-2.0"),
    ("bpmn.io project watermark", "MIT with the bpmn.io watermark clause"),
    ("Permission is hereby granted, free of charge", "MIT"),
)
LICENCE_FILES = ("LICENSE", "LICENSE.txt", "LICENSE.md", "COPYING", "COPYING.txt")


def git(gitdir: Path, *args: str) -> bytes:
    return subprocess.run(["git", f"--git-dir={gitdir}", *args], check=True,
                          capture_output=True).stdout


def mirror_of(mirrors: Path, repo: str) -> Path | None:
    base = mirrors / repo.replace("/", "+")
    for candidate in (base / "repo", base):
        if (candidate / "HEAD").is_file():
            return candidate
    return None


def licence_of(gitdir: Path) -> str:
    """The licence named by the repository's top-level licence file, or a sentence saying
    there is none."""
    top = set(git(gitdir, "ls-tree", "--name-only", "HEAD").decode().splitlines())
    for name in LICENCE_FILES:
        if name in top:
            text = git(gitdir, "show", f"HEAD:{name}").decode("utf-8", "replace")
            found = next((what for pattern, what in LICENCES if pattern in text), None)
            return f"{found} ({name})" if found else f"see {name}"
    return "no licence file at the top of the repository"


def safe(name: str) -> str:
    """A folder name without spaces or punctuation a shell would trip on."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-") or "_"


def is_bpmn(path: str) -> bool:
    return path.lower().endswith(EXTENSIONS)


def blobs(gitdir: Path) -> list[tuple[str, str]]:
    """(path, blob id) of every BPMN file at HEAD, sorted by path."""
    out = git(gitdir, "ls-tree", "-r", "-z", "HEAD").decode("utf-8").split("\0")
    found = []
    for entry in out:
        if not entry:
            continue
        meta, path = entry.split("\t", 1)
        mode, kind, blob = meta.split()
        if kind == "blob" and mode != "120000" and is_bpmn(path):
            found.append((path, blob))
    return sorted(found)


def target(source: Source, path: str) -> Path:
    """Where a file goes under the output: its group, then its path in the repository (the
    MIWG suite: miwg/<tool>/<file>; two repositories in one group: each under its name)."""
    if source.group == "miwg":
        tool, _, rest = path.partition("/")
        return Path("miwg") / safe(tool) / rest
    shared = sum(1 for s in SOURCES if s.group == source.group) > 1
    base = Path(source.group) / (source.repo.split("/")[1] if shared else "")
    return base / path


def gather(out: Path, mirrors: Path, keep_duplicates: bool) -> int:
    out.mkdir(parents=True, exist_ok=True)
    for group in sorted({s.group for s in SOURCES}):
        shutil.rmtree(out / group, ignore_errors=True)
    seen: set[tuple[str, str]] = set()  # (group folder, sha256 of the bytes) copied
    rows, manifest, missing = [], [], []
    for source in SOURCES:
        gitdir = mirror_of(mirrors, source.repo)
        if gitdir is None:
            print(f"missing mirror: {source.repo} (looked in {mirrors}); skipped",
                  file=sys.stderr)
            missing.append(source.repo)
            continue
        commit = git(gitdir, "rev-parse", "HEAD").decode().strip()
        copied = duplicates = 0
        for path, blob in blobs(gitdir):
            data = git(gitdir, "cat-file", "blob", blob)
            place = target(source, path)
            key = ("/".join(place.parts[:2 if source.group == "miwg" else 1]),
                   hashlib.sha256(data).hexdigest())
            if key in seen and not keep_duplicates:
                duplicates += 1
                continue
            seen.add(key)
            dest = out / place
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(data)
            manifest.append(f"{place.as_posix()}\t{source.repo}\t{commit[:12]}\t{path}")
            copied += 1
        rows.append((source, commit, licence_of(gitdir), copied, duplicates))
        print(f"{source.repo:45} {commit[:12]}  {copied:5} files  ({duplicates} duplicates "
              f"skipped) -> {source.group}/")
    write_sources(out, rows, missing)
    (out / "MANIFEST.tsv").write_text("file\trepository\tcommit\tpath\n"
                                      + "\n".join(manifest) + "\n", encoding="utf-8")
    total = sum(r[3] for r in rows)
    print(f"total {total} files in {out}")
    return 1 if missing else 0


def write_sources(out: Path, rows: list, missing: list[str]) -> None:
    lines = ["# BPMN corpus: sources", "",
             "Gathered by `python benchmarks/corpus_gather.py` from each repository's HEAD. "
             "A file whose bytes an earlier file of its group (for the MIWG suite, of its "
             "tool) already had is a duplicate, not copied.", "",
             "| group | repository | commit | licence | files | duplicates | what |",
             "|---|---|---|---|---:|---:|---|"]
    for source, commit, licence, copied, duplicates in rows:
        lines.append(f"| {source.group} | {source.repo} | {commit} | {licence} | {copied} "
                     f"| {duplicates} | {source.note} |")
    lines.append(f"| | **total** | | | {sum(r[3] for r in rows)} | "
                 f"{sum(r[4] for r in rows)} | |")
    if missing:
        lines += ["", "Missing mirrors (skipped): " + ", ".join(missing)]
    (out / "SOURCES.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", type=Path, default=DEFAULT_OUT,
                        help="the folder to fill (default build/corpus/)")
    parser.add_argument("--mirrors", type=Path, default=DEFAULT_MIRRORS,
                        help=f"where the bare mirrors are (default {DEFAULT_MIRRORS})")
    parser.add_argument("--keep-duplicates", action="store_true",
                        help="copy a file even when an earlier one had the same bytes")
    args = parser.parse_args()
    return gather(args.out, args.mirrors, args.keep_duplicates)


if __name__ == "__main__":
    sys.exit(main())
