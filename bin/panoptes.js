#!/usr/bin/env node
// The `panoptes` command. The TypeScript sources are compiled to dist/ by `npm install` (prepare).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const entry = new URL('../dist/core/cli/main.js', import.meta.url);
if (!existsSync(fileURLToPath(entry))) {
  console.error('panoptes: not built yet; run `npm install` (or `npm run build`) in the project folder first.');
  process.exit(2);
}
const { main } = await import(entry.href);
process.exitCode = await main(process.argv);
