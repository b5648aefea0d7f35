#!/usr/bin/env node
// The `panoptes` command. `npm install` (prepare) builds it: the command line is bundled into
// dist/cli/ (rolldown.config.ts), a few files that Node loads faster than one per source module.
// CommonJS, as the bundle is: Node 20 sets up its ES-module loader for an ES-module entry, a cost
// that alone would be a good part of the command line's start-up.
'use strict';
const { existsSync } = require('node:fs');
const { join } = require('node:path');

const entry = join(__dirname, '..', 'dist', 'cli', 'main.cjs');
if (!existsSync(entry)) {
  console.error('panoptes: not built yet; run `npm install` (or `npm run build`) in the project folder first.');
  process.exit(2);
}
require(entry)
  .main(process.argv)
  .then((code) => {
    process.exitCode = code;
  });
