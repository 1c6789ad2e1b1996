// A BPMN diagram drawn by bpmn.io's NavigatedViewer (pan with the mouse; zoom with the
// buttons, or the wheel once the diagram was clicked), with the engine's state on its shapes.
//
// The marks come from Python (gobpm_nb/render/marks.py) as plain data, element by element;
// this file only draws them: canvas markers (CSS classes on the shape), one overlay of
// badges per element and a <title> tooltip on the shape. Only the elements whose marks
// changed are redrawn. Every text goes through textContent or an attribute value.
//
// A population's heat map (gobpm_nb/render/heat.py) gives an element a `fill`: the shape is
// filled with it (the gobpm-heat marker reads it from a CSS variable), its count on a badge.
//
// The flows a person may choose at a decision waiting now (marks.choices) are drawn dashed in
// the decision colour with a badge saying their label; where the pane has onChoose (a
// dashboard), clicking the flow or its badge calls it with the `decide` command's fields.
//
// The bpmn.io watermark (bottom right of the canvas) is part of the viewer's licence: it is
// never moved, hidden or covered — nothing here is placed over that corner, the fitted view
// keeps a margin below the diagram, and the badges lie under it (it has z-index 100).
import NavigatedViewer from "bpmn-js/lib/NavigatedViewer";

import { PALETTE } from "./contract.js";
import { asText, h } from "./dom.js";

const SVG_NS = "http://www.w3.org/2000/svg";
const OVERLAY_TYPE = "gobpm";
const MARKER = /^gobpm-[a-z-]+$/;
const COLOUR = /^#[0-9a-fA-F]{3,8}$/;
const COLOUR_NAMES = Object.keys(PALETTE);
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
// Diagram units kept between a badge and a label or another badge, and how many places a
// badge group tries (rows further out) before it takes its first choice anyway.
const BADGE_GAP = 2;
const BADGE_TRIES = 8;
// Marks that say where an instance stands: a readable view centres on them.
const FOCUS = ["gobpm-token", "gobpm-held", "gobpm-fork"];

/** Do two boxes {x, y, width, height} overlap (gap: space wanted between them)? */
export function boxesMeet(a, b, gap = 0) {
  return a.x < b.x + b.width + gap && b.x < a.x + a.width + gap &&
    a.y < b.y + b.height + gap && b.y < a.y + a.height + gap;
}

/**
 * The first of `candidates` (boxes) that meets none of `taken`; the first candidate when
 * every one does.
 */
export function firstFree(candidates, taken, gap = BADGE_GAP) {
  return candidates.find((c) => !taken.some((t) => boxesMeet(c, t, gap))) || candidates[0];
}

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
      fill: typeof entry.fill === "string" && COLOUR.test(entry.fill) ? entry.fill : "",
      key: JSON.stringify(entry),
    });
  }
  const flows = marks && Array.isArray(marks.flows) ? marks.flows : [];
  for (const id of flows) {
    if (typeof id === "string" && !wanted.has(id)) {
      wanted.set(id, { classes: ["gobpm-taken"], badges: [], tip: "", key: "taken" });
    }
  }
  const choices = marks && Array.isArray(marks.choices) ? marks.choices : [];
  for (const choice of choices) {
    if (!choice || typeof choice.flow !== "string" || !choice.decide || typeof choice.decide !== "object") continue;
    const before = wanted.get(choice.flow) || { classes: [], badges: [], tip: "", key: "" };
    const tip = typeof choice.tip === "string" ? choice.tip : "";
    wanted.set(choice.flow, {
      ...before,
      classes: [...before.classes, "gobpm-choice"],
      tip: before.tip ? `${before.tip}\n${tip}` : tip,
      choice,
      key: `${before.key} choice ${JSON.stringify(choice)}`,
    });
  }
  return wanted;
}

/** Places for a flow's choice badge of `size`: by the middle of its longest segment, best first. */
export function choicePlaces(waypoints, size) {
  let best = [waypoints[0], waypoints[1]];
  let longest = -1;
  for (let i = 1; i < waypoints.length; i += 1) {
    const [a, b] = [waypoints[i - 1], waypoints[i]];
    const length = Math.hypot(b.x - a.x, b.y - a.y);
    if (length > longest) [longest, best] = [length, [a, b]];
  }
  const cx = (best[0].x + best[1].x) / 2;
  const cy = (best[0].y + best[1].y) / 2;
  const { width, height } = size;
  const out = [];
  for (let k = 0; k < BADGE_TRIES; k += 1) {
    const off = 3 + k * (height + BADGE_GAP);
    out.push({ x: cx - width / 2, y: cy - height - off, width, height }, { x: cx - width / 2, y: cy + off, width, height });
  }
  out.push({ x: cx + 4, y: cy - height / 2, width, height }, { x: cx - width - 4, y: cy - height / 2, width, height });
  return out;
}

