// view == "dashboard": controls, clock, counters, forms, holder table, fact timeline and the
// lineage and process graphs of the selected instance. Every control talks to Python with
// model.send({kind, ...}); the Python side dispatches on `kind`.
import { asText, fillSelect, h, trait, watch } from "./dom.js";
import { GraphPane } from "./graph.js";

const SPEEDS = [
  [60, "60× (1 min/s)"],
  [3600, "3600× (1 h/s)"],
  [86400, "86400× (1 day/s)"],
];
const ALL = "\u0000all"; // filter value no id can take
const MAX_FACT_ROWS = 500;
const HOLD_COLUMNS = ["instance", "track", "kind", "wait_kind", "node", "deadline", "keys"];
const FACT_COLUMNS = ["seq", "at", "kind", "instance", "track", "node", "details"];

function button(action, label, onclick, extra = {}) {
  return h(
    "button",
    { type: "button", class: `gobpm-button gobpm-${action}`, "data-action": action, onclick, ...extra },
    [label],
  );
}

function field(label, control) {
  return h("label", { class: "gobpm-field" }, [h("span", { class: "gobpm-field-label", text: label }), control]);
}

/** Parse JSON text that must be an object; returns [value, null] or [null, message]. */
export function parseObject(text, what) {
  const source = text.trim() === "" ? "{}" : text;
  let value;
  try {
    value = JSON.parse(source);
  } catch (error) {
    return [null, `${what} is not valid JSON: ${error.message}`];
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return [null, `${what} must be a JSON object, like {"amount": 120}`];
  }
  return [value, null];
}

function controls(model, offs) {
  const send = (message) => model.send(message);
  const duration = h("input", {
    type: "text",
    class: "gobpm-input gobpm-duration",
    "data-role": "advance-duration",
    value: "PT1H",
    size: "8",
    spellcheck: "false",
    "aria-label": "duration to advance (ISO 8601)",
  });
  const advance = () => send({ kind: "advance", duration: duration.value.trim() || "PT1H" });
  duration.addEventListener("keydown", (event) => {
    if (event.key === "Enter") advance();
  });
  const speed = h(
    "select",
    { class: "gobpm-select gobpm-speed", "data-role": "speed", "aria-label": "virtual seconds per wall second" },
    SPEEDS.map(([value, label]) => h("option", { value: String(value), text: label })),
  );
  speed.value = "3600";

  let playing = Boolean(trait(model, "playing", false));
  const play = button("play-toggle", "", () => {
    playing = !playing;
    send(playing ? { kind: "play", speed: Number(speed.value) } : { kind: "pause" });
    showPlaying();
  });
  const showPlaying = () => {
    play.textContent = playing ? "❚❚ Pause" : "▶ Play";
    play.setAttribute("aria-pressed", String(playing));
    play.dataset.state = playing ? "playing" : "paused";
  };
  speed.addEventListener("change", () => {
    if (playing) send({ kind: "play", speed: Number(speed.value) });
  });
  offs.push(
    watch(model, "playing", () => {
      playing = Boolean(trait(model, "playing", false));
      showPlaying();
    }),
  );
  showPlaying();

  return h("div", { class: "gobpm-controls", "data-role": "controls" }, [
    button("step", "Step", () => send({ kind: "step" })),
    button("run", "Run", () => send({ kind: "run" })),
    h("span", { class: "gobpm-group" }, [button("advance", "Advance", advance), duration]),
    h("span", { class: "gobpm-group" }, [play, speed]),
  ]);
}

function clockAndCounters(model, offs) {
  const clock = h("span", { class: "gobpm-clock-value", "data-role": "clock" });
  const counters = h("div", { class: "gobpm-counters", "data-role": "counters" });
  const showClock = () => {
    clock.textContent = asText(trait(model, "clock", ""));
  };
  const showCounters = () => {
    const value = trait(model, "counters", {});
    const entries = value && typeof value === "object" ? Object.entries(value) : [];
    counters.replaceChildren(
      ...entries.map(([name, count]) => {
        const chip = h("span", { class: "gobpm-counter" }, [
          h("span", { class: "gobpm-counter-value", text: count }),
          h("span", { class: "gobpm-counter-label", text: name }),
        ]);
        chip.dataset.name = name;
        return chip;
      }),
    );
  };
  showClock();
  showCounters();
  offs.push(watch(model, "clock", showClock), watch(model, "counters", showCounters));
  return [h("div", { class: "gobpm-clock" }, [h("span", { class: "gobpm-muted", text: "virtual time" }), clock]), counters];
}

