// The dashboard's decisions row: for the selected instance, each decision waiting for a person
// (a track at a decision gateway, `decisions.rows`) with one button per outgoing flow, labelled
// by the flow's name or "→ <target>". At an exclusive gateway's decision a button sends
// {kind: "decide", instance, flow, track}, the command a click on the flow in the BPMN diagram
// sends too (Python calls eng.decide). At an inclusive gateway's (`several`) the buttons, and
// the flows on the diagram (`toggleChoice`), toggle flows on and off, and a "take" button
// sends the flows toggled on, `flow` a list of their ids in the gateway's order. Ad-hoc
// subprocesses waiting for a person (`decisions.activations`) get a button per activatable
// element (`activate`). The row shows only while some decision or activation waits in the
// engine (`decisions.total`); it says how many wait elsewhere. Frozen, its buttons are
// disabled with the other controls.
import { asText, h, trait, watch } from "./dom.js";

const TOGGLE = "gobpm-toggle-choice";

function call(row, flows) {
  const flow = Array.isArray(flows) ? `[${flows.map((f) => JSON.stringify(asText(f))).join(", ")}]` : JSON.stringify(asText(flows));
  return `eng.decide(${JSON.stringify(asText(row.instance))}, ${flow})`;
}

function oneOf(row, flows, send) {
  return flows.map((f) =>
    h("button", {
      type: "button",
      class: "gobpm-button gobpm-decide",
      "data-action": "decide",
      "data-flow": asText(f.flow),
      title: `take flow ${asText(f.flow)} to ${asText(f.target)}: ${call(row, f.flow)}`,
      onclick: () => send({ kind: "decide", instance: row.instance, flow: f.flow, track: row.track }),
    }, [asText(f.label)]),
  );
}

// An inclusive gateway's decision: flows toggled on (`picked`, kept across redraws while the
// decision waits) and the button that takes them.
function severalOf(row, flows, picked, send) {
  const take = h("button", { type: "button", class: "gobpm-button gobpm-decide gobpm-take", "data-action": "decide-take" });
  const chosen = () => flows.map((f) => f.flow).filter((f) => picked.has(f));
  const buttons = flows.map((f) => {
    const button = h("button", {
      type: "button",
      class: "gobpm-button gobpm-decide gobpm-pick",
      "data-action": "decide-pick",
      "data-flow": asText(f.flow),
      title: `flow ${asText(f.flow)} to ${asText(f.target)}: click to take it or not (one or more)`,
      onclick: () => toggle(f.flow),
    }, [asText(f.label)]);
    return button;
  });
  const show = () => {
    const on = chosen();
    buttons.forEach((b, i) => b.setAttribute("aria-pressed", String(picked.has(flows[i].flow))));
    take.textContent = on.length === 1 ? "take 1 flow" : `take ${on.length} flows`;
    take.disabled = on.length === 0;
    take.title = on.length ? `take ${on.join(", ")}: ${call(row, on)}` : "toggle one or more flows first";
  };
  const toggle = (flow) => {
    if (!flows.some((f) => f.flow === flow)) return;
    if (picked.has(flow)) picked.delete(flow);
    else picked.add(flow);
    show();
  };
  take.addEventListener("click", () => {
    const on = chosen();
    if (on.length) send({ kind: "decide", instance: row.instance, flow: on, track: row.track });
  });
  show();
  return { nodes: [...buttons, take], toggle, refresh: show };
}

function decision(row, send, picks) {
  const flows = Array.isArray(row.flows) ? row.flows.filter((f) => f && typeof f === "object") : [];
  const where = h("span", { class: "gobpm-decision-where", text: `? ${asText(row.label)}` });
  const several = row.several === true;
  where.title = `track ${asText(row.track)} waits at decision ${asText(row.gateway)} of instance ${asText(row.instance)}` +
    (several ? ": take one or more of its flows" : "");
  let nodes;
  let toggle = null;
  if (several) {
    const key = `${asText(row.instance)} ${asText(row.track)}`;
    if (!picks.has(key)) picks.set(key, new Set());
    const made = severalOf(row, flows, picks.get(key), send);
    nodes = made.nodes;
    toggle = made.toggle;
  } else {
    nodes = oneOf(row, flows, send);
  }
  const item = h("span", { class: "gobpm-decision", "data-role": "decision" }, [where, ...nodes]);
  item.dataset.gateway = asText(row.gateway);
  item.dataset.track = asText(row.track);
  item.dataset.several = String(several);
  return { item, toggle, key: `${asText(row.instance)} ${asText(row.track)}` };
}

