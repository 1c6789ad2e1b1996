// Bundle the widget front end into one ES module for anywidget.
//
//   node build.mjs                 -> ../gobpm_nb/static/widget.js (the committed bundle)
//   node build.mjs --out DIR       -> DIR/widget.js (used by tests/test_widget_bundle.py)
//
// The output is deterministic: the same sources and the same locked packages give a
// byte-identical file. Graphviz's WebAssembly is inlined by @hpcc-js/wasm, so the bundle
// needs no network at run time.
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

// anywidget imports the module once per widget, so a page holds several copies of this bundle,
// each with its own d3-transition. Transition ids live on shared DOM nodes (d3-graphviz
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
const outfile = path.join(outDir, "widget.js");

await esbuild.build({
  absWorkingDir: here,
  entryPoints: ["src/index.js"],
  outfile,
  bundle: true,
  format: "esm",
  minify: true,
  platform: "browser",
  target: ["es2020"],
  legalComments: "eof",
  sourcemap: false,
  logLevel: "warning",
  plugins: [SHARED_TRANSITION_IDS],
});

console.log(`wrote ${outfile}`);
