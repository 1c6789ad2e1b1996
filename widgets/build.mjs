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
// The output is deterministic: the same sources and the same locked packages give
// byte-identical files. Graphviz's WebAssembly is inlined by @hpcc-js/wasm and bpmn-js needs
// no fonts or images from outside, so nothing is fetched at run time.
import { readFile } from "node:fs/promises";
import path from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

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

const outDir = parseArgs(process.argv.slice(2));
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
