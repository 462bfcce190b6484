#!/usr/bin/env node
// The installed `axon` command: the built JavaScript under dist/, run by plain Node. In a checkout of the
// repository, dist/ is written by `npm install` (the `prepare` script) or `npm run build`; `npm run axon --`
// runs the TypeScript sources instead.
import('../dist/app/cli/main.js').then(
  async ({ main }) => {
    process.exitCode = await main(process.argv.slice(2));
  },
  (error) => {
    const missing = error?.code === 'ERR_MODULE_NOT_FOUND' && String(error.message).includes('dist');
    console.error(missing ? 'axon: the package is not built (dist/ is missing). Run `npm run build` in its folder.' : error);
    process.exitCode = 70;
  },
);
