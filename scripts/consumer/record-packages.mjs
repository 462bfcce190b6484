// `node --import ./record-packages.mjs …` prints the name of every package a module is loaded from. The file
// registers itself: on --import it runs on the main thread and registers its own resolve hook.
import { isMainThread } from 'node:worker_threads';
import { register } from 'node:module';

if (isMainThread) register(import.meta.url);

export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  const match = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(result.url.slice(result.url.lastIndexOf('/node_modules/')));
  if (match) process.stdout.write(`${match[1]}\n`);
  return result;
}
