// view == "dashboard": controls, the last-step line, clock, counters, forms, the holder table,
// the fact table and the lineage and process graphs of the selected instance. Every control
// talks to Python with model.send({kind, ...}); the Python side dispatches on `kind`. The fact
// table holds one page: the browser asks for pages and filters, Python reads the kept log.
// The header says "live" with "freeze here"; frozen ("at fact N · clock", "follow live"),
// every control that sends a command is disabled: the picture no longer follows the engine.
import { FACT_COLUMNS, HOLD_COLUMNS, HORIZON_HELP } from "./contract.js";
import { asText, fillSelect, h, trait, watch } from "./dom.js";
import { GraphPane } from "./graph.js";
import { decisionsRow, takesSeveral, toggleChoice } from "./decisions.js";
import { isFrozen, momentLine } from "./moment.js";
import { ProcessPane } from "./processPane.js";

const SPEEDS = [
  [60, "60× (1 min/s)"],
  [3600, "3600× (1 h/s)"],
  [86400, "86400× (1 day/s)"],
];
const ALL = "\u0000all"; // filter value no id can take
// The height (px) of the process canvas and of the lineage tab: what a 1280x800 screen leaves
// them beside the other rows (the history slider's and the forms' rows included).
const PROCESS_HEIGHT = 350;
// No label, badge or lineage text of the dashboard is drawn smaller than this (px on screen).
const READABLE_PX = 11;
const LAST_STEP_HINT = "Step runs one event · Run goes to the next quiet point, or to the horizon typed next to it · Advance moves the clock";
const FROZEN_HINT = "follow live to use the controls";
const NO_KERNEL =
  "This dashboard has no live kernel behind it any more (the kernel was restarted or shut down, " +
  "or the notebook was opened from a file): its controls cannot reach the engine. Run the cell that made it again.";

/**
 * Send a command to Python; true when it went. A model whose kernel is gone throws: the
 * dashboard then says so in its error bar (set in this page only) instead of doing nothing.
 */
export function sendTo(model, message, change = null) {
  try {
    if (change) {
      for (const [name, value] of Object.entries(change)) model.set(name, value);
      model.save_changes();
    }
    // the bar shows what the newest command did: an earlier error (also one set in this page
    // only, which Python's "" would not overwrite) goes; Python sets the new one if it fails
    if (model.get("error")) model.set("error", "");
    model.send(message);
    return true;
  } catch (error) {
    const why = (error && error.message) || String(error);
    model.set("error", `${NO_KERNEL} (${why})`);
    return false;
  }
}

/**
 * A group of controls (a <fieldset>) that is disabled while the dashboard is frozen: a
 * disabled fieldset disables every control in it, whatever each one's own state.
 */
function locked(model, offs, props, children) {
  const group = h("fieldset", { ...props, class: `${props.class} gobpm-lock` }, children);
  const show = () => {
    group.disabled = isFrozen(model);
  };
  show();
  offs.push(watch(model, ["moment", "live"], show));
  return group;
}

function button(action, label, onclick, extra = {}) {
  return h(
    "button",
    { type: "button", class: `gobpm-button gobpm-${action}`, "data-action": action, onclick, ...extra },
    [label],
  );
}

function field(label, control, extra = "") {
  return h("label", { class: `gobpm-field ${extra}`.trim() }, [h("span", { class: "gobpm-field-label", text: label }), control]);
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
  const send = (message) => sendTo(model, message);
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
    if (send(!playing ? { kind: "play", speed: Number(speed.value) } : { kind: "pause" })) playing = !playing;
    else playing = false; // no kernel: nothing plays
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

  const horizon = h("input", {
    type: "text",
    class: "gobpm-input gobpm-horizon",
    "data-role": "run-horizon",
    placeholder: "quiet point",
    size: "12",
    spellcheck: "false",
    title: HORIZON_HELP,
    "aria-label": HORIZON_HELP,
  });
  const run = () => send({ kind: "run", horizon: horizon.value.trim() });
  horizon.addEventListener("keydown", (event) => {
    if (event.key === "Enter") run();
  });

  return locked(model, offs, { class: "gobpm-controls", "data-role": "controls" }, [
    button("step", "Step", () => send({ kind: "step" }), { title: "run one scheduler event" }),
    h("span", { class: "gobpm-group" }, [button("run", "Run", run, { title: HORIZON_HELP }), horizon]),
    h("span", { class: "gobpm-group" }, [button("advance", "Advance", advance), duration]),
    h("span", { class: "gobpm-group" }, [play, speed]),
  ]);
}

