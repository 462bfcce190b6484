// A worker of bench/concurrency.ts: its own reader of the store (the built package), answering
// { id, query, kind } with { id, found }.
import { parentPort, workerData } from 'node:worker_threads';
import { FileStore } from '../dist/stores/index.js';

const store = await FileStore.open({ directory: workerData.directory, ann: false });
parentPort.on('message', async (message) => {
  if (message === 'close') {
    await store.close();
    parentPort.close();
    return;
  }
  const found = await store.search(message.query.vector, { topK: 10 });
  const keyword = message.kind === 'hybrid' ? await store.keywordSearch(message.query.text, { topK: 10 }) : [];
  parentPort.postMessage({ id: message.id, found: found.length + keyword.length });
});
parentPort.postMessage('ready');
