// The synced traits, as the Python classes in gobpm_nb/ui/widgets.py declare them.
// Kept as JSDoc so the bundle needs no TypeScript step; keep both sides in step.

/**
 * Traits of GraphWidget (view "graph").
 * @typedef {object} GraphTraits
 * @property {"graph"} view
 * @property {string} title             shown above the graph, as text
 * @property {string} dot               a DOT document, built and quoted by Python
 * @property {Array<[string, string]>} legend  [label, CSS colour] pairs
 */

/**
 * One task a user can complete.
 * @typedef {object} TaskRow
 * @property {string} id
 * @property {string} instance
 * @property {string} node
 * @property {string|null} assignee
 */

/**
 * One armed hold.
 * @typedef {object} HoldRow
 * @property {string} instance
 * @property {string} track
 * @property {"timer"|"message"|"signal"|"task"} kind
 * @property {"node"|"boundary"} wait_kind
 * @property {string} node
 * @property {string|null} deadline    ISO 8601 virtual time, or null
 * @property {*} keys                  shown as text (lists joined with ", ")
 */

/**
 * One fact of the engine's log.
 * @typedef {object} FactRow
 * @property {number} seq
 * @property {string} at               ISO 8601 virtual time
 * @property {string} kind
 * @property {string|null} instance
 * @property {string|null} track
 * @property {string|null} node
 * @property {string} details          a short, already formatted string
 */

/**
 * Traits of DashboardWidget (view "dashboard").
 * @typedef {object} DashboardTraits
 * @property {"dashboard"} view
 * @property {string} clock                    the virtual clock, as text
 * @property {Object<string, number>} counters name -> count
 * @property {TaskRow[]} tasks
 * @property {HoldRow[]} holds
 * @property {FactRow[]} facts                 oldest first
 * @property {string[]} instances
 * @property {string} selected                 two-way: set by the instance select
 * @property {string} lineage_dot
 * @property {string} process_dot
 * @property {boolean} playing                 true while Python's play loop runs
 * @property {string} error                    shown in red when non-empty
 */

/**
 * Messages the dashboard sends with model.send(); Python dispatches them by `kind`.
 * @typedef {{kind: "step"} | {kind: "run"} | {kind: "advance", duration: string}
 *   | {kind: "play", speed: number} | {kind: "pause"}
 *   | {kind: "publish", name: string, key: string, payload: object}
 *   | {kind: "complete", task: string, outputs: object}
 *   | {kind: "select", instance: string}} Command
 */

export {};