function lastStep(model, offs) {
  const line = h("div", { class: "gobpm-last-step", "data-role": "last-step", "aria-live": "polite" });
  const show = () => {
    const text = asText(trait(model, "last_step", ""));
    const frozen = isFrozen(model);
    line.textContent = frozen ? `frozen ${asText(trait(model, "moment", ""))} — ${FROZEN_HINT}` : text || LAST_STEP_HINT;
    line.classList.toggle("gobpm-hint", !text && !frozen);
    line.dataset.frozen = String(frozen);
  };
  show();
  offs.push(watch(model, ["last_step", "moment", "live"], show));
  return line;
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

// The header's end: the moment shown ("live" with "freeze here") and the clock. Frozen, the
// moment names the fact and the clock ("at fact N · clock", "follow live") in the clock's place.
function headerEnd(model, offs, clock) {
  const [moment, offMoment] = momentLine(model);
  const show = () => {
    clock.hidden = isFrozen(model);
  };
  show();
  offs.push(offMoment, watch(model, ["moment", "live"], show));
  return h("div", { class: "gobpm-header-end" }, [moment, clock]);
}

/** "fact 12 of 40 · 2026-01-01T20:00:00Z · 28 facts can be replayed" */
export function timelineNote(info, value) {
  const position = Number(info.position) || 0;
  const end = Number(info.end) || 0;
  if (value !== position) return `rewind to fact ${value} of ${end} (release to go there)`;
  let text = `fact ${position} of ${end}`;
  if (info.at) text += ` · ${asText(info.at)}`;
  const pending = Number(info.pending) || 0;
  if (pending > 0) text += ` · ${pending} facts after it can be replayed`;
  return text;
}

// The history slider: drag and release to rewind (Python calls eng.rewind(N)), "reset" goes
// back to the newest point (eng.replay()), "branch here" asks for a branch's dashboard.
function timeline(model, offs) {
  const slider = h("input", { type: "range", class: "gobpm-timeline-slider", "data-role": "timeline-slider", min: "0", max: "0", step: "1", "aria-label": "rewind to fact" });
  const note = h("span", { class: "gobpm-muted gobpm-timeline-note", "data-role": "timeline-note" });
  const reset = button("replay", "reset", () => sendTo(model, { kind: "replay" }), { title: "replay everything the rewind went back over: back to the newest point" });
  const branch = button("branch", "branch here", () => sendTo(model, { kind: "branch" }), { title: "a second engine from this point, with its own dashboard below" });
  let info = {};
  const show = () => {
    const value = trait(model, "timeline", {});
    info = value && typeof value === "object" ? value : {};
    slider.min = String(Number(info.start) || 0);
    slider.max = String(Number(info.end) || 0);
    slider.value = String(Number(info.position) || 0);
    slider.disabled = !info.movable || Number(info.end) === Number(info.start);
    reset.disabled = !info.movable || !(Number(info.pending) > 0);
    note.textContent = info.note ? asText(info.note) : timelineNote(info, Number(slider.value));
  };
  slider.addEventListener("input", () => {
    note.textContent = timelineNote(info, Number(slider.value));
  });
  slider.addEventListener("change", () => {
    const to = Number(slider.value);
    if (to !== Number(info.position)) sendTo(model, { kind: "rewind", to });
  });
  show();
  // a refused rewind leaves the engine where it was: put the slider back
  offs.push(watch(model, ["timeline", "error"], show));
  return locked(model, offs, { class: "gobpm-row gobpm-timeline", "data-role": "timeline" }, [
    h("span", { class: "gobpm-section-title", text: "History" }),
    slider,
    reset,
    branch,
    note,
  ]);
}

// The dashboard of the last branch made with "branch here", drawn below this one.
function branchPane(model, offs, renderChild) {
  const pane = h("div", { class: "gobpm-branch", "data-role": "branch", hidden: true });
  let stop = () => {};
  let shown = null;
  const show = async () => {
    const ref = trait(model, "branch", null);
    if (ref === shown) return;
    shown = ref;
    stop();
    stop = () => {};
    pane.replaceChildren();
    pane.hidden = true;
    if (typeof ref !== "string" || !ref.startsWith("IPY_MODEL_") || !renderChild) return;
    let child = null;
    try {
      child = await model.widget_manager.get_model(ref.slice("IPY_MODEL_".length));
    } catch {
      child = null;
    }
    if (!child || shown !== ref) return;
    const body = h("div", { class: "gobpm-branch-body" });
    pane.replaceChildren(h("div", { class: "gobpm-section-title", text: "Branch" }), body);
    pane.hidden = false;
    stop = renderChild(child, body) || (() => {});
  };
  show();
  offs.push(watch(model, "branch", show), () => stop());
  return pane;
}

function publishForm(model, offs) {
  const name = h("input", { type: "text", class: "gobpm-input", "data-role": "publish-name", placeholder: "paid" });
  const key = h("input", { type: "text", class: "gobpm-input", "data-role": "publish-key", placeholder: "order-7" });
  const payload = h("textarea", { class: "gobpm-input gobpm-json", "data-role": "publish-payload", rows: "1", spellcheck: "false" }, ["{}"]);
  const error = h("div", { class: "gobpm-form-error", "data-role": "publish-error", hidden: true });
  // what became of the last message: Python says whether it reached an instance or nobody
  const notice = h("div", { class: "gobpm-notice", "data-role": "publish-notice", role: "status", hidden: true });
  const showNotice = () => {
    const value = trait(model, "publish_notice", {});
    const text = value && typeof value === "object" ? asText(value.text) : "";
    notice.textContent = text;
    notice.dataset.level = value && value.level === "ok" ? "ok" : "warning";
    notice.hidden = !text;
  };
  showNotice();
  offs.push(watch(model, "publish_notice", showNotice), watch(model, "last_step", () => { error.hidden = true; }));
  const submit = () => {
    const [value, problem] = parseObject(payload.value, "payload");
    const message = name.value.trim();
    const fail = problem || (message ? null : "message name is required");
    error.textContent = fail || "";
    error.hidden = !fail;
    if (fail) return;
    sendTo(model, { kind: "publish", name: message, key: key.value.trim(), payload: value });
  };
  return h("form", { class: "gobpm-form gobpm-publish", "data-role": "publish-form", onsubmit: (e) => { e.preventDefault(); submit(); } }, [
    h("div", { class: "gobpm-form-fields" }, [
      field("name", name),
      field("key", key),
      field("payload (JSON)", payload, "gobpm-wide-field"),
      button("publish", "Publish message", submit),
    ]),
    error,
    notice,
  ]);
}

function completeForm(model, offs) {
  const task = h("select", { class: "gobpm-select gobpm-task", "data-role": "complete-task" });
  const outputs = h("textarea", { class: "gobpm-input gobpm-json", "data-role": "complete-outputs", rows: "1", spellcheck: "false" }, ["{}"]);
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
    sendTo(model, { kind: "complete", task: ids.get(task.value), outputs: value });
  };
  showTasks();
  offs.push(watch(model, "tasks", showTasks), watch(model, "last_step", () => { error.hidden = true; }));
  return h("form", { class: "gobpm-form gobpm-complete", "data-role": "complete-form", onsubmit: (e) => { e.preventDefault(); submit(); } }, [
    h("div", { class: "gobpm-form-fields" }, [
      field("task", task, "gobpm-wide-field"),
      field("outputs (JSON)", outputs, "gobpm-wide-field"),
      button("complete", "Complete task", submit),
    ]),
    error,
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

/** A table that folds away: <details> with a summary line; open or closed by the user. */
function collapsible(role, title, count, contents, open = false) {
  return h("details", { class: "gobpm-section gobpm-collapsible", "data-role": `${role}-panel`, open }, [
    h("summary", { class: "gobpm-section-title" }, [`${title} `, count]),
    h("div", { class: "gobpm-collapsible-body" }, contents),
  ]);
}

function holdsTable(model, offs) {
  const [element, body] = table("gobpm-holds", "holds", HOLD_COLUMNS);
  const count = h("span", { class: "gobpm-muted", "data-role": "holds-count" });
  const show = () => {
    const holds = trait(model, "holds", []).filter((row) => row && typeof row === "object");
    const counters = trait(model, "counters", {});
    const total = Number.isInteger(counters.holds) ? Math.max(counters.holds, holds.length) : holds.length;
    body.replaceChildren(...rowsOf(holds, HOLD_COLUMNS));
    count.textContent = total > holds.length ? `${total} (the first ${holds.length} shown)` : `${total}`;
    element.classList.toggle("gobpm-empty", holds.length === 0);
  };
  show();
  offs.push(watch(model, ["holds", "counters"], show));
  return collapsible("holds", "Holders", count, [h("div", { class: "gobpm-scroll gobpm-holds-scroll" }, [element])]);
}

/** "1–100 of 1234 · newest", "101–200 of 850 matching (1234 kept) · page 2 of 9", ... */
export function factNote(info, shown) {
  const total = Number(info.total) || 0;
  const kept = Number(info.kept) || 0;
  const emitted = Number(info.emitted) || 0;
  const filtered = Boolean(info.instance || info.kind);
  if (total === 0) return filtered ? "no kept fact matches" : "no facts yet";
  const first = (Number(info.start) || 0) + 1;
  let text = `${first}–${first + shown - 1} of ${total}`;
  if (filtered) text += ` matching (${kept} kept)`;
  text += info.page === null || info.page === undefined ? " · newest" : ` · page ${info.page + 1} of ${info.pages}`;
  if (emitted > kept) text += ` · the log keeps the newest ${kept} of ${emitted} facts (keep_facts)`;
  return text;
}

function factTimeline(model, offs) {
  const [element, body] = table("gobpm-facts", "facts", FACT_COLUMNS);
  const byInstance = h("select", { class: "gobpm-select", "data-role": "fact-filter-instance", "aria-label": "filter facts by instance" });
  const byKind = h("select", { class: "gobpm-select", "data-role": "fact-filter-kind", "aria-label": "filter facts by kind" });
  const note = h("span", { class: "gobpm-muted", "data-role": "facts-count" });
  const count = h("span", { class: "gobpm-muted", "data-role": "facts-kept" });
  const scroller = h("div", { class: "gobpm-scroll gobpm-facts-scroll", "data-role": "facts-scroll" }, [element]);
  let info = {};

  // the browser only asks: Python filters the kept log and answers with one page
  const ask = (change) => {
    const query = { instance: info.instance || "", fact_kind: info.kind || "", page: info.page ?? null, ...change };
    sendTo(model, { kind: "facts", instance: query.instance, fact_kind: query.fact_kind, page: query.page });
  };
  const pager = {
    oldest: button("facts-oldest", "« oldest", () => ask({ page: 0 }), { title: "the first facts the log keeps" }),
    older: button("facts-older", "‹ older", () => ask({ page: info.older }), { title: "older facts" }),
    newer: button("facts-newer", "newer ›", () => ask({ page: info.newer ?? null }), { title: "newer facts" }),
    newest: button("facts-newest", "newest »", () => ask({ page: null }), { title: "the newest facts, following the log" }),
  };

  const showFilters = () => {
    const instances = [...trait(model, "instances", [])].map(String);
    if (info.instance && !instances.includes(String(info.instance))) instances.unshift(String(info.instance));
    const kinds = Array.isArray(info.kinds) ? info.kinds.map(String) : [];
    fillSelect(byInstance, [[ALL, "all instances"], ...instances.map((i) => [i, i])], info.instance || ALL);
    fillSelect(byKind, [[ALL, "all kinds"], ...kinds.map((k) => [k, k])], info.kind || ALL);
  };
  const show = () => {
    const page = trait(model, "fact_page", {});
    const previous = info;
    info = page && typeof page === "object" ? page : {};
    const facts = trait(model, "facts", []).filter((row) => row && typeof row === "object");
    showFilters();
    const following = info.page === null || info.page === undefined;
    const stick = scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 24;
    body.replaceChildren(...rowsOf(facts, FACT_COLUMNS));
    element.classList.toggle("gobpm-empty", facts.length === 0);
    note.textContent = factNote(info, facts.length);
    count.textContent = `${Number(info.kept) || 0}`;
    pager.oldest.disabled = !info.start;
    pager.older.disabled = info.older === null || info.older === undefined;
    pager.newer.disabled = following;
    pager.newest.disabled = following;
    const moved = previous.page !== info.page || previous.instance !== info.instance || previous.kind !== info.kind;
    if (following && (stick || moved)) scroller.scrollTop = scroller.scrollHeight;
    else if (moved) scroller.scrollTop = 0;
  };
  byInstance.addEventListener("change", () => ask({ instance: byInstance.value === ALL ? "" : byInstance.value, page: null }));
  byKind.addEventListener("change", () => ask({ fact_kind: byKind.value === ALL ? "" : byKind.value, page: null }));
  show();
  // a refused filter leaves the query as it was: show the filters in force again
  offs.push(watch(model, ["facts", "fact_page", "instances"], show), watch(model, "error", showFilters));
  requestAnimationFrame(() => {
    scroller.scrollTop = scroller.scrollHeight;
  });
  return collapsible("facts", "Facts", count, [
    locked(model, offs, { class: "gobpm-row gobpm-facts-bar" }, [
      h("span", { class: "gobpm-filters" }, [byInstance, byKind]),
      h("span", { class: "gobpm-pager" }, [pager.oldest, pager.older, pager.newer, pager.newest]),
      note,
    ]),
    scroller,
  ]);
}

/** The picker's choices: [id, label] of every row whose label holds `filter` (any case). */
export function pickerChoices(ids, rows, filter) {
  const labels = new Map();
  for (const row of Array.isArray(rows) ? rows : []) {
    if (row && typeof row === "object" && typeof row.id === "string") labels.set(row.id, asText(row.label || row.id));
  }
  const wanted = filter.trim().toLowerCase();
  return ids.map((id) => [id, labels.get(String(id)) || String(id)])
    .filter(([, label]) => !wanted || label.toLowerCase().includes(wanted));
}

// The instance picker: each instance labelled with its id (the business key given to start),
// process and state; the filter field keeps the choices whose label holds its text
// ("active", "SO-30", "dehydrated").
function instancePicker(model, offs) {
  const picker = h("select", { class: "gobpm-select gobpm-instance-select", "data-role": "instance-select", "data-action": "select", "aria-label": "instance" });
  const filter = h("input", { type: "search", class: "gobpm-input gobpm-instance-filter", "data-role": "instance-filter", placeholder: "filter: active, SO-30…", size: "14", "aria-label": "filter the instances by id, process or state" });
  const count = h("span", { class: "gobpm-muted", "data-role": "instance-count" });
  let ids = new Map();
  const show = () => {
    const instances = trait(model, "instances", []);
    const selected = trait(model, "selected", "");
    const all = Array.isArray(instances) ? instances.map(String) : [];
    const pairs = pickerChoices(all, trait(model, "instance_rows", []), filter.value);
    ids = new Map(pairs.map(([id]) => [id, id]));
    if (!ids.has(String(selected))) {
      const label = pickerChoices(all, trait(model, "instance_rows", []), "").find(([id]) => id === selected);
      if (label) pairs.unshift(label); // the shown instance stays in the list, filtered or not
      else pairs.unshift(["", all.length ? "choose an instance" : "no instances"]);
    }
    fillSelect(picker, pairs, selected);
    picker.disabled = all.length === 0;
    count.textContent = filter.value.trim() ? `${ids.size} of ${all.length}` : `${all.length}`;
  };
  picker.addEventListener("change", () => {
    if (!ids.has(picker.value) || picker.value === trait(model, "selected", "")) return;
    const instance = ids.get(picker.value);
    sendTo(model, { kind: "select", instance }, { selected: instance });
  });
  filter.addEventListener("input", show);
  show();
  offs.push(watch(model, ["instances", "instance_rows", "selected"], show));
  return locked(model, offs, { class: "gobpm-row gobpm-instance" }, [h("span", { class: "gobpm-section-title", text: "Instance" }), filter, picker, count]);
}

// The selected instance's process (BPMN; Graphviz where there is no diagram) and its lineage
// (Graphviz), one tab each over the full width: at a 1280x800 screen both draw their labels at
// READABLE_PX or larger (the process scrolls and zooms around the instance's tokens, the
// lineage scrolls when it is larger than its tab).
function graphs(model, offs, decisions) {
  const lineage = new GraphPane({ role: "lineage" });
  // a click on a flow of a waiting decision sends the same command as its button
  // (at an inclusive gateway's decision it toggles the flow in the decisions row)
  const onChoose = (decide) => {
    if (isFrozen(model)) return;
    if (takesSeveral(model, decide.instance, decide.track)) toggleChoice(decisions, decide);
    else sendTo(model, { kind: "decide", instance: decide.instance, flow: decide.flow, track: decide.track });
  };
  const process = new ProcessPane({ role: "process", maxHeight: PROCESS_HEIGHT, minLabelPx: READABLE_PX, onChoose });
  lineage.canvas.style.height = `${PROCESS_HEIGHT}px`;
  // the decisions row (shown while a decision waits) takes its height from the graphs, so
  // the dashboard still fits the screen
  let given = PROCESS_HEIGHT;
  const makeRoom = () => {
    const height = decisions.hidden ? PROCESS_HEIGHT : Math.max(200, PROCESS_HEIGHT - decisions.offsetHeight - 6);
    if (height === given) return;
    given = height;
    lineage.canvas.style.height = `${height}px`;
    process.bpmn.canvas.style.height = `${height}px`;
    process.bpmn.resized();
  };
  const room = new ResizeObserver(makeRoom);
  room.observe(decisions);
  offs.push(() => room.disconnect(), watch(model, "decisions", () => requestAnimationFrame(makeRoom)));
  const panel = h("div", { class: "gobpm-graph gobpm-wide gobpm-tabbed", "data-role": "graphs", "data-tab": "process" }, [process.el, lineage.el]);
  const tabs = {};
  const choose = (name) => {
    panel.dataset.tab = name;
    for (const [key, tab] of Object.entries(tabs)) tab.setAttribute("aria-selected", String(key === name));
    if (name === "process") process.bpmn.resized();
  };
  for (const [name, label] of [["process", "Process"], ["lineage", "Lineage"]]) {
    tabs[name] = h("button", { type: "button", class: "gobpm-tab", role: "tab", "data-action": `tab-${name}`, onclick: () => choose(name) }, [label]);
  }
  process.header.prepend(h("span", { class: "gobpm-tabs", role: "tablist" }, Object.values(tabs)));
  process.header.hidden = false;
  choose("process");
  const showLineage = () => lineage.update(trait(model, "lineage_dot", ""));
  const showProcess = () => {
    process.update({
      bpmn: trait(model, "process_bpmn", ""),
      marks: trait(model, "process_marks", {}),
      dot: trait(model, "process_dot", ""),
    });
    process.header.hidden = false; // the tabs live in it
  };
  showLineage();
  showProcess();
  offs.push(
    watch(model, "lineage_dot", showLineage),
    watch(model, ["process_dot", "process_bpmn", "process_marks"], showProcess),
    () => lineage.destroy(),
    () => process.destroy(),
  );
  return h("div", { class: "gobpm-graphs" }, [panel]);
}

export function renderDashboard(model, root, renderChild = null) {
  const offs = [];
  const [clock, counters] = clockAndCounters(model, offs);
  const decisions = decisionsRow(model, offs, locked, (message) => sendTo(model, message));
  root.append(
    h("div", { class: "gobpm-dashboard" }, [
      h("div", { class: "gobpm-header" }, [controls(model, offs), headerEnd(model, offs, clock)]),
      lastStep(model, offs),
      h("div", { class: "gobpm-status" }, [counters, instancePicker(model, offs)]),
      timeline(model, offs),
      decisions,
      graphs(model, offs, decisions),
      locked(model, offs, { class: "gobpm-forms" }, [publishForm(model, offs), completeForm(model, offs)]),
      holdsTable(model, offs),
      factTimeline(model, offs),
      branchPane(model, offs, renderChild),
    ]),
  );
  return () => {
    for (const off of offs) off();
  };
}