function publishForm(model) {
  const name = h("input", { type: "text", class: "gobpm-input", "data-role": "publish-name", placeholder: "paid" });
  const key = h("input", { type: "text", class: "gobpm-input", "data-role": "publish-key", placeholder: "order-7" });
  const payload = h("textarea", { class: "gobpm-input gobpm-json", "data-role": "publish-payload", rows: "2", spellcheck: "false" }, ["{}"]);
  const error = h("div", { class: "gobpm-form-error", "data-role": "publish-error", hidden: true });
  const submit = () => {
    const [value, problem] = parseObject(payload.value, "payload");
    const message = name.value.trim();
    const fail = problem || (message ? null : "message name is required");
    error.textContent = fail || "";
    error.hidden = !fail;
    if (fail) return;
    model.send({ kind: "publish", name: message, key: key.value.trim(), payload: value });
  };
  return h("form", { class: "gobpm-form gobpm-publish", "data-role": "publish-form", onsubmit: (e) => { e.preventDefault(); submit(); } }, [
    h("div", { class: "gobpm-form-title", text: "Publish message" }),
    h("div", { class: "gobpm-row" }, [field("name", name), field("key", key)]),
    field("payload (JSON)", payload),
    h("div", { class: "gobpm-row" }, [button("publish", "Publish", submit), error]),
  ]);
}

function completeForm(model, offs) {
  const task = h("select", { class: "gobpm-select gobpm-task", "data-role": "complete-task" });
  const outputs = h("textarea", { class: "gobpm-input gobpm-json", "data-role": "complete-outputs", rows: "2", spellcheck: "false" }, ["{}"]);
  const error = h("div", { class: "gobpm-form-error", "data-role": "complete-error", hidden: true });
  let ids = new Map();
  const showTasks = () => {
    const tasks = trait(model, "tasks", []);
    ids = new Map();
    const pairs = [];
    for (const row of Array.isArray(tasks) ? tasks : []) {
      if (!row || typeof row !== "object") continue;
      ids.set(String(row.id), row.id);
      const who = row.assignee ? ` · ${asText(row.assignee)}` : "";
      pairs.push([row.id, `${asText(row.id)} · ${asText(row.instance)} · ${asText(row.node)}${who}`]);
    }
    if (pairs.length === 0) pairs.push(["", "no open tasks"]);
    fillSelect(task, pairs);
    task.disabled = ids.size === 0;
  };
  const submit = () => {
    const [value, problem] = parseObject(outputs.value, "outputs");
    const fail = problem || (ids.has(task.value) ? null : "choose a task");
    error.textContent = fail || "";
    error.hidden = !fail;
    if (fail) return;
    model.send({ kind: "complete", task: ids.get(task.value), outputs: value });
  };
  showTasks();
  offs.push(watch(model, "tasks", showTasks));
  return h("form", { class: "gobpm-form gobpm-complete", "data-role": "complete-form", onsubmit: (e) => { e.preventDefault(); submit(); } }, [
    h("div", { class: "gobpm-form-title", text: "Complete task" }),
    field("task", task),
    field("outputs (JSON)", outputs),
    h("div", { class: "gobpm-row" }, [button("complete", "Complete", submit), error]),
  ]);
}

function table(className, role, columns) {
  const body = h("tbody");
  const element = h("table", { class: `gobpm-table ${className}`, "data-role": role }, [
    h("thead", {}, [h("tr", {}, columns.map((name) => h("th", { class: `gobpm-col-${name}`, text: name.replace("_", " ") })))]),
    body,
  ]);
  return [element, body];
}

function rowsOf(rows, columns) {
  return rows.map((row) => {
    const tr = h("tr", {}, columns.map((name) => h("td", { class: `gobpm-col-${name}`, text: row[name] })));
    if (row.kind !== undefined) tr.dataset.kind = asText(row.kind);
    return tr;
  });
}

function holdsTable(model, offs) {
  const [element, body] = table("gobpm-holds", "holds", HOLD_COLUMNS);
  const count = h("span", { class: "gobpm-muted", "data-role": "holds-count" });
  const show = () => {
    const holds = trait(model, "holds", []).filter((row) => row && typeof row === "object");
    body.replaceChildren(...rowsOf(holds, HOLD_COLUMNS));
    count.textContent = `${holds.length}`;
    element.classList.toggle("gobpm-empty", holds.length === 0);
  };
  show();
  offs.push(watch(model, "holds", show));
  return h("section", { class: "gobpm-section" }, [
    h("div", { class: "gobpm-section-title" }, ["Holders ", count]),
    h("div", { class: "gobpm-scroll gobpm-holds-scroll" }, [element]),
  ]);
}

