#!/usr/bin/env node
// Axon ships TypeScript sources; tsx loads them without a build step. The package's own tsconfig is named
// explicitly so decorators compile the same way whatever the working directory is.
import { register } from 'tsx/esm/api';
import { fileURLToPath } from 'node:url';

register({ tsconfig: fileURLToPath(new URL('../tsconfig.json', import.meta.url)) });
const { main } = await import(fileURLToPath(new URL('../src/cli/main.ts', import.meta.url)));
process.exitCode = await main(process.argv.slice(2));
