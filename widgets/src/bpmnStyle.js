// Styles of the BPMN view: bpmn.io's own style sheets (bundled as text: the viewer needs them
// for its canvas, overlays and watermark) and the look of the engine's marks. The marker
// colours are CSS variables set from the data Python sends (gobpm_nb/render/marks.py), with
// the contract's PALETTE (the same values, written from Python) as fallbacks here.
import DIAGRAM_CSS from "bpmn-js/dist/assets/diagram-js.css";
import BPMN_CSS from "bpmn-js/dist/assets/bpmn-js.css";

import { DEHYDRATED, PALETTE } from "./contract.js";

const COLOURS = Object.entries(PALETTE).map(([name, value]) => `--gobpm-${name}: ${value};`).join(" ");

const MARKS_CSS = `
.gobpm-bpmn {
  ${COLOURS}
  display: flex; flex-direction: column; gap: 4px; min-width: 0;
}
.gobpm-bpmn-header { display: flex; flex-wrap: wrap; align-items: center; justify-content: space-between; gap: 6px; }
.gobpm-bpmn-header .gobpm-graph-title { margin: 0; }
.gobpm-bpmn-status { color: var(--gobpm-muted, #59636e); font-size: 12px; }
.gobpm-bpmn-tools { display: inline-flex; gap: 4px; margin-left: auto; }
.gobpm-bpmn-tools .gobpm-button { padding: 0 8px; min-height: 22px; }
.gobpm-bpmn-canvas {
  position: relative; height: 320px; overflow: hidden; background: #ffffff;
  border: 1px solid var(--gobpm-border, #d8dee4); border-radius: 4px;
}
.gobpm-bpmn[data-residency="${DEHYDRATED}"] .gobpm-bpmn-canvas { border: 2px dashed var(--gobpm-${DEHYDRATED}); }
.gobpm-bpmn-status[data-residency="${DEHYDRATED}"] { color: var(--gobpm-${DEHYDRATED}, ${PALETTE[DEHYDRATED]}); }
.gobpm-bpmn .djs-element.gobpm-left .djs-visual > :nth-child(1) { stroke: var(--gobpm-path) !important; }
.gobpm-bpmn .djs-shape.gobpm-left .djs-visual > :nth-child(1) { fill: var(--gobpm-path-fill) !important; }
.gobpm-bpmn .djs-connection.gobpm-taken .djs-visual > path { stroke: var(--gobpm-path) !important; stroke-width: 3px !important; }
.gobpm-bpmn .djs-shape.gobpm-held .djs-visual > :nth-child(1) { stroke: var(--gobpm-held) !important; stroke-width: 3px !important; }
.gobpm-bpmn .djs-shape.gobpm-token .djs-visual > :nth-child(1) { stroke: var(--gobpm-token) !important; stroke-width: 3px !important; }
.gobpm-bpmn .djs-shape.gobpm-dehydrated .djs-visual > :nth-child(1) { stroke-dasharray: 6 3 !important; }
.gobpm-bpmn .djs-connection.gobpm-choice .djs-visual > path { stroke: var(--gobpm-decision) !important; stroke-width: 3px !important; stroke-dasharray: 8 4 !important; }
.gobpm-bpmn[data-choosable="true"] .djs-connection.gobpm-choice { cursor: pointer; }
.gobpm-bpmn[data-choosable="true"] .djs-connection.gobpm-choice:hover .djs-visual > path { stroke-width: 5px !important; }
.gobpm-badge.gobpm-badge-choice { border-color: var(--gobpm-decision); color: var(--gobpm-decision); font: inherit; font-weight: 600; border-style: dashed; }
button.gobpm-badge-choice { cursor: pointer; line-height: 1.2; }
button.gobpm-badge.gobpm-badge-choice:hover { background: var(--gobpm-decision); color: #ffffff; }
.gobpm-marks {
  display: flex; flex-wrap: wrap; gap: 2px; width: max-content; max-width: 260px;
  font: 11px/1.2 system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif; pointer-events: auto;
}
.gobpm-bpmn { position: relative; }
.gobpm-bpmn-measure { position: absolute; left: 0; top: 0; width: 0; height: 0; overflow: hidden; visibility: hidden; pointer-events: none; }
.gobpm-marks-below { flex-wrap: nowrap; }
.gobpm-badge {
  display: inline-block; padding: 0 5px; border: 1.5px solid #868e96; border-radius: 9px;
  background: #ffffff; color: #212529; white-space: nowrap; max-width: 240px;
  overflow: hidden; text-overflow: ellipsis; font-variant-numeric: tabular-nums;
}
.gobpm-badge-token { min-width: 18px; text-align: center; font-weight: 700; }
.gobpm-badge-dashed { border-style: dashed; }
.gobpm-badge-heat { min-width: 20px; text-align: center; font-weight: 700; font-size: 12px; border-color: #212529; }
.gobpm-bpmn .djs-shape.gobpm-heat .djs-visual > :nth-child(1) { fill: var(--gobpm-heat-fill, #fff3bf) !important; stroke: #212529 !important; stroke-width: 2px !important; }
.gobpm-process { display: flex; flex-direction: column; gap: 4px; min-width: 0; }
.gobpm-process .gobpm-graph { border: 0; padding: 0; }
.gobpm-graphs > .gobpm-wide { grid-column: 1 / -1; }
`;

export const BPMN_STYLE = `${DIAGRAM_CSS}\n${BPMN_CSS}\n${MARKS_CSS}`;
