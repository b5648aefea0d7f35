/**
 * What the desktop app's package holds from node_modules: the packages Electron's main process
 * loads (DESKTOP_RUNTIME, checked against electron/main.ts's imports by
 * test/electron/packaging.test.ts) and what they depend on, and of node-llama-cpp's prebuilt
 * binaries only the CPU build of the platform being packaged (the GGUF provider runs with
 * `gpu: false`). electron-builder would otherwise pack every production dependency: the CLI's own
 * (fastify, commander, ...) and about 680 MB of llama.cpp builds for other platforms and GPUs.
 * Runs on: Node (build script).
 */
const { existsSync, readFileSync } = require('node:fs');
const { join } = require('node:path');

/** npm packages that electron/main.ts and what it imports load at run time. */
const DESKTOP_RUNTIME = [
  '@anthropic-ai/sdk',
  '@stdlib/math-base-special-erfc',
  '@stdlib/math-base-special-gammaln',
  '@stdlib/stats-base-dists-binomial-cdf',
  '@stdlib/stats-base-dists-normal-quantile',
  '@stdlib/stats-base-dists-t-cdf',
  '@stdlib/stats-base-dists-t-quantile',
  'ajv',
  'better-sqlite3',
  'dotenv',
  'fastest-levenshtein',
  'gpt-tokenizer',
  'isbinaryfile',
  'lru-cache',
  'node-llama-cpp',
  'openai',
  'pino',
  'pino-pretty',
  'quickjs-emscripten',
  're2js',
  'tar',
  'unicode-case-folding',
  'yaml',
  'zod',
];

const LLAMA_SCOPE = '@node-llama-cpp/';

/** node-llama-cpp's name for a platform: linux, mac, win. */
function llamaOs(platform) {
  return { darwin: 'mac', win32: 'win' }[platform] ?? platform;
}

/** The one llama.cpp binary package the app needs on this platform and arch. */
function llamaBinaryFor(platform, arch) {
  const os = llamaOs(platform);
  return os === 'mac' && arch === 'arm64' ? `${LLAMA_SCOPE}mac-arm64-metal` : `${LLAMA_SCOPE}${os}-${arch}`;
}

function manifestOf(root, name) {
  const file = join(root, 'node_modules', name, 'package.json');
  return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : null;
}

/** Every installed package reachable from `roots` through dependencies and optional dependencies. */
function reachable(root, roots) {
  const seen = new Set();
  const stack = [...roots];
  while (stack.length > 0) {
    const name = stack.pop();
    if (seen.has(name)) continue;
    const pkg = manifestOf(root, name);
    if (pkg === null) continue;
    seen.add(name);
    stack.push(...Object.keys({ ...pkg.dependencies, ...pkg.optionalDependencies }));
  }
  return seen;
}

/**
 * The installed packages the desktop package leaves out, for `platform`/`arch`: production
 * dependencies the app never loads, and every llama.cpp binary but the one it runs.
 */
function excludedPackages(root, platform = process.platform, arch = process.arch) {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const production = reachable(root, Object.keys({ ...pkg.dependencies, ...pkg.optionalDependencies }));
  const keep = llamaBinaryFor(platform, arch);
  const desktop = [...reachable(root, DESKTOP_RUNTIME)].filter((n) => !n.startsWith(LLAMA_SCOPE) || n === keep);
  const wanted = new Set(desktop);
  return [...production].filter((n) => !wanted.has(n)).sort();
}

module.exports = { DESKTOP_RUNTIME, excludedPackages, llamaBinaryFor, reachable };
