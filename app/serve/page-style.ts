/**
 * The style sheet of the `axon serve` page, served as `/page.css` (the Content-Security-Policy allows styles from the
 * server itself only, and no style attribute).
 */
export const PAGE_STYLE = `:root { --fg: #1d232a; --muted: #5f6b76; --line: #d6dbe0; --accent: #2457c5; --bar: #5b8def; --drop: #b8bec4; --cut: #c2410c; --bg: #fff; --panel: #f5f7f9; --up: #15803d; --down: #b91c1c; --only: #fdecc8; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
header { padding: 10px 16px; border-bottom: 1px solid var(--line); display: flex; gap: 12px; align-items: baseline; }
header h1 { font-size: 16px; margin: 0; }
main { display: grid; grid-template-columns: 250px 1fr; min-height: calc(100vh - 45px); }
nav { border-right: 1px solid var(--line); padding: 12px; background: var(--panel); overflow: auto; }
nav h2, section h2 { font-size: 13px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); margin: 4px 0 8px; }
nav ol { list-style: none; margin: 0; padding: 0; }
nav li { display: grid; grid-template-columns: 22px 1fr; align-items: start; }
nav li input { margin: 9px 0 0; }
nav li button { width: 100%; text-align: left; border: 0; background: none; padding: 6px; border-radius: 4px; cursor: pointer; font: inherit; }
nav li button:hover, nav li button:focus-visible { background: #e3e8ee; }
nav small { display: block; color: var(--muted); }
.hint { font-size: 12px; color: var(--muted); margin: 0 0 6px; }
#conversations li { display: block; }
#conversations { margin-top: 0; }
#turns { list-style: none; padding: 0; margin: 0 0 8px; }
#turns li { border-left: 3px solid var(--muted); padding: 2px 8px; margin: 0 0 6px; }
#turns .turn-question { font-weight: 600; }
#turns .searched, #searched { font-size: 12px; color: var(--muted); font-style: italic; }
#compare-open { width: 100%; margin-bottom: 8px; }
.content { padding: 12px 16px; min-width: 0; }
form { display: flex; gap: 8px; }
textarea { flex: 1; font: inherit; padding: 8px; border: 1px solid var(--line); border-radius: 4px; resize: vertical; min-height: 40px; }
button.primary { font: inherit; padding: 8px 14px; border: 0; border-radius: 4px; background: var(--accent); color: #fff; cursor: pointer; }
button.primary:disabled { background: #9aa9c7; cursor: default; }
button.plain { font: inherit; font-size: 12px; padding: 2px 8px; border: 1px solid var(--line); border-radius: 4px; background: #fff; cursor: pointer; }
button:focus-visible, textarea:focus-visible, input:focus-visible, select:focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }
.options { display: flex; flex-wrap: wrap; gap: 6px 18px; margin: 6px 0 0; font-size: 13px; color: var(--muted); }
.options input[type=number] { width: 80px; font: inherit; }
.options select { font: inherit; }
#answer { white-space: pre-wrap; padding: 10px; border: 1px solid var(--line); border-radius: 4px; min-height: 48px; margin: 10px 0; }
#status { color: var(--muted); font-size: 12px; }
.cite { font: inherit; font-size: 12px; color: var(--accent); background: #eaf0fc; border: 1px solid #c6d5f5; border-radius: 3px; padding: 0 4px; cursor: pointer; }
#citations { display: flex; flex-wrap: wrap; gap: 6px; margin-bottom: 10px; }
#chunk { border: 1px solid var(--accent); border-radius: 4px; padding: 10px; margin-bottom: 12px; background: #f8faff; }
#chunk pre { white-space: pre-wrap; margin: 6px 0 0; font: 13px/1.45 ui-monospace, monospace; max-height: 260px; overflow: auto; }
#chunk .close { float: right; }
#chunk-note { font-size: 12px; color: var(--muted); }
.stages { display: flex; align-items: flex-start; gap: 10px; overflow-x: auto; padding-bottom: 8px; }
#stages { position: relative; gap: 40px; }
.stage { flex: 0 0 230px; border: 1px solid var(--line); border-radius: 4px; padding: 6px; position: relative; background: var(--bg); }
.stage h3 { font-size: 12px; margin: 0 0 2px; }
.stage .meta { font-size: 11px; color: var(--muted); margin-bottom: 6px; }
.row { display: grid; grid-template-columns: 1fr 26px 70px; gap: 4px; font-size: 11px; align-items: center; margin: 2px 0; }
/* A name is cut in the middle: its head shrinks behind an ellipsis, its tail (file name, page, chunk) stays whole. */
.name { display: flex; min-width: 0; overflow: hidden; white-space: nowrap; }
.name .head { flex: 0 1 auto; overflow: hidden; text-overflow: ellipsis; min-width: 1.2em; }
.name .tail { flex: 0 0 auto; }
.row .track { position: relative; height: 9px; background: #eef1f4; border-radius: 2px; }
.row .fill { position: absolute; left: 0; top: 0; bottom: 0; background: var(--bar); border-radius: 2px; }
.row.dropped .name { color: var(--muted); text-decoration: line-through; }
.row.dropped .fill { background: var(--drop); }
.move { font-size: 10px; text-align: right; color: var(--muted); }
.move.up { color: var(--up); } .move.down { color: var(--down); }
.reason { grid-column: 1 / -1; color: var(--muted); font-size: 10.5px; margin: -1px 0 3px; }
.cut { position: absolute; top: -2px; bottom: -2px; width: 2px; background: var(--cut); }
.cutlabel { font-size: 11px; color: var(--cut); margin-bottom: 4px; }
svg.links { position: absolute; left: 0; top: 0; pointer-events: none; overflow: visible; }
svg.links line { stroke-width: 1.5; }
svg.links line.up { stroke: var(--up); } svg.links line.down { stroke: var(--down); }
svg.links circle.up { fill: var(--up); } svg.links circle.down { fill: var(--down); }
.timeline { display: flex; height: 14px; border-radius: 3px; overflow: hidden; margin: 6px 0 10px; border: 1px solid var(--line); }
.timeline:empty { display: none; }
.timeline span { display: block; height: 100%; min-width: 2px; }
table { border-collapse: collapse; font-size: 12px; }
td, th { border-bottom: 1px solid var(--line); padding: 3px 8px; text-align: left; }
.hidden { display: none !important; }
.step { font-size: 11.5px; border-top: 1px solid var(--line); padding: 3px 0; }
.step .kind { font-weight: 600; }
.step.inProgress { color: var(--muted); font-style: italic; }
.step.failed .kind { color: #b91c1c; }
.step .plain { margin-left: 4px; font-size: 11px; padding: 0 5px; }
mark { background: #fff3bf; }
#chunk mark { background: #ffe066; border-radius: 2px; }
#compare:focus, #chunk:focus { outline: none; }
#compare .toolbar { display: flex; gap: 10px; align-items: baseline; justify-content: space-between; }
.cmp-grid { display: grid; grid-template-columns: 1fr 1fr; gap: 12px; }
.cmp-run { border: 1px solid var(--line); border-radius: 4px; padding: 8px; min-width: 0; }
.cmp-run h3 { font-size: 13px; margin: 0 0 2px; }
.cmp-run .meta, .pair .summary { font-size: 11.5px; color: var(--muted); }
.cmp-answer { white-space: pre-wrap; margin-top: 6px; padding: 6px; background: var(--panel); border-radius: 3px; }
.pair { border-top: 1px solid var(--line); padding: 8px 0 4px; }
.pair h3 { font-size: 12px; margin: 0; }
.side { list-style: none; margin: 4px 0 0; padding: 0; min-width: 0; }
.crow { display: grid; grid-template-columns: 26px 1fr auto; gap: 6px; font-size: 11.5px; padding: 1px 4px; border-radius: 3px; }
.crow .tag { font-size: 10.5px; color: var(--muted); white-space: nowrap; }
.crow[data-diff="only"] { background: var(--only); }
.crow[data-diff="moved"] .tag { color: var(--accent); font-weight: 600; }
.crow.dropped .name { color: var(--muted); text-decoration: line-through; }
.none { font-size: 11.5px; color: var(--muted); font-style: italic; margin: 4px 0; }
@media (max-width: 760px) {
  main { grid-template-columns: 1fr; }
  nav { border-right: 0; border-bottom: 1px solid var(--line); max-height: 220px; }
  form { flex-direction: column; }
  .cmp-grid { gap: 6px; }
  .crow { grid-template-columns: 20px 1fr; }
  .crow .tag { grid-column: 2; }
}
`;
