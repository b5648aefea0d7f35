#!/usr/bin/env node
// The `panoptes` command. `npm install` (prepare) builds it: the command line is bundled into
// dist/cli/ (rolldown.config.ts), a few files that Node loads faster than one per source module.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const entry = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(fileURLToPath(entry))) {
  console.error('panoptes: not built yet; run `npm install` (or `npm run build`) in the project folder first.');
  process.exit(2);
}
const { main } = await import(entry.href);
process.exitCode = await main(process.argv);
