// A BPMN diagram drawn by bpmn.io's NavigatedViewer (pan with the mouse; zoom with the
// buttons, or the wheel once the diagram was clicked), with the engine's state on its shapes.
//
// The marks come from Python (gobpm_nb/render/marks.py) as plain data, element by element;
// this file only draws them: canvas markers (CSS classes on the shape), one overlay of
// badges per element and a <title> tooltip on the shape. Only the elements whose marks
// changed are redrawn. Every text goes through textContent or an attribute value.
//
// The bpmn.io watermark (bottom right of the canvas) is part of the viewer's licence: it is
// never moved, hidden or covered — nothing here is placed over that corner, the fitted view
// keeps a margin below the diagram, and the badges lie under it (it has z-index 100).
import NavigatedViewer from "bpmn-js/lib/NavigatedViewer";

import { h } from "./dom.js";

const SVG_NS = "http://www.w3.org/2000/svg";
const OVERLAY_TYPE = "gobpm";
const MARKER = /^gobpm-[a-z-]+$/;
const COLOUR = /^#[0-9a-fA-F]{3,8}$/;
const COLOUR_NAMES = ["path", "path-fill", "token", "held", "fork", "released"];
// Screen pixels kept free around the fitted diagram: badges sit above shapes, the
// watermark in the bottom-right corner. Below the diagram only a thin margin is kept when
// the fitted diagram ends left of the watermark's corner (WATERMARK_ZONE px from the right
// edge): a wide, short canvas then shows its diagram larger.
const MARGIN = { top: 36, right: 24, bottom: 40, left: 24 };
const THIN_BOTTOM = 14;
const WATERMARK_ZONE = 90;
const MIN_HEIGHT = 200;
// Badges never shrink below this scale when the diagram is zoomed out to fit (11 px text
// stays at least about 9 px); zoomed in they grow with it.
const BADGE_MIN_SCALE = 0.8;
// Screen pixels (at scale 1) between two rows of boundary badges under one host.
const BADGE_ROW = 18;

/** The marks of one element, with a key that changes when anything drawn changes. */
function entriesOf(marks) {
  const wanted = new Map();
  const elements = marks && Array.isArray(marks.elements) ? marks.elements : [];
  for (const entry of elements) {
    if (!entry || typeof entry.id !== "string") continue;
    wanted.set(entry.id, {
      classes: (Array.isArray(entry.classes) ? entry.classes : []).filter((c) => MARKER.test(c)),
      badges: Array.isArray(entry.badges) ? entry.badges.filter((b) => b && typeof b === "object") : [],
      tip: typeof entry.tip === "string" ? entry.tip : "",
      key: JSON.stringify(entry),
    });
  }
  const flows = marks && Array.isArray(marks.flows) ? marks.flows : [];
  for (const id of flows) {
    if (typeof id === "string" && !wanted.has(id)) {
      wanted.set(id, { classes: ["gobpm-taken"], badges: [], tip: "", key: "taken" });
    }
  }
  return wanted;
}

function badge(data) {
  const kind = String(data.kind || "");
  const node = h("span", { class: `gobpm-badge gobpm-badge-${kind.replace(/[^a-z]/g, "")}`, text: data.text });
  node.dataset.kind = kind;
  if (data.state) node.dataset.state = String(data.state);
  if (data.hold) node.dataset.hold = String(data.hold);
  if (typeof data.tip === "string") node.title = data.tip;
  if (typeof data.colour === "string" && COLOUR.test(data.colour)) node.style.borderColor = data.colour;
  if (kind === "token") {
    if (typeof data.fill === "string" && COLOUR.test(data.fill)) node.style.backgroundColor = data.fill;
    if (typeof data.ink === "string" && COLOUR.test(data.ink)) node.style.color = data.ink;
    if (data.dashed) node.classList.add("gobpm-badge-dashed");
  } else if (typeof data.colour === "string" && COLOUR.test(data.colour)) {
    node.style.color = data.colour;
  }
  return node;
}

