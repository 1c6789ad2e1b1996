"""The committed front-end bundles are what the sources build to, and need no network: the
small module every widget loads (widget.js) and the shared module it imports (shared.js)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
WIDGETS = ROOT / "widgets"
STATIC = ROOT / "gobpm_nb" / "static"
BUNDLE = STATIC / "widget.js"  # anywidget's _esm, sent with every widget
SHARED = STATIC / "shared.js"  # the views, Graphviz and bpmn.io's viewer, sent once
BUNDLES = (BUNDLE, SHARED)
REBUILD_HINT = "run `npm --prefix widgets run build` and commit gobpm_nb/static/*.js"

# URLs a bundle may contain because they are identifiers, never fetched: XML namespaces
# (createElementNS / setAttributeNS) and the SVG DTD's system identifier in a DOCTYPE string.
HARMLESS_URLS = {
    "http://www.w3.org/1999/xhtml",
    "http://www.w3.org/1999/xlink",
    "http://www.w3.org/2000/svg",
    "http://www.w3.org/2000/xmlns/",
    "http://www.w3.org/XML/1998/namespace",
    "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd",
    # bpmn-moddle's namespaces of BPMN 2.0, its diagram interchange and XML Schema types
    "http://www.omg.org/spec/BPMN/20100524/MODEL",
    "http://www.omg.org/spec/BPMN/20100524/DI",
    "http://www.omg.org/spec/DD/20100524/DC",
    "http://www.omg.org/spec/DD/20100524/DI",
    "http://www.omg.org/spec/BPMN/non-normative/color/1.0",
    "http://bpmn.io/schema/bpmn/biocolor/1.0",
    "http://www.w3.org/1999/XPath",
    "http://www.w3.org/2001/XMLSchema",
    "http://www.w3.org/2001/XMLSchema-instance",
}
# Links a user may follow, never fetched by the page: the bpmn.io watermark (its licence
# requires it) and a URL quoted in one of diagram-js's error messages.
LINKS = {
    "http://bpmn.io",
    "https://bpmn.io",
    "https://github.com/bpmn-io/diagram-js/issues/661",
}
URL = re.compile(r"""https?://[^\s"'`()<>\\]+""")
PROTOCOL_RELATIVE = re.compile(r"""["'`]//[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+[/"'`]""")
CDN_NAMES = re.compile(r"unpkg|jsdelivr|cdnjs|esm\.sh|skypack|jspm\.io|googleapis|cloudflare")


def _run(args: list[str], cwd: Path,
         env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=600, check=False,
                          env=env)


def _bundle_text(bundle: Path = BUNDLE) -> str:
    assert bundle.is_file(), f"missing {bundle.relative_to(ROOT)}: {REBUILD_HINT}"
    return bundle.read_text(encoding="utf-8")


@pytest.mark.slow
def test_committed_bundle_matches_a_fresh_build(tmp_path):
    """Rebuilding from widgets/ gives byte-for-byte the committed widget.js and shared.js."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("Node.js and npm are needed to rebuild the widget bundle")
    if not (WIDGETS / "node_modules" / "esbuild").is_dir():
        done = _run([npm, "ci", "--no-audit", "--no-fund"], WIDGETS)
        assert done.returncode == 0, f"npm ci failed in widgets/:\n{done.stdout}\n{done.stderr}"
    # the build checks src/contract.js with this Python (tests/test_widget_contract.py)
    env = dict(os.environ, PYTHON=sys.executable)
    done = _run([node, "build.mjs", "--out", str(tmp_path)], WIDGETS, env)
    assert done.returncode == 0, f"node widgets/build.mjs failed:\n{done.stdout}\n{done.stderr}"
    for bundle in BUNDLES:
        fresh = (tmp_path / bundle.name).read_bytes()
        committed = bundle.read_bytes()
        assert fresh == committed, (
            f"gobpm_nb/static/{bundle.name} ({len(committed)} bytes) differs from a fresh "
            f"build of widgets/ ({len(fresh)} bytes): {REBUILD_HINT}"
        )


# A static import or export-from, or a dynamic import of a literal specifier (not the word
# "import" inside a string, as bpmn-moddle's schema has it).
STATIC_IMPORT = re.compile(
    r"""(?<![\w$.!"'`-])(?:import(?:\s*[{*"'`]|\s+[\w$]+\s*(?:,|from\b)|\s*\(\s*["'`])"""
    r"""|export\s*\*|export\s*\{[^}]*\}\s*from\b)""")


@pytest.mark.parametrize("bundle", BUNDLES, ids=lambda b: b.name)
def test_bundle_is_one_es_module_with_a_default_export(bundle):
    """Each bundle is a single ES module whose only export is a default object with render,
    and that names no other module to load."""
    text = _bundle_text(bundle)
    assert re.search(r"export\s*\{\s*\w+ as default\s*\};?\s*$", text), "no default export at end"
    imports = STATIC_IMPORT.search(text)
    assert imports is None, f"{bundle.name} imports another module: {imports and imports.group()}"


def test_each_widget_carries_a_few_kilobytes_and_the_page_the_rest():
    """The module sent with every widget is a few kilobytes; the views and heavy parts are in
    the shared module (the loader imports only that, from the code the kernel sends)."""
    loader, shared = _bundle_text(BUNDLE), _bundle_text(SHARED)
    assert len(loader.encode()) < 4_000, len(loader.encode())
    assert loader.count("import(") == 1 and "createObjectURL" in loader
    for part in ("bjs-powered-by", "renderDot", "gobpm-dashboard"):
        assert part in shared and part not in loader, part


@pytest.mark.parametrize("bundle", BUNDLES, ids=lambda b: b.name)
def test_bundle_fetches_nothing_from_the_network(bundle):
    """Every URL in a bundle is an XML namespace, a DTD identifier or a link shown to the user
    (the bpmn.io watermark); no CDN or fetch target."""
    text = _bundle_text(bundle)
    urls = sorted(set(URL.findall(text)))
    unexpected = [url for url in urls if url not in HARMLESS_URLS | LINKS]
    assert not unexpected, f"URLs the widget might fetch at run time: {unexpected}"
    assert not PROTOCOL_RELATIVE.search(text), "protocol-relative URL in the bundle"
    assert not CDN_NAMES.search(text), f"CDN name in the bundle: {CDN_NAMES.search(text)}"


def test_bundle_inlines_graphviz_webassembly():
    """Graphviz's WebAssembly is embedded in the shared module rather than loaded from a file."""
    text = _bundle_text(SHARED)
    wasm_file = re.search(r"""["'`][^"'`\s]*\.wasm["'`?]""", text)
    assert wasm_file is None, f"bundle refers to a .wasm file: {wasm_file and wasm_file.group()}"
    assert len(text) > 500_000, "bundle too small to hold the Graphviz WebAssembly"


def test_bpmn_viewer_keeps_its_watermark():
    """bpmn.io's viewer is bundled with the code that adds its watermark (its licence says the
    watermark must not be removed), and with its style sheets."""
    text = _bundle_text(SHARED)
    assert 'class="bjs-powered-by"' in text and "Powered by bpmn.io" in text
    assert ".djs-overlay-container" in text or "djs-overlay" in text
