// `node --import ./bench/cpu-at-exit.mjs …` prints the process's CPU time (user + system, µs) on stderr when it
// exits: bench/startup.ts --cpu reads it, a figure a busy machine disturbs far less than wall time.
process.on('exit', () => {
  const usage = process.cpuUsage();
  process.stderr.write(`\naxon-bench-cpu-us ${usage.user + usage.system}\n`);
});
