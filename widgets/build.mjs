// Bundle the widget front end into two ES modules:
//
//   widget.js  the module anywidget loads for every widget (src/loader.js): a few kilobytes,
//              since it travels and is saved with every widget;
//   shared.js  everything else (src/index.js: the views, WebAssembly Graphviz, bpmn.io's
//              viewer and its style sheets), sent once per kernel by the SharedModule widget
//              and imported once per page (gobpm_nb/ui/shared.py).
//
//   node build.mjs                 -> ../gobpm_nb/static/{widget,shared}.js (committed)
//   node build.mjs --out DIR       -> DIR/{widget,shared}.js (used by tests/test_widget_bundle.py)
//
// Before it bundles, the build checks the contract with Python: src/contract.js (the synced
// traits, table columns, palette, horizon help and vocabulary) must be what
// `python -m gobpm_nb.ui.contract` writes now, and every trait the sources read must be declared
// there; else it stops and says what to run. It runs Python as $PYTHON, else ../.venv/bin/python
// when there is one, else python3 (a Python with gobpm_nb's dependencies).
//
// The output is deterministic: the same sources and the same locked packages give
// byte-identical files. Graphviz's WebAssembly is inlined by @hpcc-js/wasm and bpmn-js needs
// no fonts or images from outside, so nothing is fetched at run time.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import process from "node:process";
import { fileURLToPath, pathToFileURL } from "node:url";

import * as esbuild from "esbuild";

const here = path.dirname(fileURLToPath(import.meta.url));

function parseArgs(argv) {
  let outDir = path.resolve(here, "..", "gobpm_nb", "static");
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    if (arg === "--out" && i + 1 < argv.length) {
      outDir = path.resolve(argv[i + 1]);
      i += 1;
    } else if (arg.startsWith("--out=")) {
      outDir = path.resolve(arg.slice("--out=".length));
    } else {
      console.error(`build.mjs: unknown argument ${JSON.stringify(arg)}; usage: node build.mjs [--out DIR]`);
      process.exit(2);
    }
  }
  return outDir;
}

// The shared module is imported once per page and digest, but a page may still hold several
// copies (two versions of gobpm_nb, or a notebook from before the shared module), each with
// its own d3-transition. Transition ids live on shared DOM nodes (d3-graphviz
// schedules every transition on document.documentElement), and each copy counts ids from 1:
// two copies animating at once collide ("too late; already running") and a graph stops
// updating. Patch newId() to draw from one page-wide counter, started far above the ids any
// unpatched copy of d3-transition from another widget library will reach.
const SHARED_TRANSITION_IDS = {
  name: "shared-d3-transition-ids",
  setup(build) {
    build.onLoad({ filter: /[\\/]d3-transition[\\/]dist[\\/]d3-transition\.mjs$/ }, async (args) => {
      const source = await readFile(args.path, "utf8");
      const before = "function newId() {\n  return ++id;\n}";
      const after = [
        "function newId() {",
        '  const key = Symbol.for("gobpm_nb.d3-transition.id");',
        "  return (globalThis[key] = (globalThis[key] || 2 ** 30) + 1);",
        "}",
      ].join("\n");
      if (!source.includes(before)) {
        throw new Error(`${args.path}: newId() not found; review the shared-id patch in build.mjs`);
      }
      return { contents: source.replace(before, after), loader: "js" };
    });
  },
};

function fail(message) {
  console.error(`build.mjs: ${message}`);
  process.exit(1);
}

// src/contract.js is written by Python: stop when it differs from what Python writes now.
function checkContractIsFresh() {
  const root = path.resolve(here, "..");
  const venv = path.join(root, ".venv", "bin", "python");
  const python = process.env.PYTHON || (existsSync(venv) ? venv : "python3");
  const pythonPath = [root, process.env.PYTHONPATH].filter(Boolean).join(path.delimiter);
  const contract = path.join(here, "src", "contract.js");
  const done = spawnSync(python, ["-m", "gobpm_nb.ui.contract", "--check", contract], {
    cwd: root, encoding: "utf8", env: { ...process.env, PYTHONPATH: pythonPath },
  });
  const hint = "set PYTHON to a Python with gobpm_nb's dependencies, e.g. PYTHON=../.venv/bin/python";
  if (done.error) fail(`cannot run ${python} to check src/contract.js (${done.error.message}): ${hint}`);
  const said = `${done.stderr || ""}${done.stdout || ""}`.trim();
  if (done.status === 1 && said.startsWith("contract check failed")) fail(said);
  if (done.status !== 0) fail(`${python} -m gobpm_nb.ui.contract --check failed:\n${said}\n(${hint})`);
}

// Every trait a source reads, watches or sets by name must be one the contract declares.
const TRAIT_USES = [
  /\b(?:trait|watch)\(\s*[\w.]+\s*,\s*(\[[^\]]*\]|"[^"]*")/g,
  /\b(?:model|shared|child)\.(?:get|set)\(\s*("[^"]*")/g,
];

async function checkTraitUses() {
  const { TRAITS } = await import(pathToFileURL(path.join(here, "src", "contract.js")).href);
  const declared = new Set(Object.values(TRAITS).flat());
  const unknown = [];
  const src = path.join(here, "src");
  for (const file of (await readdir(src)).filter((name) => name.endsWith(".js")).sort()) {
    const text = await readFile(path.join(src, file), "utf8");
    for (const pattern of TRAIT_USES) {
      for (const match of text.matchAll(pattern)) {
        for (const quoted of match[1].match(/"[^"]*"/g) || []) {
          const name = JSON.parse(quoted);
          if (!declared.has(name)) unknown.push(`src/${file}: "${name}"`);
        }
      }
    }
  }
  if (unknown.length > 0) {
    fail(`a source reads a trait no widget model declares (src/contract.js, written from the ` +
      `Python classes):\n  ${unknown.join("\n  ")}`);
  }
}

const outDir = parseArgs(process.argv.slice(2));
checkContractIsFresh();
await checkTraitUses();
const common = {
  absWorkingDir: here,
  bundle: true,
  format: "esm",
  minify: true,
  platform: "browser",
  target: ["es2020"],
  legalComments: "eof",
  sourcemap: false,
  logLevel: "warning",
};

for (const [entry, name, extra] of [
  ["src/loader.js", "widget.js", {}],
  // bpmn.io's style sheets are bundled as text and added to the page by index.js
  ["src/index.js", "shared.js", { plugins: [SHARED_TRANSITION_IDS], loader: { ".css": "text" } }],
]) {
  const outfile = path.join(outDir, name);
  await esbuild.build({ ...common, ...extra, entryPoints: [entry], outfile });
  console.log(`wrote ${outfile}`);
}
