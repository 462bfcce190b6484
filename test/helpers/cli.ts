import { main } from '../../app/cli/main.ts';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run the `axon` command in-process from `cwd`, capturing what it prints (progress goes to stderr, not a TTY). */
export async function runAxon(cwd: string, argv: string[]): Promise<CliResult> {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const code = await main(argv, {
    out: (text) => stdout.push(text),
    err: (text) => stderr.push(text),
    errorStream: {
      write: (text: string) => {
        stderr.push(text);
        return true;
      },
      isTTY: false,
    } as unknown as NodeJS.WritableStream,
    cwd,
  });
  return { code, stdout: stdout.join('\n'), stderr: stderr.join('\n') };
}
