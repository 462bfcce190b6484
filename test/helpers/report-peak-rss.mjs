// Preloaded with `node --import` into a measured child: on exit, report the process's peak resident set size
// (getrusage's ru_maxrss, in KiB) as the last line on stderr, where `runMeasured` reads it.
process.on('exit', () => {
  process.stderr.write(`\npeak-rss-kib ${process.resourceUsage().maxRSS}\n`);
});
