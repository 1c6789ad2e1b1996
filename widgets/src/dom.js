// Tiny DOM helpers. Data only ever reaches the page as text: textContent, text nodes,
// attribute values and option values, never innerHTML.

/**
 * Create an element.
 * props: "class" -> className, "text" -> textContent, "on<event>" -> listener,
 * "style" (object) -> CSSOM properties, anything else -> setAttribute.
 * children: nodes or strings (strings become text nodes).
 */
export function h(tag, props = {}, children = []) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = asText(value);
    else if (key === "style") Object.assign(node.style, value);
    else if (key.startsWith("on") && typeof value === "function") {
      node.addEventListener(key.slice(2), value);
    } else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of [].concat(children)) {
    if (child !== null && child !== undefined && child !== false) node.append(child);
  }
  return node;
}

/** Any synced value as display text. */
export function asText(value) {
  if (value === null || value === undefined) return "";
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (Array.isArray(value)) return value.map(asText).join(", ");
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}

/**
 * Refill a <select> with [value, label] pairs, keeping the chosen value when it is still
 * offered. Values are compared as strings; returns the value now selected.
 */
export function fillSelect(select, pairs, wanted) {
  const keep = wanted === undefined ? select.value : String(wanted);
  const options = pairs.map(([value, label]) => {
    const option = document.createElement("option");
    option.value = String(value);
    option.textContent = asText(label);
    return option;
  });
  select.replaceChildren(...options);
  if (pairs.some(([value]) => String(value) === keep)) select.value = keep;
  return select.value;
}

/** Read a trait, falling back when the model does not have it. */
export function trait(model, name, fallback) {
  const value = model.get(name);
  return value === undefined || value === null ? fallback : value;
}

/** Subscribe to trait changes; returns the unsubscribe function. */
export function watch(model, names, callback) {
  const events = [].concat(names).map((name) => `change:${name}`);
  for (const event of events) model.on(event, callback);
  return () => {
    for (const event of events) model.off(event, callback);
  };
}
