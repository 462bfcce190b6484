export { PAGE_HTML } from './page.ts';
export {
  answerView,
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
