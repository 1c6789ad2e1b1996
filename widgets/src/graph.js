// A DOT document rendered as SVG by d3-graphviz (WebAssembly Graphviz, inlined in the bundle),
// with animated transitions between successive documents.
import { select, selectAll } from "d3-selection";
import { transition } from "d3-transition";
import "d3-graphviz";

import { h } from "./dom.js";

const TRANSITION_MS = 450;
// A render that has not finished after this long is given up when the next update comes
// (a safety net for errors thrown inside d3-graphviz's timers, which never call back).
const STUCK_MS = 10000;
// Page-wide, not per module: each widget instance loads its own copy of this bundle.
const PANE_COUNT = Symbol.for("gobpm_nb.graph-pane.count");

/**
 * One graph area. update(dot) may be called at any rate: renders are serialised and only
 * the newest pending document is drawn once the running render (and its transition) ends.
 */
export class GraphPane {
  constructor({ role, title = null }) {
    globalThis[PANE_COUNT] = (globalThis[PANE_COUNT] || 0) + 1;
    this.transitionName = `gobpm-graph-${globalThis[PANE_COUNT]}`;
    this.titleEl = h("div", { class: "gobpm-graph-title", "data-role": `${role}-title` });
    this.canvas = h("div", { class: "gobpm-graph-canvas" });
    this.message = h("div", { class: "gobpm-graph-message", "data-role": `${role}-message` });
    this.el = h("div", { class: "gobpm-graph", "data-role": role }, [
      this.titleEl,
      this.canvas,
      this.message,
    ]);
    this.setTitle(title);
    this.host = null; // the element d3-graphviz owns; replaced after a layout error
    this.graphviz = null;
    this.busy = false;
    this.busySince = 0;
    this.token = 0; // identifies the render in flight; stale callbacks are ignored
    this.pending = null; // newest DOT not yet drawn
    this.current = null; // DOT on screen
    this.destroyed = false;
    this.setMessage("", false);
  }

  setTitle(title) {
    this.titleEl.textContent = title ?? "";
    this.titleEl.hidden = !title;
  }

  setMessage(text, isError) {
    this.message.textContent = text;
    this.message.hidden = !text;
    this.message.classList.toggle("gobpm-graph-error", Boolean(isError));
  }

  update(dot) {
    this.pending = typeof dot === "string" ? dot : "";
    if (this.busy && performance.now() - this.busySince > STUCK_MS) {
      this.discard();
      this.current = null;
      this.busy = false;
    }
    this.pump();
  }

  destroy() {
    this.destroyed = true;
    this.pending = null;
    this.discard();
  }

  pump() {
    if (this.busy || this.destroyed || this.pending === null) return;
    const dot = this.pending;
    this.pending = null;
    if (dot === this.current) return;
    if (dot.trim() === "") {
      this.discard();
      this.current = dot;
      this.setMessage("nothing to show", false);
      return;
    }
    this.busy = true;
    this.busySince = performance.now();
    this.token += 1;
    const token = this.token;
    const done = () => {
      if (token !== this.token) return;
      this.busy = false;
      this.pump();
    };
    try {
      this.instance().renderDot(dot, () => {
        if (token !== this.token) return;
        this.current = dot;
        this.setMessage("", false);
        done();
      });
    } catch (error) {
      this.fail(error);
      done();
    }
  }

  instance() {
    if (this.graphviz === null) {
      this.host = h("div", { class: "gobpm-graph-host" });
      this.canvas.replaceChildren(this.host);
      const name = this.transitionName;
      const graphviz = select(this.host)
        .graphviz({ useWorker: false, zoom: false, fade: true, tweenShapes: true })
        .transition(() => this.makeTransition(name))
        .on("renderStart", () => {
          if (this.graphviz === graphviz) this.setMessage("", false);
        })
        .onerror((message) => {
          // d3-graphviz stays busy after a layout error: drop the instance, keep going.
          if (this.graphviz !== graphviz) return;
          this.fail(message);
          this.busy = false;
          this.pump();
        });
      this.graphviz = graphviz;
    }
    return this.graphviz;
  }

  /**
   * The transition d3-graphviz asks for before each render. It must be d3-transition's
   * transition(name) (scheduled on the document element), and d3-graphviz finds it again by
   * walking up from its own element. When that element is outside the document (JupyterLab
   * renders outputs before attaching them and detaches cells scrolled away), schedule the
   * same transition on the detached tree's top node too, or the lookup throws and the pane
   * never draws again.
   */
  makeTransition(name) {
    let top = this.host;
    while (top && top.parentNode) top = top.parentNode;
    if (!top || top === document) return transition(name).duration(TRANSITION_MS);
    return selectAll([document.documentElement, top]).transition(name).duration(TRANSITION_MS);
  }

  fail(error) {
    const text = typeof error === "string" ? error : (error && error.message) || String(error);
    this.discard();
    this.current = null;
    this.setMessage(`Graphviz could not draw this graph: ${text}`, true);
  }

  discard() {
    if (this.graphviz !== null) {
      try {
        this.graphviz.destroy();
      } catch {
        // nothing to release
      }
    }
    this.graphviz = null;
    this.host = null;
    this.canvas.replaceChildren();
  }
}