export class BpmnPane {
  /**
   * onFail(message, xml): the diagram could not be drawn (the caller shows a fallback).
   * maxHeight: the tallest the canvas grows (px) to show a tall diagram unscaled.
   * header: false when the caller places this.status and this.toolbar itself.
   */
  constructor({ role, onFail = () => {}, maxHeight = 560, header = true }) {
    this.onFail = onFail;
    this.maxHeight = Math.max(MIN_HEIGHT, maxHeight);
    this.status = h("div", { class: "gobpm-bpmn-status", "data-role": `${role}-status` });
    const zoom = (factor) => () => this.zoomBy(factor);
    this.toolbar = h("div", { class: "gobpm-bpmn-tools" }, [
      h("button", { type: "button", class: "gobpm-button gobpm-bpmn-fit", "data-action": "fit", title: "fit the diagram", onclick: () => this.fit(true) }, ["Fit"]),
      h("button", { type: "button", class: "gobpm-button", "data-action": "zoom-in", title: "zoom in", "aria-label": "zoom in", onclick: zoom(1.25) }, ["+"]),
      h("button", { type: "button", class: "gobpm-button", "data-action": "zoom-out", title: "zoom out", "aria-label": "zoom out", onclick: zoom(0.8) }, ["−"]),
    ]);
    this.canvas = h("div", { class: "gobpm-bpmn-canvas", "data-role": `${role}-canvas` });
    this.message = h("div", { class: "gobpm-graph-message", "data-role": `${role}-message`, hidden: true });
    this.el = h("div", { class: "gobpm-bpmn", "data-role": role }, [
      header ? h("div", { class: "gobpm-bpmn-header" }, [this.status, this.toolbar]) : null,
      this.canvas,
      this.message,
    ]);
    this.viewer = null;
    this.xml = null; // the document on screen (or being imported)
    this.pendingXml = null;
    this.marks = {};
    this.shown = new Map(); // element id -> entry drawn
    this.importing = false;
    this.ready = false;
    this.touched = false; // the user panned or zoomed: a resize keeps their view
    this.destroyed = false;
    this.resize = new ResizeObserver(() => this.resized());
    this.resize.observe(this.canvas);
    this.canvas.addEventListener("pointerdown", () => {
      this.touched = true;
      this.wheel(true); // clicked into the diagram: the wheel zooms it until the pointer leaves
    });
    this.canvas.addEventListener("pointerleave", () => this.wheel(false));
  }

  /** Show document xml with marks; a new document is imported, the same one only re-marked. */
  update(xml, marks) {
    this.marks = marks && typeof marks === "object" ? marks : {};
    if (xml !== this.xml) {
      this.pendingXml = xml;
      this.pump();
    } else if (this.ready) {
      this.applyMarks();
    }
  }

  async pump() {
    if (this.importing || this.destroyed || this.pendingXml === null) return;
    const xml = this.pendingXml;
    this.pendingXml = null;
    this.importing = true;
    this.ready = false;
    this.xml = xml;
    this.shown.clear();
    try {
      if (this.viewer === null) {
        this.viewer = new NavigatedViewer({ container: this.canvas, zoomScroll: { enabled: false } });
      }
      await this.viewer.importXML(xml);
      if (this.destroyed) return;
      this.ready = true;
      this.touched = false;
      this.message.hidden = true;
      this.fit(false);
      this.applyMarks();
    } catch (error) {
      if (this.destroyed) return;
      const text = (error && error.message) || String(error);
      this.message.textContent = `bpmn.io could not draw this diagram: ${text}`;
      this.message.hidden = false;
      this.onFail(text, xml);
    } finally {
      this.importing = false;
    }
    if (this.pendingXml !== null) this.pump();
  }

  wheel(enabled) {
    if (this.viewer === null) return;
    try {
      this.viewer.get("zoomScroll").toggle(enabled);
    } catch {
      // no zoomScroll module: nothing to toggle
    }
  }

  zoomBy(factor) {
    if (!this.ready) return;
    const canvas = this.viewer.get("canvas");
    this.touched = true;
    canvas.zoom(Math.min(4, Math.max(0.2, canvas.zoom() * factor)), "auto");
  }

  /** Size the canvas to the diagram's shape, then fit it with room for badges and watermark. */
  fit(always) {
    if (!this.ready || (this.touched && !always)) return;
    const canvas = this.viewer.get("canvas");
    const width = this.canvas.clientWidth;
    if (width === 0) return; // not laid out yet: the ResizeObserver calls again
    const inner = canvas.viewbox().inner;
    if (!inner || !(inner.width > 0) || !(inner.height > 0)) return;
    const availWidth = width - MARGIN.left - MARGIN.right;
    const wanted = inner.height * Math.min(1, availWidth / inner.width) + MARGIN.top + MARGIN.bottom;
    const height = Math.round(Math.min(this.maxHeight, Math.max(MIN_HEIGHT, wanted)));
    if (Math.abs(this.canvas.clientHeight - height) > 1) {
      this.canvas.style.height = `${height}px`;
      canvas.resized();
    }
    const layout = (bottom) => {
      const scale = Math.min(1, availWidth / inner.width, (height - MARGIN.top - bottom) / inner.height);
      return { scale, padX: (availWidth - inner.width * scale) / 2 };
    };
    // a thin bottom margin where the diagram stays clear of the watermark's corner
    let { scale, padX } = layout(THIN_BOTTOM);
    if (width - (MARGIN.left + padX + inner.width * scale) < WATERMARK_ZONE) ({ scale, padX } = layout(MARGIN.bottom));
    canvas.viewbox({
      x: inner.x - (MARGIN.left + padX) / scale,
      y: inner.y - MARGIN.top / scale,
      width: width / scale,
      height: height / scale,
    });
    if (always) this.touched = false;
  }

