// view == "graph": a header (the title, the moment shown and a "follow live" / "freeze here"
// button), one diagram — BPMN with the engine's state on it when the model has a `bpmn`
// document, else an animated Graphviz graph of `dot` — and a legend of colour swatches.
import { h, trait, watch } from "./dom.js";
import { momentLine } from "./moment.js";
import { ProcessPane } from "./processPane.js";

export function renderGraphView(model, root) {
  const pane = new ProcessPane({ role: "graph" });
  const title = h("div", { class: "gobpm-title", "data-role": "title" });
  const [moment, offMoment] = momentLine(model);
  const header = h("div", { class: "gobpm-graph-header" }, [title, moment]);
  const legend = h("div", { class: "gobpm-legend", "data-role": "legend" });
  root.append(h("div", { class: "gobpm-graph-view" }, [header, pane.el, legend]));

  const showTitle = () => {
    title.textContent = trait(model, "title", "");
    title.hidden = !title.textContent;
    header.hidden = title.hidden && moment.hidden;
  };
  const showDot = () =>
    pane.update({ bpmn: trait(model, "bpmn", ""), marks: trait(model, "marks", {}), dot: trait(model, "dot", "") });
  const showLegend = () => drawLegend(legend, trait(model, "legend", []));

  showTitle();
  showDot();
  showLegend();
  const offs = [
    offMoment,
    watch(model, ["title", "moment"], showTitle),
    watch(model, ["dot", "bpmn", "marks"], showDot),
    watch(model, "legend", showLegend),
  ];
  return () => {
    for (const off of offs) off();
    pane.destroy();
  };
}

/** Legend entries are [label, colour] pairs; the colour goes through CSSOM only. */
export function drawLegend(container, entries) {
  const items = [];
  for (const entry of Array.isArray(entries) ? entries : []) {
    if (!Array.isArray(entry) || entry.length < 2) continue;
    const swatch = h("span", { class: "gobpm-swatch" });
    swatch.style.backgroundColor = String(entry[1]);
    items.push(
      h("span", { class: "gobpm-legend-item" }, [swatch, h("span", { text: entry[0] })]),
    );
  }
  container.replaceChildren(...items);
  container.hidden = items.length === 0;
}
