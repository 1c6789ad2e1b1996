// view == "graph": a title, one animated graph, a legend of colour swatches.
import { h, trait, watch } from "./dom.js";
import { GraphPane } from "./graph.js";

export function renderGraphView(model, root) {
  const pane = new GraphPane({ role: "graph" });
  const title = h("div", { class: "gobpm-title", "data-role": "title" });
  const legend = h("div", { class: "gobpm-legend", "data-role": "legend" });
  root.append(h("div", { class: "gobpm-graph-view" }, [title, pane.el, legend]));

  const showTitle = () => {
    title.textContent = trait(model, "title", "");
    title.hidden = !title.textContent;
  };
  const showDot = () => pane.update(trait(model, "dot", ""));
  const showLegend = () => drawLegend(legend, trait(model, "legend", []));

  showTitle();
  showDot();
  showLegend();
  const offs = [
    watch(model, "title", showTitle),
    watch(model, "dot", showDot),
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