  resized() {
    if (!this.ready || this.canvas.clientWidth === 0) return;
    this.viewer.get("canvas").resized();
    this.fit(false);
  }

  applyMarks() {
    if (!this.ready) return;
    const marks = this.marks;
    const wanted = entriesOf(marks);
    this.place(wanted);
    for (const [id, shown] of this.shown) {
      const next = wanted.get(id);
      if (next && next.key === shown.key) continue;
      this.clear(id, shown);
      this.shown.delete(id);
    }
    for (const [id, entry] of wanted) {
      if (!this.shown.has(id) && this.draw(id, entry)) this.shown.set(id, entry);
    }
    this.status.textContent = typeof marks.status === "string" ? marks.status : "";
    this.status.hidden = !this.status.textContent;
    this.el.dataset.residency = typeof marks.residency === "string" ? marks.residency : "";
    this.status.dataset.residency = this.el.dataset.residency;
    const colours = marks.colours && typeof marks.colours === "object" ? marks.colours : {};
    for (const name of COLOUR_NAMES) {
      const value = colours[name];
      if (typeof value === "string" && COLOUR.test(value)) this.el.style.setProperty(`--gobpm-${name}`, value);
    }
  }

  /** Draw one element's marks; false when the diagram has no such element. */
  draw(id, entry) {
    const registry = this.viewer.get("elementRegistry");
    const element = registry.get(id);
    if (!element) return false;
    const canvas = this.viewer.get("canvas");
    for (const cls of entry.classes) canvas.addMarker(element, cls);
    if (entry.tip) {
      const gfx = registry.getGraphics(element);
      if (gfx) {
        const title = document.createElementNS(SVG_NS, "title");
        title.setAttribute("class", "gobpm-tip");
        title.textContent = entry.tip;
        gfx.prepend(title);
      }
    }
    if (entry.badges.length > 0) {
      const below = entry.position !== undefined;
      const group = h("div", { class: `gobpm-marks ${below ? "gobpm-marks-below" : "gobpm-marks-above"}` }, entry.badges.map(badge));
      group.dataset.elementId = id;
      if (entry.tip) group.title = entry.tip;
      // rows of boundary badges are apart in the badges' own pixels: they scale with them
      if (below && entry.row) group.style.marginTop = `${entry.row * BADGE_ROW}px`;
      const position = below ? entry.position : { top: -4, left: 0 };
      const scale = { min: BADGE_MIN_SCALE };
      this.viewer.get("overlays").add(element, OVERLAY_TYPE, { position, html: group, scale });
    }
    return true;
  }

  /**
   * Where the badges of boundary events go: below every name of their host's boundaries,
   * one row per marked boundary (left to right), starting under the boundary itself, so no
   * badge hides a name or another badge and each starts below its own event. Other
   * elements carry their badges above their top-left corner. Badges keep a readable size
   * when the diagram is zoomed out (BADGE_MIN_SCALE), so the rows are set apart in the
   * badges' own pixels, which scale with them.
   */
  place(wanted) {
    const registry = this.viewer.get("elementRegistry");
    const hosts = new Map();
    for (const [id, entry] of wanted) {
      const element = registry.get(id);
      if (!element || element.type !== "bpmn:BoundaryEvent" || entry.badges.length === 0) continue;
      const host = element.host || element;
      if (!hosts.has(host)) hosts.set(host, []);
      hosts.get(host).push([element, entry]);
    }
    for (const [host, marked] of hosts) {
      let bottom = 0;
      for (const b of host.attachers || [host]) {
        const label = b.label;
        bottom = Math.max(bottom, b.y + b.height, label ? label.y + label.height : 0);
      }
      marked.sort((a, b) => a[0].x - b[0].x || (a[0].id < b[0].id ? -1 : 1));
      marked.forEach(([element, entry], row) => {
        entry.position = { top: bottom - element.y + 3, left: element.width / 2 - 9 };
        entry.row = row;
        entry.key += `|${entry.position.top},${entry.position.left},${row}`;
      });
    }
  }

  clear(id, entry) {
    const registry = this.viewer.get("elementRegistry");
    const element = registry.get(id);
    if (!element) return;
    const canvas = this.viewer.get("canvas");
    for (const cls of entry.classes) canvas.removeMarker(element, cls);
    this.viewer.get("overlays").remove({ element, type: OVERLAY_TYPE });
    const gfx = registry.getGraphics(element);
    if (gfx) for (const title of gfx.querySelectorAll(":scope > title.gobpm-tip")) title.remove();
  }

  destroy() {
    this.destroyed = true;
    this.resize.disconnect();
    if (this.viewer !== null) {
      try {
        this.viewer.destroy();
      } catch {
        // already gone
      }
    }
    this.viewer = null;
    this.canvas.replaceChildren();
  }
}
