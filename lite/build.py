"""Build the JupyterLite site: the notebooks in any browser, no server, no outside request.

    python lite/build.py [--out build/lite]

Needs the ``lite`` extra (``pip install -e ".[lite]"``), npm, and the registries (npm for the
Pyodide core, PyPI for the wheels); nothing else. Downloads are cached under
``build/lite-cache/`` (git ignores ``build/``), so a rebuild takes seconds. The output folder
is made fresh each time (an incremental ``jupyter lite build`` once dropped the local
``pyodideUrl``); put it on any static host.

What goes in (see /README.md, "In the browser (JupyterLite)"):

- the Pyodide core, from the npm package ``pyodide@<PYODIDE_VERSION>`` (the version the
  kernel is made for), into ``static/pyodide/``; the kernel's ``pyodideUrl`` points there;
- pure-Python wheels from PyPI for Pyodide's Python: micropip, the kernel's own needs
  (IPython, jedi, comm) and gobpm_nb's runtime dependencies, and gobpm_nb's own wheel, built
  from this checkout, beside the core;
- ``pyodide-lock.json`` rewritten to list exactly those wheels, and the kernel's
  ``loadPyodideOptions.packages`` naming them all: Pyodide installs them while the kernel
  starts, so ``import gobpm_nb`` works in the first cell, with no ``%pip install``;
- the notebooks (and the BPMN files they read) as the site's contents.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import subprocess
import sys
import tarfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LITE = ROOT / "lite"
CACHE = ROOT / "build" / "lite-cache"
KERNEL_SETTINGS = "@jupyterlite/pyodide-kernel-extension:kernel"
MICROPIP = "micropip==0.11.1"  # the version Pyodide 314's own lock file names
# What the kernel installs at start (ipykernel and pyodide-kernel come with the kernel
# extension) and gobpm_nb's runtime dependencies (pyproject.toml; lxml has no WebAssembly
# wheel and is not needed there: gobpm_nb.bpmn.xmllib uses the standard library).
REQUIREMENTS = ["ipython", "jedi", "comm", "ipywidgets", "anywidget", "psygnal",
                "typing_extensions", "isodate", "croniter", "simpleeval", "graphviz"]
# Pulled in by the requirements but not wanted in the browser: the classic notebook's widget
# extension (the site has JupyterLab's), and a terminal library Pyodide cannot use (the
# kernel ships its own shim).
DROPPED = {"widgetsnbextension", "pexpect", "ptyprocess"}
# The site's contents, laid out as in the repository: the notebooks, the files they read by
# relative path, and the pages their links reach (README.md, docs/*.md).
CONTENTS = {"notebooks": "notebooks/*.ipynb", "notebooks/data": "notebooks/data/*",
            "tests/data/miwg": "tests/data/miwg/C.3.0.bpmn", ".": "README.md",
            "docs": "docs/*.md", "docs/screenshots": "docs/screenshots/*.png"}


def say(*words: object) -> None:
    print("lite/build.py:", *words, flush=True)


def run(*cmd: str | Path, cwd: Path = ROOT) -> None:
    subprocess.run([str(c) for c in cmd], cwd=cwd, check=True)


def pyodide_core(version: str) -> Path:
    """The Pyodide core from npm (cached), unpacked; its folder."""
    folder = CACHE / f"pyodide-{version}"
    if not (folder / "pyodide.mjs").exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        run("npm", "pack", "--silent", f"pyodide@{version}", cwd=CACHE)
        with tarfile.open(CACHE / f"pyodide-{version}.tgz") as tgz:
            tgz.extractall(CACHE / "npm", filter="data")
        shutil.rmtree(folder, ignore_errors=True)
        (CACHE / "npm" / "package").rename(folder)
    return folder


def pure_wheels(python_version: str) -> list[Path]:
    """Pure-Python wheels from PyPI for Pyodide's Python (cached, one folder per version)."""
    folder = CACHE / f"wheels-py{python_version}"
    stamp = folder / "requirements.txt"
    wanted = "\n".join([MICROPIP, *REQUIREMENTS]) + "\n"
    if not stamp.exists() or stamp.read_text() != wanted:
        shutil.rmtree(folder, ignore_errors=True)
        run(sys.executable, "-m", "pip", "download", "--quiet", "--only-binary=:all:",
            "--python-version", python_version, "--platform", "any", "--implementation", "py",
            "--abi", "none", "--dest", folder, MICROPIP, *REQUIREMENTS)
        stamp.write_text(wanted)
    return [w for w in sorted(folder.glob("*.whl")) if dist_name(w) not in DROPPED]


