export { PAGE_HTML } from './page.ts';
export { citingTexts, quotedSpans, sharedSpans, type TextSpan } from './spans.ts';
export {
  agenticView,
  answerView,
  type AgenticRunView,
  askRequestSchema,
  isLoopback,
  serve,
  serveOptionsSchema,
  storedRunView,
  type ChunkView,
  type CitationView,
  type PacketView,
  type RunningServer,
  type RunView,
  type ServeOptions,
} from './server.ts';
