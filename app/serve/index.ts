export { PAGE_SCRIPT, PAGE_SCRIPT_INTEGRITY, PAGE_SCRIPT_PATH, PAGE_STYLE, PAGE_STYLE_PATH, pageHtml } from './page.ts';
export { citingTexts, quotedSpans, sharedSpans, type TextSpan } from './spans.ts';
export {
  agenticView,
  answerView,
  type AgenticRunView,
  storedRunView,
  type ChunkView,
  type CitationView,
  type PacketView,
  type RunView,
} from './run-views.ts';
export { askRequestSchema, isLoopback, serve, serveOptionsSchema, type RunningServer, type ServeOptions } from './server.ts';
export type { ServeWorkers } from './worker-pool.ts';
