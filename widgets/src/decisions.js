// The dashboard's decisions row: for the selected instance, each decision waiting for a person
// (a track at a decision gateway, `decisions.rows`) with one button per outgoing flow, labelled
// by the flow's name or "→ <target>". A button sends {kind: "decide", instance, flow, track},
// the command a click on the flow in the BPMN diagram sends too (Python calls eng.decide). The
// row shows only while some decision waits in the engine (`decisions.total`); it says how many
// wait elsewhere. Ad-hoc subprocesses waiting for a person get a button per activatable
// element (`activate`). Frozen, its buttons are disabled with the other controls.
import { asText, h, trait, watch } from "./dom.js";

function decision(row, send) {
  const flows = Array.isArray(row.flows) ? row.flows.filter((f) => f && typeof f === "object") : [];
  const buttons = flows.map((f) =>
    h("button", {
      type: "button",
      class: "gobpm-button gobpm-decide",
      "data-action": "decide",
      "data-flow": asText(f.flow),
      title: `take flow ${asText(f.flow)} to ${asText(f.target)}: eng.decide(${JSON.stringify(asText(row.instance))}, ${JSON.stringify(asText(f.flow))})`,
      onclick: () => send({ kind: "decide", instance: row.instance, flow: f.flow, track: row.track }),
    }, [asText(f.label)]),
  );
  const where = h("span", { class: "gobpm-decision-where", text: `? ${asText(row.label)}` });
  where.title = `track ${asText(row.track)} waits at decision ${asText(row.gateway)} of instance ${asText(row.instance)}`;
  const item = h("span", { class: "gobpm-decision", "data-role": "decision" }, [where, ...buttons]);
  item.dataset.gateway = asText(row.gateway);
  item.dataset.track = asText(row.track);
  return item;
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
  const show = () => {
    const value = trait(model, "decisions", {});
    const info = value && typeof value === "object" ? value : {};
    const rows = Array.isArray(info.rows) ? info.rows.filter((r) => r && typeof r === "object") : [];
    const adhocs = Array.isArray(info.activations) ? info.activations.filter((r) => r && typeof r === "object") : [];
    const total = Number(info.total) || 0;
    list.replaceChildren(...rows.map((r) => decision(r, send)), ...adhocs.map((r) => activation(r, send)));
    const shown = rows.length + adhocs.length;
    const elsewhere = total - shown;
    note.textContent = elsewhere > 0
      ? `${shown ? "+ " : ""}${elsewhere} waiting in ${elsewhere === 1 ? "another instance" : "other instances"}`
      : "";
    row.hidden = total === 0 && shown === 0;
  };
  show();
  offs.push(watch(model, "decisions", show));
  return row;
}
