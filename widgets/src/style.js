// Styles for both views. Static text only; scoped by the gobpm- class prefix and following
// JupyterLab's theme variables where they exist (with light fallbacks elsewhere).
export const CSS = `
.gobpm-root {
  --gobpm-fg: var(--jp-ui-font-color1, #1f2328);
  --gobpm-muted: var(--jp-ui-font-color2, #59636e);
  --gobpm-border: var(--jp-border-color2, #d8dee4);
  --gobpm-bg: var(--jp-layout-color1, #ffffff);
  --gobpm-bg2: var(--jp-layout-color2, #f6f8fa);
  --gobpm-accent: var(--jp-brand-color1, #0969da);
  --gobpm-error: var(--jp-error-color1, #cf222e);
  --gobpm-warning: var(--jp-warn-color1, #9a6700);
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  font-size: 13px;
  line-height: 1.35;
  color: var(--gobpm-fg);
  box-sizing: border-box;
  max-width: 100%;
}
.gobpm-root *, .gobpm-root *::before, .gobpm-root *::after { box-sizing: inherit; }
.gobpm-root [hidden] { display: none !important; }
.gobpm-muted { color: var(--gobpm-muted); font-weight: normal; }
.gobpm-error-bar {
  display: flex; align-items: flex-start; gap: 8px;
  color: var(--gobpm-error); background: color-mix(in srgb, var(--gobpm-error) 8%, transparent);
  border: 1px solid color-mix(in srgb, var(--gobpm-error) 45%, transparent);
  border-radius: 4px; padding: 4px 8px; margin-bottom: 6px; white-space: pre-wrap;
}
.gobpm-error-bar .gobpm-error-text { flex: 1; }
.gobpm-error-bar button { border: 0; background: none; color: inherit; cursor: pointer; font-size: 14px; }
.gobpm-title, .gobpm-graph-title, .gobpm-section-title, .gobpm-form-title {
  font-weight: 600; margin: 0 0 4px;
}
.gobpm-title { font-size: 14px; }
.gobpm-graph-header { display: flex; flex-wrap: wrap; align-items: baseline; gap: 4px 12px; margin: 0 0 4px; }
.gobpm-graph-header .gobpm-title { margin: 0; }
.gobpm-moment { display: inline-flex; align-items: baseline; gap: 8px; color: var(--gobpm-muted); font-size: 12px; }
.gobpm-moment[data-live=true] .gobpm-moment-text { color: var(--gobpm-accent); font-weight: 600; }
.gobpm-moment[data-live=true] .gobpm-moment-text::before { content: "● "; }
.gobpm-moment-button { font-size: 12px; padding: 1px 8px; }
.gobpm-graph { border: 1px solid var(--gobpm-border); border-radius: 6px; padding: 6px 8px; background: var(--gobpm-bg); min-width: 0; }
.gobpm-graph-view .gobpm-graph { border: 0; padding: 0; }
.gobpm-graph-canvas { overflow: auto; }
.gobpm-graph-canvas svg { display: block; max-width: 100%; height: auto; margin: 0 auto; }
.gobpm-graph-message { color: var(--gobpm-muted); font-style: italic; padding: 8px 0; }
.gobpm-graph-message.gobpm-graph-error { color: var(--gobpm-error); font-style: normal; }
.gobpm-legend { display: flex; flex-wrap: wrap; gap: 4px 14px; margin-top: 6px; color: var(--gobpm-muted); font-size: 12px; }
.gobpm-legend-item { display: inline-flex; align-items: center; gap: 5px; }
.gobpm-swatch { width: 11px; height: 11px; border-radius: 2px; border: 1px solid rgba(0,0,0,.25); display: inline-block; }
/* The population dashboard: header, counters beside the pools, the heat map, its legend. */
.gobpm-population { display: flex; flex-direction: column; gap: 6px; }
.gobpm-population-header { justify-content: space-between; }
.gobpm-population-phase { font-size: 12px; font-weight: 600; padding: 0 8px; border-radius: 9px; border: 1px solid var(--gobpm-border); color: var(--gobpm-muted); }
.gobpm-population-phase[data-phase="running"] { color: var(--gobpm-accent); border-color: var(--gobpm-accent); }
.gobpm-population-status { display: flex; flex-wrap: wrap; align-items: flex-start; gap: 6px 18px; }
.gobpm-population-status > .gobpm-counters { flex: 1 1 360px; }
.gobpm-population-pools { flex: 0 1 auto; }
.gobpm-population-pools .gobpm-table { width: auto; }
.gobpm-pools tr[data-open="false"] td.gobpm-col-calendar { color: var(--gobpm-muted); font-style: italic; }
/* The dashboard is one column of full-width rows sized for a 1280x800 screen: the process
   and the lineage share one tabbed panel, the two forms sit side by side under it, the
   tables fold away. Narrow outputs put the forms under each other. */
.gobpm-root[data-view="dashboard"] { container: gobpm-dashboard / inline-size; }
.gobpm-dashboard { display: flex; flex-direction: column; gap: 6px; }
.gobpm-dashboard > .gobpm-forms { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 6px; }
@container gobpm-dashboard (max-width: 720px) {
  .gobpm-dashboard > .gobpm-forms { grid-template-columns: minmax(0, 1fr); }
}
.gobpm-tabs { display: inline-flex; gap: 2px; }
.gobpm-tab {
  font: inherit; font-weight: 600; color: var(--gobpm-muted); background: none; cursor: pointer;
  border: 1px solid transparent; border-radius: 4px; padding: 1px 10px; min-height: 24px;
}
.gobpm-tab[aria-selected="true"] { color: var(--gobpm-fg); border-color: var(--gobpm-border); background: var(--gobpm-bg2); }
.gobpm-tabbed[data-tab="lineage"] > .gobpm-process > :not(.gobpm-bpmn-header),
.gobpm-tabbed[data-tab="lineage"] .gobpm-bpmn-status,
.gobpm-tabbed[data-tab="lineage"] .gobpm-bpmn-tools,
.gobpm-tabbed[data-tab="process"] > [data-role="lineage"] { display: none !important; }
.gobpm-tabbed [data-role="lineage"] .gobpm-graph-canvas { overflow: auto; border: 1px solid var(--gobpm-border); border-radius: 4px; margin-top: 4px; }
.gobpm-tabbed [data-role="lineage"] .gobpm-graph-canvas svg { max-width: none; }
.gobpm-tabbed [data-role="lineage"] { border: 0; padding: 0; }
.gobpm-last-step {
  padding: 3px 8px; border-left: 3px solid var(--gobpm-accent); background: var(--gobpm-bg2);
  border-radius: 0 4px 4px 0; font-size: 12px; white-space: normal; overflow-wrap: anywhere;
}
.gobpm-last-step.gobpm-hint { color: var(--gobpm-muted); border-left-color: var(--gobpm-border); }
.gobpm-last-step[data-frozen=true] { color: var(--gobpm-warning); border-left-color: var(--gobpm-warning); }
.gobpm-header-end { display: inline-flex; flex-wrap: wrap; align-items: baseline; justify-content: flex-end; gap: 4px 14px; margin-left: auto; }
fieldset.gobpm-lock { border: 0; margin: 0; padding: 0; min-width: 0; }
.gobpm-status { display: flex; flex-wrap: wrap; align-items: center; justify-content: space-between; gap: 6px; }
.gobpm-horizon { width: 9em; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "DejaVu Sans Mono", monospace; }
.gobpm-notice { font-size: 12px; padding: 2px 6px; border-radius: 4px; overflow-wrap: anywhere; }
.gobpm-notice[data-level="warning"] {
  color: var(--gobpm-warning); background: color-mix(in srgb, var(--gobpm-warning) 10%, transparent);
  border: 1px solid color-mix(in srgb, var(--gobpm-warning) 40%, transparent);
}
.gobpm-notice[data-level="ok"] { color: var(--gobpm-muted); }
.gobpm-collapsible > summary { cursor: pointer; user-select: none; }
.gobpm-collapsible > summary:hover { color: var(--gobpm-accent); }
.gobpm-collapsible-body { display: flex; flex-direction: column; gap: 4px; margin-top: 2px; }
.gobpm-facts-bar { gap: 6px 10px; }
.gobpm-pager { display: inline-flex; gap: 3px; }
.gobpm-pager .gobpm-button { padding: 1px 6px; font-size: 12px; min-height: 22px; }
.gobpm-button:disabled { opacity: .45; cursor: default; border-color: var(--gobpm-border); }
.gobpm-lock:disabled .gobpm-input, .gobpm-lock:disabled .gobpm-select { opacity: .55; }
.gobpm-header { display: flex; flex-wrap: wrap; align-items: center; justify-content: space-between; gap: 8px; }
.gobpm-controls, .gobpm-row { display: flex; flex-wrap: wrap; align-items: center; gap: 6px; }
.gobpm-group { display: inline-flex; align-items: center; gap: 4px; padding-left: 6px; border-left: 1px solid var(--gobpm-border); }
.gobpm-button {
  font: inherit; color: var(--gobpm-fg); background: var(--gobpm-bg2);
  border: 1px solid var(--gobpm-border); border-radius: 4px; padding: 2px 10px; cursor: pointer; min-height: 24px;
}
.gobpm-button:hover { border-color: var(--gobpm-accent); }
.gobpm-button:active { background: var(--gobpm-border); }
.gobpm-play-toggle[data-state="playing"] { background: var(--gobpm-accent); border-color: var(--gobpm-accent); color: #fff; }
.gobpm-input, .gobpm-select {
  font: inherit; color: var(--gobpm-fg); background: var(--gobpm-bg);
  border: 1px solid var(--gobpm-border); border-radius: 4px; padding: 2px 6px; min-height: 24px; min-width: 0;
}
.gobpm-json { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "DejaVu Sans Mono", monospace; font-size: 12px; width: 100%; resize: vertical; }
.gobpm-duration { width: 7em; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "DejaVu Sans Mono", monospace; }
.gobpm-clock { display: inline-flex; align-items: baseline; gap: 6px; }
.gobpm-clock-value { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "DejaVu Sans Mono", monospace; font-size: 14px; font-weight: 600; }
.gobpm-counters { display: flex; flex-wrap: wrap; gap: 6px; }
.gobpm-decisions { gap: 4px 10px; padding: 3px 8px; border: 1px dashed #c2255c; border-radius: 6px; }
.gobpm-decisions .gobpm-section-title { margin: 0; color: #c2255c; }
.gobpm-decision-list { display: inline-flex; flex-wrap: wrap; gap: 4px 14px; }
.gobpm-decision { display: inline-flex; flex-wrap: wrap; align-items: center; gap: 4px; }
.gobpm-decision-where { font-weight: 600; }
.gobpm-decide { border-color: #c2255c; color: #c2255c; font-weight: 600; }
.gobpm-decide:hover { background: #c2255c; color: #ffffff; border-color: #c2255c; }
.gobpm-pick[aria-pressed="true"] { background: #c2255c; color: #ffffff; }
.gobpm-pick[aria-pressed="true"]::before { content: "✓ "; }
.gobpm-take { border-style: solid; border-width: 2px; }
.gobpm-take:disabled { opacity: 0.5; cursor: default; }
.gobpm-timeline { display: flex; flex-wrap: wrap; align-items: center; gap: 6px; }
.gobpm-timeline-slider { flex: 1 1 240px; min-width: 160px; }
.gobpm-branch { border-left: 3px solid #999; padding-left: 8px; margin-top: 8px; }
.gobpm-counter { display: inline-flex; align-items: baseline; gap: 5px; padding: 2px 8px; border: 1px solid var(--gobpm-border); border-radius: 12px; background: var(--gobpm-bg2); }
.gobpm-counter-value { font-weight: 600; font-variant-numeric: tabular-nums; }
.gobpm-counter-label { color: var(--gobpm-muted); font-size: 12px; }
.gobpm-instance .gobpm-section-title { margin: 0; }
.gobpm-instance-select { max-width: 34em; }
.gobpm-instance-filter { width: 11em; }
.gobpm-forms { display: flex; flex-direction: column; gap: 6px; min-width: 0; }
.gobpm-form-fields { display: flex; flex-wrap: wrap; align-items: flex-end; gap: 4px 6px; }
.gobpm-form-fields > .gobpm-field { flex: 1 1 90px; min-width: 0; }
.gobpm-form-fields > .gobpm-wide-field { flex: 2 1 150px; }
.gobpm-form-fields .gobpm-json { resize: vertical; min-height: 24px; }
.gobpm-form { display: flex; flex-direction: column; gap: 4px; border: 1px solid var(--gobpm-border); border-radius: 6px; padding: 6px 8px; margin: 0; }
.gobpm-form .gobpm-row > .gobpm-field { flex: 1; }
.gobpm-field { display: flex; flex-direction: column; gap: 1px; }
.gobpm-field-label { color: var(--gobpm-muted); font-size: 11px; }
.gobpm-form-error { color: var(--gobpm-error); font-size: 12px; flex: 1; }
.gobpm-section { display: flex; flex-direction: column; gap: 2px; }
.gobpm-section-title.gobpm-row { justify-content: space-between; }
.gobpm-filters { display: inline-flex; gap: 4px; font-weight: normal; }
.gobpm-scroll { overflow: auto; border: 1px solid var(--gobpm-border); border-radius: 6px; }
.gobpm-holds-scroll { max-height: 180px; }
.gobpm-facts-scroll { max-height: 220px; }
.gobpm-table { border-collapse: separate; border-spacing: 0; width: 100%; font-size: 12px; font-variant-numeric: tabular-nums; }
.gobpm-table th {
  position: sticky; top: 0; z-index: 1; background: var(--gobpm-bg2); text-align: left; font-weight: 600;
  color: var(--gobpm-muted); border-bottom: 1px solid var(--gobpm-border); padding: 3px 8px; white-space: nowrap;
}
.gobpm-table td { padding: 2px 8px; border-bottom: 1px solid color-mix(in srgb, var(--gobpm-border) 60%, transparent); white-space: nowrap; vertical-align: top; }
.gobpm-table tbody tr:last-child td { border-bottom: 0; }
.gobpm-table tbody tr:hover td { background: var(--gobpm-bg2); }
.gobpm-table td.gobpm-col-details, .gobpm-table td.gobpm-col-keys { white-space: normal; word-break: break-word; }
.gobpm-table .gobpm-col-seq { text-align: right; }
.gobpm-table td.gobpm-col-seq { color: var(--gobpm-muted); }
.gobpm-table.gobpm-empty thead { display: none; }
.gobpm-table.gobpm-empty::after { content: "none"; display: block; padding: 4px 8px; color: var(--gobpm-muted); font-style: italic; }
`;