function factTimeline(model, offs) {
  const [element, body] = table("gobpm-facts", "facts", FACT_COLUMNS);
  const byInstance = h("select", { class: "gobpm-select", "data-role": "fact-filter-instance", "aria-label": "filter facts by instance" });
  const byKind = h("select", { class: "gobpm-select", "data-role": "fact-filter-kind", "aria-label": "filter facts by kind" });
  const note = h("span", { class: "gobpm-muted", "data-role": "facts-count" });
  const scroller = h("div", { class: "gobpm-scroll gobpm-facts-scroll", "data-role": "facts-scroll" }, [element]);

  const distinct = (values) => {
    const seen = new Set();
    const out = [];
    for (const value of values) {
      if (value === null || value === undefined || value === "") continue;
      const text = String(value);
      if (!seen.has(text)) {
        seen.add(text);
        out.push(text);
      }
    }
    return out;
  };

  const show = () => {
    const facts = trait(model, "facts", []).filter((row) => row && typeof row === "object");
    const instances = distinct([...trait(model, "instances", []), ...facts.map((f) => f.instance)]);
    const kinds = distinct(facts.map((f) => f.kind)).sort();
    const instance = fillSelect(byInstance, [[ALL, "all instances"], ...instances.map((i) => [i, i])]);
    const kind = fillSelect(byKind, [[ALL, "all kinds"], ...kinds.map((k) => [k, k])]);
    const shown = facts.filter(
      (f) => (instance === ALL || String(f.instance) === instance) && (kind === ALL || String(f.kind) === kind),
    );
    const tail = shown.slice(-MAX_FACT_ROWS);
    const stick = scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 24;
    body.replaceChildren(...rowsOf(tail, FACT_COLUMNS));
    element.classList.toggle("gobpm-empty", tail.length === 0);
    note.textContent =
      shown.length > tail.length
        ? `newest ${tail.length} of ${shown.length}`
        : shown.length === facts.length
          ? `${facts.length}`
          : `${shown.length} of ${facts.length}`;
    if (stick) scroller.scrollTop = scroller.scrollHeight;
  };
  byInstance.addEventListener("change", () => {
    show();
    scroller.scrollTop = scroller.scrollHeight;
  });
  byKind.addEventListener("change", () => {
    show();
    scroller.scrollTop = scroller.scrollHeight;
  });
  show();
  offs.push(watch(model, ["facts", "instances"], show));
  // scroll to the newest fact once the table is laid out
  requestAnimationFrame(() => {
    scroller.scrollTop = scroller.scrollHeight;
  });
  return h("section", { class: "gobpm-section" }, [
    h("div", { class: "gobpm-section-title gobpm-row" }, [
      h("span", {}, ["Facts ", note]),
      h("span", { class: "gobpm-filters" }, [byInstance, byKind]),
    ]),
    scroller,
  ]);
}

function instancePicker(model, offs) {
  const picker = h("select", { class: "gobpm-select", "data-role": "instance-select", "data-action": "select", "aria-label": "instance" });
  let ids = new Map();
  const show = () => {
    const instances = trait(model, "instances", []);
    const selected = trait(model, "selected", "");
    ids = new Map();
    const pairs = [];
    for (const id of Array.isArray(instances) ? instances : []) {
      ids.set(String(id), id);
      pairs.push([id, id]);
    }
    if (!ids.has(String(selected))) pairs.unshift(["", instances.length ? "choose an instance" : "no instances"]);
    fillSelect(picker, pairs, selected);
    picker.disabled = ids.size === 0;
  };
  picker.addEventListener("change", () => {
    if (!ids.has(picker.value)) return;
    const instance = ids.get(picker.value);
    model.set("selected", instance);
    model.save_changes();
    model.send({ kind: "select", instance });
  });
  show();
  offs.push(watch(model, ["instances", "selected"], show));
  return h("div", { class: "gobpm-row gobpm-instance" }, [h("span", { class: "gobpm-section-title", text: "Instance" }), picker]);
}

function graphs(model, offs) {
  const lineage = new GraphPane({ role: "lineage", title: "Lineage" });
  const process = new GraphPane({ role: "process", title: "Process" });
  const showLineage = () => lineage.update(trait(model, "lineage_dot", ""));
  const showProcess = () => process.update(trait(model, "process_dot", ""));
  showLineage();
  showProcess();
  offs.push(
    watch(model, "lineage_dot", showLineage),
    watch(model, "process_dot", showProcess),
    () => lineage.destroy(),
    () => process.destroy(),
  );
  return h("div", { class: "gobpm-graphs" }, [lineage.el, process.el]);
}

export function renderDashboard(model, root) {
  const offs = [];
  const [clock, counters] = clockAndCounters(model, offs);
  root.append(
    h("div", { class: "gobpm-dashboard" }, [
      h("div", { class: "gobpm-header" }, [controls(model, offs), clock]),
      counters,
      instancePicker(model, offs),
      graphs(model, offs),
      h("div", { class: "gobpm-forms" }, [publishForm(model), completeForm(model, offs)]),
      holdsTable(model, offs),
      factTimeline(model, offs),
    ]),
  );
  return () => {
    for (const off of offs) off();
  };
}
