// The shapes of the structured values Python sends in the synced traits (gobpm_nb/render/
// marks.py, gobpm_nb/observe/projections.py and fact_pages.py, gobpm_nb/ui/views.py) and of the
// commands the dashboard sends back. The traits themselves — names, types, words — are in
// contract.js, which Python writes (`python -m gobpm_nb.ui.contract`), with the vocabulary
// named below (TRACK_STATES, RESIDENCIES, HOLD_KINDS, PALETTE). Kept as JSDoc so the bundle
// needs no TypeScript step; keep these shapes in step with the Python that builds them.

/**
 * What to draw on one element of a BPMN diagram (gobpm_nb/render/marks.py).
 * @typedef {object} ElementMarks
 * @property {string} id                the BPMN id of the shape
 * @property {string[]} classes         canvas markers: gobpm-left, gobpm-token,
 *                                      gobpm-dehydrated, gobpm-held, gobpm-fork, gobpm-heat
 * @property {string} [fill]            a heat map's shade of the shape (gobpm_nb/render/heat.py)
 * @property {Array<{kind: "token"|"hold"|"fork"|"heat", text: string, tip: string, colour: string,
 *   state?: string, fill?: string, ink?: string, dashed?: boolean, hold?: string,
 *   origin?: string}>} badges   a token's `state` is one of TRACK_STATES, a hold's `hold`
 *                               one of HOLD_KINDS
 * @property {string} tip               hover text: the tracks and holds there
 */

/**
 * The engine's state on a BPMN diagram.
 * @typedef {object} Marks
 * @property {string} status            the instance line shown above the diagram
 * @property {string} residency         one of RESIDENCIES
 * @property {ElementMarks[]} elements  definition order
 * @property {string[]} flows           ids of the sequence flows taken
 * @property {Choice[]} [choices]       the flows a person may choose now (dashed, clickable)
 * @property {Object<string, string>} colours  the names of PALETTE -> CSS colour
 */

/**
 * One pool of a population dashboard (gobpm_nb/population/board.py).
 * @typedef {object} PoolRow
 * @property {string} pool              the pool's name
 * @property {number|null} size         its resources (null: unlimited)
 * @property {number} busy              resources working now
 * @property {number} waiting           work waiting in its queue
 * @property {boolean} open             whether its calendar is open now
 */

/**
 * A flow a person may choose at a decision waiting now (gobpm_nb/render/marks.py choices):
 * clicking it on a dashboard's diagram sends {kind: "decide", ...decide}.
 * @typedef {object} Choice
 * @property {string} flow              the BPMN id of the sequence flow
 * @property {{instance: string, track: string, flow: string}} decide  the command's fields
 * @property {boolean} [several]       an inclusive gateway's decision: a click toggles the flow
 * @property {string} label             the flow's name, or "→ <target>"
 * @property {string} tip               hover text
 */

/**
 * The decisions waiting for a person (gobpm_nb/observe/choices.py decisions_state).
 * @typedef {object} Decisions
 * @property {number} total             in the whole engine
 * @property {Array<{instance: string, track: string, gateway: string, label: string,
 *   flows: Array<{flow: string, target: string, label: string}>}>} rows  the selected
 *   instance's, in the order armed
 * @property {Array<{instance: string, track: string, adhoc: string, label: string,
 *   elements: Array<{element: string, label: string}>}>} [activations]  the selected
 *   instance's ad-hoc subprocesses waiting for a person to activate an element
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
 * The instance picker's entry for one of `instances`.
 * @typedef {object} InstanceRow
 * @property {string} id
 * @property {string} process           "name vN"
 * @property {string} state             active | completed | terminated | failed
 * @property {string} residency         one of RESIDENCIES
 * @property {string} label             what the picker shows (and filters on)
 */

/**
 * What became of the last published message.
 * @typedef {object} Notice
 * @property {string} [text]
 * @property {"ok"|"warning"} [level]   warning: it reached nobody
 */

/**
 * One armed hold (its keys, in order: HOLD_COLUMNS).
 * @typedef {object} HoldRow
 * @property {string} instance
 * @property {string} track
 * @property {string} kind               one of HOLD_KINDS
 * @property {"node"|"boundary"|"start"} wait_kind
 * @property {string} node
 * @property {string|null} deadline    ISO 8601 virtual time, or null
 * @property {*} keys                  shown as text (lists joined with ", ")
 */

/**
 * One fact of the engine's log (its keys, in order: FACT_COLUMNS).
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
 * Messages the dashboard sends with model.send(); Python dispatches them by `kind`.
 * @typedef {{kind: "step"} | {kind: "run", horizon: string} | {kind: "advance", duration: string}
 *   | {kind: "play", speed: number} | {kind: "pause"}
 *   | {kind: "publish", name: string, key: string, payload: object}
 *   | {kind: "complete", task: string, outputs: object}
 *   | {kind: "decide", instance: string, flow: string, track: string}
 *   | {kind: "select", instance: string}
 *   | {kind: "facts", instance: string, fact_kind: string, page: number|null}
 *   | {kind: "rewind", to: number} | {kind: "replay"} | {kind: "branch"}} Command
 */

export {};
