// view == "graph": a header (the title, the moment shown and a "follow live" / "freeze here"
// button), one diagram — BPMN with the engine's state on it when the model has a `bpmn`
// document, else an animated Graphviz graph of `dot` — and a legend of colour swatches.
import { h, trait, watch } from "./dom.js";
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

/**
 * Which moment the graph shows ("live", or "at fact 42 · 2026-01-01 05:00" when frozen
 * there) and the button that changes it: "freeze here" on a live graph, "follow live" on a
 * frozen one. The button sets the two-way `live` trait; Python follows or freezes.
 */
function momentLine(model) {
  const text = h("span", { class: "gobpm-moment-text", "data-role": "moment" });
  const button = h("button", { type: "button", class: "gobpm-button gobpm-moment-button" });
  const line = h("span", { class: "gobpm-moment" }, [text, button]);
  const show = () => {
    const moment = trait(model, "moment", "");
    const live = Boolean(trait(model, "live", false));
    line.hidden = !moment;
    line.dataset.live = String(live);
    text.textContent = moment;
    button.textContent = live ? "freeze here" : "follow live";
    button.dataset.action = live ? "freeze" : "follow";
    button.title = live ? "stop following the engine: keep the picture of this moment"
      : "follow the engine from where it stands now";
  };
  button.addEventListener("click", () => {
    model.set("live", !trait(model, "live", false));
    try {
      model.save_changes();
    } catch {
      // no kernel behind the model: nothing to follow
    }
  });
  show();
  return [line, watch(model, ["moment", "live"], show)];
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
