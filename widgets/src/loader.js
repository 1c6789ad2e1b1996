// The ES module anywidget loads for every gobpm_nb widget (gobpm_nb/static/widget.js). It is
// sent — and saved in a notebook with widget state — once per widget, so it stays a few
// kilobytes and imports nothing.
//
// It draws the widget with the shared module (gobpm_nb/static/shared.js: the views,
// WebAssembly Graphviz, bpmn.io's viewer), which the kernel sends once, gzip-compressed, in
// the SharedModule widget that this widget's `_shared` trait names. The first widget that
// needs it unpacks and imports it; the module is kept on globalThis under its digest
// (`_shared_digest`), so a second widget, two widgets of one cell, a re-run cell and the
// widgets of a restarted kernel all reuse the same copy. After a page reload the widget
// state saved with the notebook holds the SharedModule too; where it is missing the widget
// says so in words.
const MODULES = Symbol.for("gobpm_nb.shared-modules");
const REF = "IPY_MODEL_";

function modules() {
  if (!(globalThis[MODULES] instanceof Map)) globalThis[MODULES] = new Map();
  return globalThis[MODULES];
}

function bytesOf(value) {
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  return null;
}

async function unpack(bytes) {
  if (typeof DecompressionStream !== "function") {
    throw new Error("this browser cannot unpack it (no DecompressionStream)");
  }
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Response(stream).text();
}

async function importShared(model) {
  const ref = model.get("_shared");
  if (typeof ref !== "string" || !ref.startsWith(REF)) throw new Error("the widget names no shared module");
  let shared = null;
  try {
    shared = await model.widget_manager.get_model(ref.slice(REF.length));
  } catch {
    shared = null;
  }
  if (!shared) throw new Error("its shared module is not on this page");
  const bytes = bytesOf(shared.get("code"));
  if (!bytes || bytes.length === 0) throw new Error("its shared module came without its code");
  const url = URL.createObjectURL(new Blob([await unpack(bytes)], { type: "text/javascript" }));
  try {
    return await import(url);
  } finally {
    URL.revokeObjectURL(url);
  }
}

/** The shared module for this widget: imported once per page and digest. */
function sharedModule(model) {
  const digest = model.get("_shared_digest");
  if (typeof digest !== "string" || digest === "") return importShared(model);
  const cache = modules();
  if (!cache.has(digest)) {
    const loading = importShared(model);
    cache.set(digest, loading);
    loading.catch(() => {
      if (cache.get(digest) === loading) cache.delete(digest); // the next widget tries again
    });
  }
  return cache.get(digest);
}

async function render({ model, el, signal }) {
  const note = document.createElement("div");
  note.className = "gobpm-loading";
  note.textContent = "drawing the gobpm_nb view…";
  note.style.cssText = "font: italic 13px system-ui, sans-serif; color: #59636e; padding: 6px 0;";
  el.replaceChildren(note);
  let shared;
  try {
    shared = await sharedModule(model);
  } catch (error) {
    const reason = (error && error.message) || String(error);
    note.textContent = `This gobpm_nb view cannot be drawn: ${reason}. Run the cell again with a running kernel.`;
    note.setAttribute("role", "alert");
    note.dataset.role = "load-error";
    note.style.cssText = "font: 13px system-ui, sans-serif; color: #cf222e; padding: 6px 0;";
    return () => el.replaceChildren();
  }
  if (signal && signal.aborted) return undefined;
  return shared.default.render({ model, el });
}

export default { render };
