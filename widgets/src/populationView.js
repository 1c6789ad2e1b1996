// view == "population": a scenario's run on its process (gobpm_nb/ui/population.py). A header
// (the title, the phase — not run yet, running, ended — and the virtual clock), the case
// counters, one row per pool (busy resources of its size, work waiting, calendar open or
// closed), and the heat map: the process's BPMN diagram with each element shaded by the
// tokens standing on it now and the count on a badge (Graphviz where no diagram can be had),
// with its legend. Nothing here sends anything back: the run is driven from Python.
import { asText, h, trait, watch } from "./dom.js";
import { drawLegend } from "./graphView.js";
import { ProcessPane } from "./processPane.js";

const POOL_COLUMNS = ["pool", "busy", "waiting", "calendar"];

/** A pool row's cells as text: "busy" reads "1 of 2" (of ∞ when unlimited). */
export function poolCells(row) {
  const size = row.size === null || row.size === undefined ? "∞" : asText(row.size);
  return {
    pool: asText(row.pool),
    busy: `${asText(row.busy)} of ${size}`,
    waiting: asText(row.waiting),
    calendar: row.open ? "open" : "closed",
  };
}

function header(model, offs) {
  const title = h("div", { class: "gobpm-title", "data-role": "title" });
  const phase = h("span", { class: "gobpm-population-phase", "data-role": "phase" });
  const clock = h("span", { class: "gobpm-clock-value", "data-role": "clock" });
  const show = () => {
    title.textContent = asText(trait(model, "title", ""));
    const value = asText(trait(model, "phase", ""));
    phase.textContent = value;
    phase.dataset.phase = value;
    clock.textContent = asText(trait(model, "clock", ""));
  };
  show();
  offs.push(watch(model, ["title", "phase", "clock"], show));
  const when = h("div", { class: "gobpm-clock" }, [phase, h("span", { class: "gobpm-muted", text: "virtual time" }), clock]);
  return h("div", { class: "gobpm-graph-header gobpm-population-header" }, [title, when]);
}

function counters(model, offs) {
  const box = h("div", { class: "gobpm-counters", "data-role": "counters" });
  const show = () => {
    const value = trait(model, "counters", {});
    const entries = value && typeof value === "object" ? Object.entries(value) : [];
    box.replaceChildren(...entries.map(([name, count]) => {
      const chip = h("span", { class: "gobpm-counter" }, [
        h("span", { class: "gobpm-counter-value", text: count }),
        h("span", { class: "gobpm-counter-label", text: name }),
      ]);
      chip.dataset.name = name;
      return chip;
    }));
  };
  show();
  offs.push(watch(model, "counters", show));
  return box;
}

function pools(model, offs) {
  const body = h("tbody");
  const table = h("table", { class: "gobpm-table gobpm-pools", "data-role": "pools" }, [
    h("thead", {}, [h("tr", {}, POOL_COLUMNS.map((name) => h("th", { class: `gobpm-col-${name}`, text: name })))]),
    body,
  ]);
  const show = () => {
    const rows = trait(model, "pools", []);
    const list = Array.isArray(rows) ? rows.filter((r) => r && typeof r === "object") : [];
    body.replaceChildren(...list.map((row) => {
      const cells = poolCells(row);
      const tr = h("tr", {}, POOL_COLUMNS.map((name) => h("td", { class: `gobpm-col-${name}`, text: cells[name] })));
      tr.dataset.pool = cells.pool;
      tr.dataset.open = String(Boolean(row.open));
      return tr;
    }));
    table.classList.toggle("gobpm-empty", list.length === 0);
  };
  show();
  offs.push(watch(model, "pools", show));
  return h("div", { class: "gobpm-population-pools" }, [table]);
}

export function renderPopulationView(model, root) {
  const offs = [];
  const pane = new ProcessPane({ role: "heat", maxHeight: 460 });
  const legend = h("div", { class: "gobpm-legend", "data-role": "legend" });
  root.append(h("div", { class: "gobpm-population", "data-role": "population" }, [
    header(model, offs),
    h("div", { class: "gobpm-population-status" }, [counters(model, offs), pools(model, offs)]),
    pane.el,
    legend,
  ]));
  const showDiagram = () =>
    pane.update({ bpmn: trait(model, "bpmn", ""), marks: trait(model, "marks", {}), dot: trait(model, "dot", "") });
  const showLegend = () => drawLegend(legend, trait(model, "legend", []));
  showDiagram();
  showLegend();
  offs.push(watch(model, ["bpmn", "marks", "dot"], showDiagram), watch(model, "legend", showLegend));
  return () => {
    for (const off of offs) off();
    pane.destroy();
  };
}
