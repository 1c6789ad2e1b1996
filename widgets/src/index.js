// The shared module of gobpm_nb's widgets (gobpm_nb/static/shared.js): the views, chosen by
// the `view` trait, with WebAssembly Graphviz and bpmn.io's viewer. It reaches the page once
// and every widget's small loader (loader.js) hands it the widget to draw.
import { BPMN_STYLE } from "./bpmnStyle.js";
import { h, trait, watch } from "./dom.js";
import { renderDashboard } from "./dashboard.js";
import { renderGraphView } from "./graphView.js";
import { renderPopulationView } from "./populationView.js";
import { CSS } from "./style.js";

const VIEWS = {
  graph: renderGraphView,
  population: renderPopulationView,
  // a branch's dashboard is drawn inside its parent's, as a view of its own model
  dashboard: (model, body) => renderDashboard(model, body, (child, el) => render({ model: child, el })),
};

function errorBar(model) {
  const text = h("span", { class: "gobpm-error-text", "data-role": "error-text" });
  const dismiss = h("button", { type: "button", title: "dismiss", "data-action": "dismiss-error", "aria-label": "dismiss error" }, ["×"]);
  const bar = h("div", { class: "gobpm-error-bar", "data-role": "error", role: "alert" }, [text, dismiss]);
  const show = () => {
    const message = trait(model, "error", "");
    text.textContent = typeof message === "string" ? message : String(message);
    bar.hidden = !text.textContent;
  };
  dismiss.addEventListener("click", () => {
    model.set("error", "");
    try {
      model.save_changes();
    } catch {
      // no kernel behind the model: dismissed in this page only
    }
  });
  show();
  return [bar, watch(model, "error", show)];
}

const STYLE_ID = "gobpm-nb-bpmn-style";

/** bpmn.io's style sheets and the marks' look, once per document (they are large). */
function addPageStyle() {
  if (document.getElementById(STYLE_ID)) return;
  const style = h("style", { id: STYLE_ID }, [BPMN_STYLE]);
  document.head.append(style);
}

/** Draw one view of the model into el (what the loader calls); returns the cleanup. */
function render({ model, el }) {
  addPageStyle();
  const root = h("div", { class: "gobpm-root" });
  el.replaceChildren(h("style", {}, [CSS]), root);
  let cleanup = () => {};

  const draw = () => {
    cleanup();
    root.replaceChildren();
    const view = trait(model, "view", "graph");
    root.dataset.view = view;
    const [bar, offError] = errorBar(model);
    root.append(bar);
    const body = h("div", { class: "gobpm-body" });
    root.append(body);
    const renderView = VIEWS[view];
    let offView = () => {};
    if (renderView) offView = renderView(model, body);
    else body.append(h("div", { class: "gobpm-graph-message", text: `unknown view ${JSON.stringify(view)}` }));
    cleanup = () => {
      offError();
      offView();
    };
  };

  draw();
  const offView = watch(model, "view", draw);
  return () => {
    offView();
    cleanup();
    el.replaceChildren();
  };
}

export default { render };
