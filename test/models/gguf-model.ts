/**
 * The tiny real GGUF model the gguf tests run (../shared/models/README.md), and why they skip
 * when they must: no model file, node-llama-cpp not installed, or its prebuilt addon not loading
 * on this machine (checked in a child process, bounded, so a broken addon cannot hang the test).
 * Runs on: Node (tests).
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

export const MODEL = resolve('../shared/models/llama-2-tiny-random.gguf');

async function skipReason(): Promise<string | undefined> {
  if (!existsSync(MODEL)) return `no model file at ${MODEL}`;
  let lib: string;
  try {
    lib = createRequire(import.meta.url).resolve('node-llama-cpp');
  } catch {
    return 'node-llama-cpp (an optional dependency) is not installed';
  }
  const probe = `import(${JSON.stringify(pathToFileURL(lib).href)}).then((l) => l.getLlama({ gpu: false, build: 'never', logLevel: l.LlamaLogLevel.error })).then(() => process.exit(0))`;
  return new Promise((done) => {
    execFile(process.execPath, ['-e', probe], { timeout: 60_000, killSignal: 'SIGKILL' }, (err, _out, stderr) => {
      done(err ? `node-llama-cpp's prebuilt addon does not load here: ${(stderr.trim().split('\n').at(-1) ?? err.message).slice(0, 200)}` : undefined);
    });
  });
}

/** Why the gguf tests cannot run here, or undefined when they can. */
export const GGUF_SKIP = await skipReason();

/** A suite's name saying why it is skipped, when it is. */
export function ggufSuite(name: string): string {
  return GGUF_SKIP === undefined ? name : `${name} (skipped: ${GGUF_SKIP})`;
}