def own_wheel() -> Path:
    """gobpm_nb's wheel, built from this checkout (always: the code may have changed)."""
    folder = CACHE / "own"
    shutil.rmtree(folder, ignore_errors=True)
    run(sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", folder,
        ROOT)
    (wheel,) = folder.glob("gobpm_nb-*.whl")
    return wheel


def dist_name(wheel: Path) -> str:
    """The normalised distribution name of a wheel file (PEP 503)."""
    return re.sub(r"[-_.]+", "-", wheel.name.split("-")[0]).lower()


def lock_entry(wheel: Path) -> dict[str, object]:
    """A pyodide-lock.json entry for a pure wheel (no dependencies: every wheel is preloaded)."""
    with zipfile.ZipFile(wheel) as z:
        tops = {n.split("/")[0] for n in z.namelist()}
    imports = sorted(t.removesuffix(".py") for t in tops
                     if not t.endswith((".dist-info", ".data", ".pth")) and t != "__pycache__")
    return {"name": dist_name(wheel), "version": wheel.name.split("-")[1],
            "file_name": wheel.name, "install_dir": "site", "package_type": "package",
            "sha256": hashlib.sha256(wheel.read_bytes()).hexdigest(), "imports": imports,
            "depends": [], "unvendored_tests": False}


def stage(stage_dir: Path, core: Path, wheels: list[Path]) -> list[str]:
    """The lite dir jupyter lite build reads: configuration, the runtime and the contents.
    Returns the names of the preloaded packages."""
    shutil.rmtree(stage_dir, ignore_errors=True)
    stage_dir.mkdir(parents=True)
    shutil.copy(LITE / "jupyter_lite_config.json", stage_dir)
    runtime = stage_dir / "static" / "pyodide"
    runtime.mkdir(parents=True)
    for name in ("pyodide.mjs", "pyodide.js", "pyodide.asm.mjs", "pyodide.asm.wasm",
                 "python_stdlib.zip", "package.json"):
        shutil.copy(core / name, runtime)
    lock = json.loads((core / "pyodide-lock.json").read_text())
    lock["packages"] = {}
    for wheel in wheels:
        shutil.copy(wheel, runtime)
        entry = lock_entry(wheel)
        lock["packages"][entry["name"]] = entry
    (runtime / "pyodide-lock.json").write_text(json.dumps(lock, indent=1, sort_keys=True))
    preload = sorted(n for n in lock["packages"] if n != "micropip")
    config = json.loads((LITE / "jupyter-lite.json").read_text())
    kernel = config["jupyter-config-data"]["litePluginSettings"][KERNEL_SETTINGS]
    kernel["loadPyodideOptions"]["packages"] = preload
    (stage_dir / "jupyter-lite.json").write_text(json.dumps(config, indent=2) + "\n")
    for target, pattern in CONTENTS.items():
        (stage_dir / "files" / target).mkdir(parents=True, exist_ok=True)
        for path in sorted(ROOT.glob(pattern)):
            shutil.copy(path, stage_dir / "files" / target)
    return preload


def size(folder: Path) -> tuple[float, int]:
    files = [p for p in folder.rglob("*") if p.is_file()]
    return sum(p.stat().st_size for p in files) / 1e6, len(files)


def build(out: Path) -> Path:
    """Build the site into ``out`` (made fresh); returns it."""
    from jupyterlite_pyodide_kernel.constants import PYODIDE_PYTHON_VERSION, PYODIDE_VERSION

    started = time.monotonic()
    core = pyodide_core(PYODIDE_VERSION)
    wheels = [*pure_wheels(PYODIDE_PYTHON_VERSION), own_wheel()]
    stage_dir = CACHE / "stage"
    preload = stage(stage_dir, core, wheels)
    shutil.rmtree(out, ignore_errors=True)
    run(sys.executable, "-m", "jupyter", "lite", "build", "--lite-dir", stage_dir,
        "--contents", stage_dir / "files", "--output-dir", out.resolve(), cwd=stage_dir)
    megabytes, count = size(out)
    say(f"Pyodide {PYODIDE_VERSION} (Python {PYODIDE_PYTHON_VERSION}); {len(preload)} wheels"
        f" preloaded; site {out}: {megabytes:.1f} MB, {count} files;"
        f" built in {time.monotonic() - started:.0f} s")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "lite",
                        help="the output folder, made fresh (default: build/lite)")
    build(parser.parse_args().out)


if __name__ == "__main__":
    main()
