/**
 * Runs the real `panoptes` command (bin/panoptes.cjs over the built dist/) as a child process.
 * Runs on: Node (tests).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { resolve } from 'node:path';

export const BIN = resolve('bin/panoptes.cjs');

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export function startCli(args: string[], env: NodeJS.ProcessEnv = {}): { child: ChildProcessWithoutNullStreams; done: Promise<CliResult>; stderr: () => string } {
  const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, PANOPTES_LOG: 'warn', ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<CliResult>((res) => child.on('close', (code, signal) => res({ code, signal, stdout, stderr })));
  return { child, done, stderr: () => stderr };
}

export function runCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return startCli(args, env).done;
}

/** Resolves once the child's stderr matches `pattern`, with the match. */
export async function waitForStderr(cli: ReturnType<typeof startCli>, pattern: RegExp, timeoutMs = 20_000): Promise<RegExpMatchArray> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const m = cli.stderr().match(pattern);
    if (m) return m;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${pattern}; stderr so far:\n${cli.stderr()}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
