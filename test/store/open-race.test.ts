/**
 * Two processes opening one data folder at the same instant both open it. A database the last
 * connection closed is in rollback-journal mode; each opening process switches it to WAL, and when
 * two switch at once SQLite answers one of them SQLITE_BUSY without waiting for its busy timeout
 * (waiting could deadlock). The connection tries again within the timeout. Real child processes
 * (the built store) are started together, each opening at one agreed instant, over and over.
 * Runs on: Node (tests).
 */
import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Store } from '../../core/store/store.js';
import { tempDir } from '../helpers/temp.js';

const STORE = pathToFileURL(resolve('dist/core/store/store.js')).href;
/** Each child waits for the agreed instant, opens the store, and says how it went. */
const CHILD = `
const [path, at] = process.argv.slice(1);
const { Store } = await import(${JSON.stringify(STORE)});
while (Date.now() < Number(at)) {}
try {
  new Store(path).close();
  process.stdout.write('ok');
} catch (err) {
  process.stdout.write('failed: ' + err.message);
}
`;
const PAIRS = 20;

let tmp: ReturnType<typeof tempDir>;
beforeAll(() => {
  tmp = tempDir();
});
afterAll(() => tmp.cleanup());

function open(path: string, at: number): Promise<string> {
  return new Promise((res) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', CHILD, path, String(at)]);
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('close', () => res(out));
  });
}

it(`two processes opening a closed database at one instant both open it (${PAIRS} pairs)`, async () => {
  const failures: string[] = [];
  for (let i = 0; i < PAIRS; i++) {
    const path = join(tmp.dir, `pair-${i}.db`);
    new Store(path).close();
    // Far enough ahead that both children have loaded the store before it.
    const at = Date.now() + 400;
    const outs = await Promise.all([open(path, at), open(path, at)]);
    for (const o of outs) if (o !== 'ok') failures.push(`pair ${i}: ${o}`);
  }
  expect(failures).toEqual([]);
}, 120_000);