/**
 * A click on a flow of an inclusive gateway's decision on the diagram: toggle it in `row` (the
 * element decisionsRow returned). `decide`: the choice's {instance, track, flow}.
 */
export function toggleChoice(row, decide) {
  row.dispatchEvent(new CustomEvent(TOGGLE, { detail: decide }));
}

/** Whether the selected instance's decision on `track` takes several flows. */
export function takesSeveral(model, instance, track) {
  const info = trait(model, "decisions", {});
  const rows = info && Array.isArray(info.rows) ? info.rows : [];
  return rows.some((r) => r && r.instance === instance && r.track === track && r.several === true);
}

// An ad-hoc subprocess waiting for a person (`decisions.activations`): one button per
// activatable element, sending {kind: "activate", instance, adhoc, element, track}.
function activation(row, send) {
  const elements = Array.isArray(row.elements) ? row.elements.filter((e) => e && typeof e === "object") : [];
  const buttons = elements.map((e) =>
    h("button", {
      type: "button",
      class: "gobpm-button gobpm-decide",
      "data-action": "activate",
      "data-element": asText(e.element),
      title: `run ${asText(e.element)} inside ${asText(row.adhoc)}: eng.activate(${JSON.stringify(asText(row.instance))}, ${JSON.stringify(asText(row.adhoc))}, ${JSON.stringify(asText(e.element))})`,
      onclick: () => send({ kind: "activate", instance: row.instance, adhoc: row.adhoc, element: e.element, track: row.track }),
    }, [asText(e.label)]),
  );
  const where = h("span", { class: "gobpm-decision-where", text: `~ ${asText(row.label)}` });
  where.title = `track ${asText(row.track)} runs ad-hoc subprocess ${asText(row.adhoc)} of instance ${asText(row.instance)}: activate an element`;
  const item = h("span", { class: "gobpm-decision", "data-role": "activation" }, [where, ...buttons]);
  item.dataset.adhoc = asText(row.adhoc);
  item.dataset.track = asText(row.track);
  return item;
}

export function decisionsRow(model, offs, locked, send) {
  const list = h("span", { class: "gobpm-decision-list", "data-role": "decision-list" });
  const note = h("span", { class: "gobpm-muted", "data-role": "decisions-note" });
  const row = locked(model, offs, { class: "gobpm-row gobpm-decisions", "data-role": "decisions" }, [
    h("span", { class: "gobpm-section-title", text: "Decide" }),
    list,
    note,
  ]);
  const picks = new Map(); // "instance track" -> the flows toggled on, while it waits
  let toggles = new Map();
  const show = () => {
    const value = trait(model, "decisions", {});
    const info = value && typeof value === "object" ? value : {};
    const rows = Array.isArray(info.rows) ? info.rows.filter((r) => r && typeof r === "object") : [];
    const adhocs = Array.isArray(info.activations) ? info.activations.filter((r) => r && typeof r === "object") : [];
    const total = Number(info.total) || 0;
    const made = rows.map((r) => decision(r, send, picks));
    toggles = new Map(made.filter((m) => m.toggle).map((m) => [m.key, m.toggle]));
    for (const key of [...picks.keys()]) if (!toggles.has(key)) picks.delete(key);
    list.replaceChildren(...made.map((m) => m.item), ...adhocs.map((r) => activation(r, send)));
    const shown = rows.length + adhocs.length;
    const elsewhere = total - shown;
    note.textContent = elsewhere > 0
      ? `${shown ? "+ " : ""}${elsewhere} waiting in ${elsewhere === 1 ? "another instance" : "other instances"}`
      : "";
    row.hidden = total === 0 && shown === 0;
  };
  const onToggle = (event) => {
    const d = event.detail || {};
    const toggle = toggles.get(`${asText(d.instance)} ${asText(d.track)}`);
    if (toggle) toggle(d.flow);
  };
  row.addEventListener(TOGGLE, onToggle);
  show();
  offs.push(watch(model, "decisions", show), () => row.removeEventListener(TOGGLE, onToggle));
  return row;
}
