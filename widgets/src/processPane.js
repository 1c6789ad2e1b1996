// The process of one instance: in BPMN notation (bpmn.js) when Python sends a document with a
// diagram, in Graphviz (graph.js) otherwise — and when bpmn.io cannot draw the document, with
// a note saying so. Only the pane on screen is updated.
import { BpmnPane } from "./bpmn.js";
import { h } from "./dom.js";
import { GraphPane } from "./graph.js";

export class ProcessPane {
  // onChoose: (decide fields) => void, called when a flow of a waiting decision is clicked on
  // the BPMN diagram (a dashboard sends the `decide` command; a standalone view has none).
  constructor({ role, title = null, maxHeight = 560, minLabelPx = null, onChoose = null }) {
    this.titleEl = h("div", { class: "gobpm-graph-title", "data-role": `${role}-title`, text: title || "" });
    this.titleEl.hidden = !title;
    this.failed = null; // the document bpmn.io could not draw
    this.note = h("div", { class: "gobpm-graph-message gobpm-graph-error", "data-role": `${role}-fallback`, hidden: true });
    this.bpmn = new BpmnPane({ role: `${role}-bpmn`, maxHeight, minLabelPx, header: false, onChoose, onFail: (text, xml) => this.fail(text, xml) });
    this.graph = new GraphPane({ role });
    // one row: the title, the diagram's status line and its zoom buttons (BPMN only)
    this.header = h("div", { class: "gobpm-bpmn-header" }, [this.titleEl, this.bpmn.status, this.bpmn.toolbar]);
    this.el = h("div", { class: "gobpm-process", "data-role": `${role}-panel` }, [
      this.header,
      this.bpmn.el,
      this.note,
      this.graph.el,
    ]);
    this.state = { bpmn: "", marks: {}, dot: "" };
    this.show();
  }

  update(state) {
    this.state = state;
    this.show();
  }

  show() {
    const { bpmn, marks, dot } = this.state;
    const useBpmn = typeof bpmn === "string" && bpmn !== "" && bpmn !== this.failed;
    this.bpmn.el.hidden = !useBpmn;
    this.bpmn.toolbar.hidden = !useBpmn;
    this.bpmn.status.hidden = !useBpmn || !this.bpmn.status.textContent;
    this.header.hidden = this.titleEl.hidden && !useBpmn;
    this.graph.el.hidden = useBpmn;
    this.note.hidden = useBpmn || this.failed === null || bpmn !== this.failed;
    if (useBpmn) this.bpmn.update(bpmn, marks);
    else this.graph.update(dot);
  }

  fail(text, xml) {
    this.failed = xml;
    this.note.textContent = `bpmn.io could not draw this diagram (${text}); Graphviz draws it instead.`;
    this.show();
  }

  destroy() {
    this.bpmn.destroy();
    this.graph.destroy();
  }
}
