export { PAGE_HTML } from './page.ts';
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
  type PacketView,
  type RunningServer,
  type RunView,
  type ServeOptions,
} from './server.ts';
