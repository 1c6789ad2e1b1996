// The header line every view bound to an engine shows: which moment it draws ("live", or
// "at fact 42 · 2026-01-01 05:00" when frozen there) and the button that changes it.
import { h, trait, watch } from "./dom.js";

/** True when the view says it is frozen: a moment is named and it does not follow. */
export function isFrozen(model) {
  return Boolean(trait(model, "moment", "")) && !trait(model, "live", false);
}

/**
 * The moment line: "freeze here" on a live view, "follow live" on a frozen one. The button
 * sets the two-way `live` trait; Python follows or freezes. Returns [element, unwatch].
 */
export function momentLine(model) {
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
