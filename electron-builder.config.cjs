/**
 * Packaging the desktop app with electron-builder: `npm run dist` builds this platform's installers
 * into release/ (Linux: AppImage + deb; macOS: dmg; Windows: nsis), `npm run package` an unpacked
 * app for a quick look. Native code is built for ONE platform and arch at a time, so package on each
 * target OS (a CI matrix), never cross-build.
 * - Only what the app loads is packed (scripts/desktop-files.cjs): not the CLI's dependencies, and of
 *   node-llama-cpp's binaries only this platform's CPU build. `npm run package:size` prints the size
 *   of that file set.
 * - better-sqlite3: the app loads the Electron-ABI copy that scripts/electron-native.mjs builds into
 *   .electron-native/ (through better-sqlite3's `nativeBinding`). It ships outside app.asar, in
 *   resources/native/, because a native addon cannot be loaded from inside an archive.
 * - electron-builder's own rebuild stays off: it would rebuild node_modules in place and replace the
 *   Node-ABI build the CLI and the tests use.
 * Runs on: Node (build script).
 */
const { excludedPackages } = require('./scripts/desktop-files.cjs');

/** Files of the project the app needs; node_modules is added by electron-builder, less the exclusions. */
const APP_FILES = [
  'package.json',
  'dist/**',
  'examples/**',
  '!dist/bench/**',
  // The command line's bundle: the app runs the compiled modules of dist/core and dist/electron.
  '!dist/cli/**',
  '!dist/**/*.map',
  '!node_modules/better-sqlite3/build/**',
  '!node_modules/better-sqlite3/deps/**',
  '!node_modules/better-sqlite3/src/**',
];

module.exports = {
  appId: 'dev.panoptes.desktop',
  productName: 'Panoptes',
  copyright: 'Copyright © Panoptes contributors',
  directories: { output: 'release', buildResources: 'build-resources' },
  files: [...APP_FILES, ...excludedPackages(__dirname).map((name) => `!node_modules/${name}/**`)],
  extraResources: [{ from: '.electron-native/better_sqlite3.node', to: 'native/better_sqlite3.node' }],
  asar: true,
  npmRebuild: false,
  nodeGypRebuild: false,
  buildDependenciesFromSource: false,
  linux: {
    target: ['AppImage', 'deb'],
    category: 'Development',
    maintainer: 'Panoptes contributors',
    synopsis: 'Run LLM eval sweeps and watch them live',
  },
  deb: { packageCategory: 'devel' },
  mac: { target: ['dmg'], category: 'public.app-category.developer-tools', hardenedRuntime: true },
  dmg: { title: 'Panoptes' },
  win: { target: ['nsis'] },
  nsis: { oneClick: false, perMachine: false, allowToChangeInstallationDirectory: true },
};