function badge(data) {
  const kind = String(data.kind || "");
  const node = h("span", { class: `gobpm-badge gobpm-badge-${kind.replace(/[^a-z]/g, "")}`, text: data.text });
  node.dataset.kind = kind;
  if (data.state) node.dataset.state = String(data.state);
  if (data.hold) node.dataset.hold = String(data.hold);
  if (typeof data.tip === "string") node.title = data.tip;
  if (typeof data.colour === "string" && COLOUR.test(data.colour)) node.style.borderColor = data.colour;
  if (kind === "token" || kind === "heat") {
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
   * minLabelPx: when set, no label is ever drawn smaller than this on screen (px): the
   *   canvas keeps maxHeight, the view never zooms out below that size, and Fit shows the
   *   instance's tokens and holds (the whole diagram when it fits at that size).
   */
  constructor({ role, onFail = () => {}, maxHeight = 560, header = true, minLabelPx = null, onChoose = null }) {
    this.onFail = onFail;
    this.onChoose = onChoose; // (decide fields) => void: a flow of a waiting decision was clicked
    this.maxHeight = Math.max(MIN_HEIGHT, maxHeight);
    this.minLabelPx = minLabelPx;
    this.minScale = 0; // the smallest zoom that keeps labels at minLabelPx (set on import)
    this.focus = ""; // the instance the marks are of: a new one is fitted again
    this.status = h("div", { class: "gobpm-bpmn-status", "data-role": `${role}-status` });
    const zoom = (factor) => () => this.zoomBy(factor);
    this.toolbar = h("div", { class: "gobpm-bpmn-tools" }, [
      h("button", { type: "button", class: "gobpm-button gobpm-bpmn-fit", "data-action": "fit", title: minLabelPx ? "show the instance's tokens and holds at a readable size" : "fit the diagram", onclick: () => this.fit(true) }, ["Fit"]),
      h("button", { type: "button", class: "gobpm-button", "data-action": "zoom-in", title: "zoom in", "aria-label": "zoom in", onclick: zoom(1.25) }, ["+"]),
      h("button", { type: "button", class: "gobpm-button", "data-action": "zoom-out", title: "zoom out", "aria-label": "zoom out", onclick: zoom(0.8) }, ["−"]),
    ]);
    this.canvas = h("div", { class: "gobpm-bpmn-canvas", "data-role": `${role}-canvas` });
    this.message = h("div", { class: "gobpm-graph-message", "data-role": `${role}-message`, hidden: true });
    // marks on elements the diagram has no shape for: listed, never silently dropped
    this.undrawn = h("div", { class: "gobpm-notice", "data-level": "warning", "data-role": `${role}-undrawn`, hidden: true });
    this.measurer = h("div", { class: "gobpm-bpmn-measure", "aria-hidden": "true" });
    this.el = h("div", { class: "gobpm-bpmn", "data-role": role, "data-choosable": String(Boolean(onChoose)) }, [
      header ? h("div", { class: "gobpm-bpmn-header" }, [this.status, this.toolbar]) : null,
      this.canvas,
      this.undrawn,
      this.message,
      this.measurer,
    ]);
    if (minLabelPx) this.canvas.style.height = `${this.maxHeight}px`;
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
        this.viewer.on("canvas.viewbox.changed", () => this.keepReadable());
        this.viewer.on("element.click", (event) => this.choose(event.element && event.element.id));
      }
      await this.viewer.importXML(xml);
      if (this.destroyed) return;
      this.ready = true;
      this.touched = false;
      this.message.hidden = true;
      this.minScale = this.readableScale();
      // fitted first: badges are placed at the zoom they are shown at (they keep a minimum
      // size); a readable view is fitted again around the instance's marks
      this.fit(false);
      this.applyMarks();
      if (this.minLabelPx) this.fit(false);
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
    canvas.zoom(Math.min(4, Math.max(0.2, this.minScale, canvas.zoom() * factor)), "auto");
  }

  /** The zoom at which the diagram's smallest label is minLabelPx on screen (0: no floor). */
  readableScale() {
    if (!this.minLabelPx) return 0;
    let smallest = Infinity;
    for (const text of this.canvas.querySelectorAll(".djs-visual text")) {
      const size = parseFloat(getComputedStyle(text).fontSize);
      if (size > 0 && text.textContent.trim()) smallest = Math.min(smallest, size);
    }
    return Number.isFinite(smallest) ? this.minLabelPx / smallest : 1;
  }

  /** Zoomed out below the readable floor (the mouse wheel): back to the floor. */
  keepReadable() {
    if (!this.ready || !this.minScale || this.clamping) return;
    const canvas = this.viewer.get("canvas");
    if (canvas.zoom() >= this.minScale - 1e-6) return;
    this.clamping = true;
    try {
      canvas.zoom(this.minScale, "auto");
    } finally {
      this.clamping = false;
    }
  }

  /** Size the canvas to the diagram's shape, then fit it with room for badges and watermark. */
  fit(always) {
    if (!this.ready || (this.touched && !always)) return;
    if (this.minLabelPx) {
      this.fitReadable();
      if (always) this.touched = false;
      return;
    }
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

  /**
   * Show the whole diagram when it fits at a readable zoom; else the box around the
   * instance's tokens, holds and forks (the path it took when it has none), centred, at the
   * largest zoom up to 1 that shows it, never below the readable floor.
   */
  fitReadable() {
    const canvas = this.viewer.get("canvas");
    const width = this.canvas.clientWidth;
    const height = this.canvas.clientHeight;
    const inner = canvas.viewbox().inner;
    if (width === 0 || height === 0 || !inner || !(inner.width > 0) || !(inner.height > 0)) return;
    const availWidth = width - MARGIN.left - MARGIN.right;
    const availHeight = height - MARGIN.top - MARGIN.bottom;
    const fits = (box) => Math.min(1, availWidth / box.width, availHeight / box.height);
    let box = inner;
    if (fits(inner) < this.minScale) box = this.focusBox() || inner;
    const scale = Math.max(this.minScale, fits(box));
    const cx = box.x + box.width / 2;
    const cy = box.y + box.height / 2;
    const w = width / scale;
    const h = height / scale;
    // centred on the box, but never past the diagram's own edges where it is larger
    const clampTo = (centre, size, lo, span, before, after) => {
      const start = centre - size / 2;
      if (span + (before + after) / scale <= size) return lo - (size - span) / 2;
      return Math.min(Math.max(start, lo - before / scale), lo + span + after / scale - size);
    };
    canvas.viewbox({
      x: clampTo(cx, w, inner.x, inner.width, MARGIN.left, MARGIN.right),
      y: clampTo(cy, h, inner.y, inner.height, MARGIN.top, MARGIN.bottom),
      width: w,
      height: h,
    });
  }

  /** The box around the shapes that carry the instance's tokens, holds or forks. */
  focusBox() {
    const registry = this.viewer.get("elementRegistry");
    let focus = [];
    for (const [id, entry] of this.shown) {
      if (entry.classes.some((c) => FOCUS.includes(c))) focus.push(id);
    }
    if (focus.length === 0) focus = [...this.shown.keys()];
    const boxes = focus.map((id) => registry.get(id)).filter((e) => e && !e.waypoints)
      .map((e) => ({ x: e.x, y: e.y, width: e.width, height: e.height }));
    if (boxes.length === 0) return null;
    const x = Math.min(...boxes.map((b) => b.x));
    const y = Math.min(...boxes.map((b) => b.y));
    const right = Math.max(...boxes.map((b) => b.x + b.width));
    const bottom = Math.max(...boxes.map((b) => b.y + b.height));
    return { x, y, width: right - x, height: bottom - y };
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
    let changed = false;
    for (const [id, shown] of this.shown) {
      const next = wanted.get(id);
      if (next && next.key === shown.key) continue;
      this.clear(id, shown);
      this.shown.delete(id);
      changed = true;
    }
    const missing = [];
    for (const [id, entry] of wanted) {
      if (this.shown.has(id)) continue;
      if (this.draw(id, entry)) {
        this.shown.set(id, entry);
        changed = true;
      } else if (entry.badges.length > 0 || entry.classes.some((c) => FOCUS.includes(c))) {
        missing.push([id, entry]);
      }
    }
    if (changed) this.placeBadges();
    this.showUndrawn(missing);
    this.status.textContent = typeof marks.status === "string" ? marks.status : "";
    this.status.hidden = !this.status.textContent;
    this.el.dataset.residency = typeof marks.residency === "string" ? marks.residency : "";
    this.status.dataset.residency = this.el.dataset.residency;
    const colours = marks.colours && typeof marks.colours === "object" ? marks.colours : {};
    for (const name of COLOUR_NAMES) {
      const value = colours[name];
      if (typeof value === "string" && COLOUR.test(value)) this.el.style.setProperty(`--gobpm-${name}`, value);
    }
    const focus = typeof marks.instance === "string" ? marks.instance : "";
    if (focus !== this.focus) {
      this.focus = focus;
      this.touched = false; // another instance: show where it stands
      if (this.minLabelPx) this.fit(false);
    }
  }

  /** A click on element `id`: when it is a flow a person may choose, say so to onChoose. */
  choose(id) {
    const entry = typeof id === "string" ? this.shown.get(id) : null;
    if (entry && entry.choice && this.onChoose) this.onChoose({ ...entry.choice.decide });
  }

  /** Marks the diagram has no shape for (a token where nothing is drawn): say so. */
  showUndrawn(missing) {
    const words = missing.map(([id, entry]) => {
      const texts = entry.badges.map((b) => asText(b.text)).filter(Boolean).join(" ");
      return texts ? `${id} (${texts})` : id;
    });
    this.undrawn.textContent = words.length
      ? `Not on this diagram (no shape drawn for it): ${words.join("; ")}`
      : "";
    this.undrawn.hidden = words.length === 0;
    this.undrawn.dataset.ids = missing.map(([id]) => id).join(" ");
  }

  /** Draw one element's classes and tooltip; false when the diagram has no such element. */
  draw(id, entry) {
    const registry = this.viewer.get("elementRegistry");
    const element = registry.get(id);
    if (!element) return false;
    const canvas = this.viewer.get("canvas");
    for (const cls of entry.classes) canvas.addMarker(element, cls);
    // a heat map's shade: the gobpm-heat marker fills the shape with this variable
    if (entry.fill) registry.getGraphics(element)?.style.setProperty("--gobpm-heat-fill", entry.fill);
    if (entry.tip) {
      const gfx = registry.getGraphics(element);
      if (gfx) {
        const title = document.createElementNS(SVG_NS, "title");
        title.setAttribute("class", "gobpm-tip");
        title.textContent = entry.tip;
        gfx.prepend(title);
      }
    }
    return true;
  }

  /**
   * One overlay of badges per marked element, placed where it covers no label and no other
   * badge group: above a shape's top-left corner (rows further up, then below it, when that
   * place is taken); under a boundary event, below every label of its host's boundaries,
   * starting under the event or else ending under it (rows further down when both are taken). Boxes are in diagram units; badges scale with the diagram
   * (never below BADGE_MIN_SCALE), so at a smaller zoom they count larger.
   */
  placeBadges() {
    const overlays = this.viewer.get("overlays");
    const registry = this.viewer.get("elementRegistry");
    overlays.remove({ type: OVERLAY_TYPE });
    const zoom = this.viewer.get("canvas").zoom();
    const grow = zoom > 0 && zoom < BADGE_MIN_SCALE ? BADGE_MIN_SCALE / zoom : 1;
    const taken = this.labelBoxes();
    const groups = [];
    for (const [id, entry] of this.shown) {
      const element = registry.get(id);
      if (!element || entry.badges.length === 0) continue;
      const group = h("div", { class: "gobpm-marks" }, entry.badges.map(badge));
      group.dataset.elementId = id;
      if (entry.tip) group.title = entry.tip;
      this.measurer.append(group);
      const size = { width: group.offsetWidth * grow, height: group.offsetHeight * grow };
      group.remove();
      groups.push({ element, group, size, boundary: element.type === "bpmn:BoundaryEvent" });
    }
    // tokens and holds of nodes first, then boundaries left to right
    groups.sort((a, b) => a.boundary - b.boundary || a.element.x - b.element.x || a.element.y - b.element.y);
    for (const { element, group, size, boundary } of groups) {
      const box = firstFree(this.candidates(element, size, boundary), taken);
      taken.push(box);
      group.classList.add(boundary ? "gobpm-marks-below" : "gobpm-marks-above");
      const position = { top: box.y - element.y, left: box.x - element.x };
      overlays.add(element, OVERLAY_TYPE, { position, html: group, scale: { min: BADGE_MIN_SCALE } });
    }
    this.placeChoices(grow, taken);
  }

  /**
   * A badge on each flow a person may choose ("? <label>"), by the middle of its longest
   * segment, where it covers no label, badge or shape; a button where the pane can send the
   * choice (clicking it is clicking the flow).
   */
  placeChoices(grow, taken) {
    const overlays = this.viewer.get("overlays");
    const registry = this.viewer.get("elementRegistry");
    const shapes = registry.getAll()
      .filter((e) => !e.waypoints && e.x !== undefined && e.parent && !(e.children && e.children.length) && e.type !== "bpmn:Lane")
      .map((e) => ({ x: e.x, y: e.y, width: e.width, height: e.height }));
    for (const [id, entry] of this.shown) {
      const element = registry.get(id);
      if (!entry.choice || !element || !Array.isArray(element.waypoints) || element.waypoints.length < 2) continue;
      const text = `? ${asText(entry.choice.label)}`;
      const tag = this.onChoose ? "button" : "span";
      const node = h(tag, { class: "gobpm-badge gobpm-badge-choice", text, title: asText(entry.choice.tip) });
      node.dataset.kind = "choice";
      node.dataset.flow = id;
      if (this.onChoose) {
        node.type = "button";
        node.addEventListener("click", (event) => {
          event.stopPropagation();
          this.choose(id);
        });
      }
      const group = h("div", { class: "gobpm-marks gobpm-marks-choice" }, [node]);
      group.dataset.elementId = id;
      this.measurer.append(group);
      const size = { width: group.offsetWidth * grow, height: group.offsetHeight * grow };
      group.remove();
      const box = firstFree(choicePlaces(element.waypoints, size), [...taken, ...shapes]);
      taken.push(box);
      const left = Math.min(...element.waypoints.map((w) => w.x));
      const top = Math.min(...element.waypoints.map((w) => w.y));
      overlays.add(element, OVERLAY_TYPE, { position: { top: box.y - top, left: box.x - left }, html: group, scale: { min: BADGE_MIN_SCALE } });
    }
  }

  /** The places a badge group of `size` may take for `element`, best first. */
  candidates(element, size, boundary) {
    const step = size.height + BADGE_GAP;
    const out = [];
    if (boundary) {
      let bottom = element.y + element.height;
      const host = element.host;
      for (const b of host ? host.attachers || [] : [element]) {
        bottom = Math.max(bottom, b.y + b.height, b.label ? b.label.y + b.label.height : 0);
      }
      // each row: starting under the event, else ending under it
      const starts = element.x + element.width / 2 - 9;
      const ends = element.x + element.width / 2 + 9 - size.width;
      for (let k = 0; k < 2 * BADGE_TRIES; k += 1) {
        out.push({ x: starts, y: bottom + 3 + k * step, ...size }, { x: ends, y: bottom + 3 + k * step, ...size });
      }
      return out;
    }
    const above = element.y - 4 - size.height;
    const below = Math.max(element.y + element.height, element.label ? element.label.y + element.label.height : 0) + 4;
    for (let k = 0; k < BADGE_TRIES; k += 1) out.push({ x: element.x, y: above - k * step, ...size });
    for (let k = 0; k < BADGE_TRIES; k += 1) out.push({ x: element.x, y: below + k * step, ...size });
    return out;
  }

  /** The box of every label drawn (a shape's name inside it, or beside it), diagram units. */
  labelBoxes() {
    const registry = this.viewer.get("elementRegistry");
    const boxes = [];
    for (const element of registry.getAll()) {
      if (element.waypoints || element.x === undefined) continue;
      const gfx = registry.getGraphics(element);
      if (!gfx) continue;
      for (const text of gfx.querySelectorAll(":scope > .djs-visual text")) {
        if (!text.textContent.trim() || text.hasAttribute("transform")) continue;
        let bb;
        try {
          bb = text.getBBox();
        } catch {
          continue;
        }
        if (bb.width > 0 && bb.height > 0) {
          boxes.push({ x: element.x + bb.x, y: element.y + bb.y, width: bb.width, height: bb.height });
        }
      }
    }
    return boxes;
  }

  clear(id, entry) {
    const registry = this.viewer.get("elementRegistry");
    const element = registry.get(id);
    if (!element) return;
    const canvas = this.viewer.get("canvas");
    for (const cls of entry.classes) canvas.removeMarker(element, cls);
    const gfx = registry.getGraphics(element);
    if (gfx) gfx.style.removeProperty("--gobpm-heat-fill");
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
