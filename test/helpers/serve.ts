/**
 * Starts the real `panoptes serve` as a child process on a free port and waits for its URL and
 * token lines; every server started is listed so a failing test cannot leave one running
 * (`stopStarted` after each test ends them).
 * Runs on: Node (tests).
 */
import { startCli } from './cli.js';

/** Every server a test started, so a failing test cannot leave one running. */
export const started: Array<ReturnType<typeof startCli>> = [];

/** Starts `panoptes serve` on a free port and waits for its URL and token lines. */
export async function serve(args: string[], env: NodeJS.ProcessEnv = {}) {
  const cli = startCli(['serve', '--port', '0', ...args], env);
  started.push(cli);
  let stdout = '';
  cli.child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  const deadline = Date.now() + 20_000;
  for (;;) {
    const url = /serving the HTTP API at (http:\/\/127\.0\.0\.1:(\d+))/.exec(stdout);
    const token = /^token: (.+)$/m.exec(stdout);
    if (url && token) return { cli, url: url[1]!, port: Number(url[2]), tokenLine: token[1]!, stdout: () => stdout };
    if (Date.now() > deadline || cli.child.exitCode !== null) throw new Error(`serve did not start:\n${stdout}\n${cli.stderr()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** SIGKILLs every server started and still running, and waits until each has ended; for `afterEach`. */
export async function stopStarted(): Promise<void> {
  for (const cli of started.splice(0)) {
    if (cli.child.exitCode === null && cli.child.signalCode === null) cli.child.kill('SIGKILL');
    await cli.done;
  }
}
