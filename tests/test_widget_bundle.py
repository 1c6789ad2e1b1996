"""The committed front-end bundle is what the sources build to, and needs no network."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
WIDGETS = ROOT / "widgets"
BUNDLE = ROOT / "gobpm_nb" / "static" / "widget.js"
REBUILD_HINT = "run `npm --prefix widgets run build` and commit gobpm_nb/static/widget.js"

# URLs a bundle may contain because they are identifiers, never fetched: XML namespaces
# (createElementNS / setAttributeNS) and the SVG DTD's system identifier in a DOCTYPE string.
HARMLESS_URLS = {
    "http://www.w3.org/1999/xhtml",
    "http://www.w3.org/1999/xlink",
    "http://www.w3.org/2000/svg",
    "http://www.w3.org/2000/xmlns/",
    "http://www.w3.org/XML/1998/namespace",
    "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd",
}
URL = re.compile(r"""https?://[^\s"'`()<>\\]+""")
PROTOCOL_RELATIVE = re.compile(r"""["'`]//[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+[/"'`]""")
CDN_NAMES = re.compile(r"unpkg|jsdelivr|cdnjs|esm\.sh|skypack|jspm\.io|googleapis|cloudflare")


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=600, check=False)


def _bundle_text() -> str:
    assert BUNDLE.is_file(), f"missing {BUNDLE.relative_to(ROOT)}: {REBUILD_HINT}"
    return BUNDLE.read_text(encoding="utf-8")


def test_committed_bundle_matches_a_fresh_build(tmp_path):
    """Rebuilding the bundle from widgets/ gives byte-for-byte the committed widget.js."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("Node.js and npm are needed to rebuild the widget bundle")
    if not (WIDGETS / "node_modules" / "esbuild").is_dir():
        done = _run([npm, "ci", "--no-audit", "--no-fund"], WIDGETS)
        assert done.returncode == 0, f"npm ci failed in widgets/:\n{done.stdout}\n{done.stderr}"
    done = _run([node, "build.mjs", "--out", str(tmp_path)], WIDGETS)
    assert done.returncode == 0, f"node widgets/build.mjs failed:\n{done.stdout}\n{done.stderr}"
    fresh = (tmp_path / "widget.js").read_bytes()
    committed = BUNDLE.read_bytes()
    assert fresh == committed, (
        f"gobpm_nb/static/widget.js ({len(committed)} bytes) differs from a fresh build of "
        f"widgets/ ({len(fresh)} bytes): {REBUILD_HINT}"
    )


def test_bundle_is_one_es_module_with_a_default_export():
    """The bundle is a single ES module whose only export is the anywidget default object."""
    text = _bundle_text()
    assert re.search(r"export\s*\{\s*\w+ as default\s*\};?\s*$", text), "no default export at end"
    imports = re.search(r"""(?<![\w$.!-])import(?:\s*[{*]|\s+[\w$]|\s*\(\s*["'`])""", text)
    assert imports is None, f"the bundle imports another module: {imports and imports.group()}"


def test_bundle_fetches_nothing_from_the_network():
    """Every URL in the bundle is an XML namespace or DTD identifier; no CDN or fetch target."""
    text = _bundle_text()
    urls = sorted(set(URL.findall(text)))
    unexpected = [url for url in urls if url not in HARMLESS_URLS]
    assert not unexpected, f"URLs the widget might fetch at run time: {unexpected}"
    assert not PROTOCOL_RELATIVE.search(text), "protocol-relative URL in the bundle"
    assert not CDN_NAMES.search(text), f"CDN name in the bundle: {CDN_NAMES.search(text)}"


def test_bundle_inlines_graphviz_webassembly():
    """Graphviz's WebAssembly is embedded in the bundle rather than loaded from a file."""
    text = _bundle_text()
    wasm_file = re.search(r"""["'`][^"'`\s]*\.wasm["'`?]""", text)
    assert wasm_file is None, f"bundle refers to a .wasm file: {wasm_file and wasm_file.group()}"
    assert len(text) > 500_000, "bundle too small to hold the Graphviz WebAssembly"
