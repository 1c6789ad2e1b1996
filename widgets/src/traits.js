// The synced traits, as the Python classes in gobpm_nb/ui/widgets.py (and shared.py) declare them.
// Kept as JSDoc so the bundle needs no TypeScript step; keep both sides in step.

/**
 * Traits every widget has: anywidget's `_esm` is the small loader (loader.js); it draws the
 * widget with the shared module the kernel sends once (index.js, in SharedModule.code).
 * @typedef {object} SharedTraits
 * @property {string} _shared           "IPY_MODEL_<id>" of the kernel's SharedModule
 * @property {string} _shared_digest    what the imported module is kept under on globalThis
 */

/**
 * The SharedModule widget (an anywidget model with an empty module of its own; never shown).
 * @typedef {object} SharedModuleTraits
 * @property {string} digest
 * @property {DataView|ArrayBuffer} code   shared.js, gzip-compressed (a binary buffer)
 */

/**
 * What to draw on one element of a BPMN diagram (gobpm_nb/render/marks.py).
 * @typedef {object} ElementMarks
 * @property {string} id                the BPMN id of the shape
 * @property {string[]} classes         canvas markers: gobpm-left, gobpm-token,
 *                                      gobpm-dehydrated, gobpm-held, gobpm-fork
 * @property {Array<{kind: "token"|"hold"|"fork", text: string, tip: string, colour: string,
 *   state?: string, fill?: string, ink?: string, dashed?: boolean, hold?: string,
 *   origin?: string}>} badges
 * @property {string} tip               hover text: the tracks and holds there
 */

/**
 * The engine's state on a BPMN diagram.
 * @typedef {object} Marks
 * @property {string} status            the instance line shown above the diagram
 * @property {string} residency         resident | dehydrated | finished
 * @property {ElementMarks[]} elements  definition order
 * @property {string[]} flows           ids of the sequence flows taken
 * @property {Object<string, string>} colours  path, path-fill, token, held, fork, released
 */

/**
 * Traits of GraphWidget (view "graph").
 * @typedef {object} GraphTraits
 * @property {"graph"} view
 * @property {string} title             shown above the graph, as text
 * @property {string} dot               a DOT document, built and quoted by Python; drawn
 *                                      when bpmn is empty
 * @property {string} bpmn              a BPMN 2.0 document with its diagram, or ""
 * @property {Marks|{}} marks           the engine's state on that diagram
 * @property {Array<[string, string]>} legend  [label, CSS colour] pairs
 * @property {string} moment            "live", "at fact 42 · 2026-01-01 05:00" (frozen
 *                                      there) or "" (no header line)
 * @property {boolean} live             two-way: true while the graph follows its engine
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
 * The fact table's page: the query in force and where the page stands (Python pages and
 * filters the kept log; the browser asks with the "facts" command).
 * @typedef {object} FactPage
 * @property {string} instance          "" for every instance
 * @property {string} kind              "" for every kind
 * @property {number|null} page         0 is the oldest page; null the newest facts
 * @property {number} start             position of the first row among the matching facts
 * @property {number} size              rows per page
 * @property {number} total             kept facts that match
 * @property {number} pages
 * @property {number|null} older        the page to ask for older rows (null: none)
 * @property {number|null} newer        the page to ask for newer rows (null: the newest)
 * @property {number} kept              facts the log keeps (keep_facts)
 * @property {number} emitted           facts the engine emitted
 * @property {string[]} kinds           the kind filter's choices
 */

/**
 * The history slider: the fact numbers the journal covers and where the engine stands.
 * @typedef {object} Timeline
 * @property {number} start
 * @property {number} end
 * @property {number} position          the fact the engine stands at (after a rewind: < end)
 * @property {string} at                its virtual clock
 * @property {number} pending           facts after it that "reset" (a replay) runs again
 * @property {boolean} movable          false: no journal (a durable store); see note
 * @property {string} note
 */

/**
 * Traits of DashboardWidget (view "dashboard").
 * @typedef {object} DashboardTraits
 * @property {"dashboard"} view
 * @property {string} clock                    the virtual clock, as text
 * @property {Object<string, number>} counters name -> count
 * @property {TaskRow[]} tasks
 * @property {HoldRow[]} holds
 * @property {FactRow[]} facts                 one page of the fact table, oldest first
 * @property {FactPage} fact_page              what the table says about that page
 * @property {string} last_step                what the last Step / Run / Advance did
 * @property {{text?: string, level?: "ok"|"warning"}} publish_notice  the last message's fate
 * @property {string[]} instances
 * @property {{id: string, process: string, state: string, residency: string, label: string}[]} instance_rows
 *   the picker's label of each of `instances`
 * @property {string} selected                 two-way: set by the instance select
 * @property {string} lineage_dot
 * @property {string} process_dot                Graphviz; drawn when process_bpmn is ""
 * @property {string} process_bpmn               its process as BPMN with a diagram
 * @property {Marks|{}} process_marks            the engine's state on it
 * @property {boolean} playing                 true while Python's play loop runs
 * @property {Timeline|{}} timeline            the history slider
 * @property {string|null} branch              "IPY_MODEL_<id>" of the last branch's dashboard
 * @property {string} moment                   "live", "at fact 42 · 2026-01-01 05:00" (frozen
 *                                             there: its controls are disabled) or "" (no header line)
 * @property {boolean} live                    two-way: true while the dashboard follows its engine
 * @property {string} error                    shown in red when non-empty
 */

/**
 * Messages the dashboard sends with model.send(); Python dispatches them by `kind`.
 * @typedef {{kind: "step"} | {kind: "run", horizon: string} | {kind: "advance", duration: string}
 *   | {kind: "play", speed: number} | {kind: "pause"}
 *   | {kind: "publish", name: string, key: string, payload: object}
 *   | {kind: "complete", task: string, outputs: object}
 *   | {kind: "select", instance: string}
 *   | {kind: "facts", instance: string, fact_kind: string, page: number|null}
 *   | {kind: "rewind", to: number} | {kind: "replay"} | {kind: "branch"}} Command
 */

export {};
