/**
 * The desktop package holds what the app loads and nothing else: the list of packages Electron's
 * main process imports is checked against its real import graph (so it cannot go stale when an
 * import is added), the CLI's dependencies stay out, and of llama.cpp's binaries only the CPU build
 * of the platform being packaged goes in.
 * Runs on: Node (tests).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
const { DESKTOP_RUNTIME, excludedPackages, llamaBinaryFor } = require('../../scripts/desktop-files.cjs') as {
  DESKTOP_RUNTIME: string[];
  excludedPackages(root: string, platform?: string, arch?: string): string[];
  llamaBinaryFor(platform: string, arch: string): string;
};

interface Cruised {
  modules: { source: string; dependencies: { module: string; dependencyTypes: string[] }[] }[];
}

/** npm packages that electron/main.ts reaches through its own modules, types aside. */
function packagesMainLoads(): string[] {
  const out = execFileSync('node_modules/.bin/depcruise', ['electron/main.ts', '--config', '.dependency-cruiser.cjs', '--output-type', 'json'], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const cruised = JSON.parse(out) as Cruised;
  const names = new Set<string>();
  for (const m of cruised.modules) {
    if (!/^(core|electron)\//.test(m.source)) continue;
    // A package resolved by name at run time (handed to a worker thread) is loaded without an import.
    for (const r of readFileSync(m.source, 'utf8').matchAll(/\.resolve\('((?:@[\w.-]+\/)?[\w.-]+)'\)/g)) names.add(r[1]!);
    for (const d of m.dependencies) {
      if (!d.dependencyTypes.some((t) => t.startsWith('npm')) || d.dependencyTypes.includes('type-only')) continue;
      const parts = d.module.split('/');
      names.add(d.module.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!);
    }
  }
  names.delete('electron'); // Electron itself is the runtime, not a packed dependency.
  return [...names].sort();
}

describe('the desktop package', () => {
  it('lists exactly the packages the main process loads', () => {
    expect([...DESKTOP_RUNTIME].sort()).toEqual(packagesMainLoads());
  });

  it('leaves out the CLI-only dependencies and other platforms and GPUs of llama.cpp', () => {
    const excluded = excludedPackages(process.cwd(), 'linux', 'x64');
    for (const name of ['fastify', '@fastify/static', 'cli-progress', 'ws']) expect(excluded).toContain(name);
    for (const name of excluded.filter((n) => n.startsWith('@node-llama-cpp/'))) expect(name).not.toBe('@node-llama-cpp/linux-x64');
    for (const name of DESKTOP_RUNTIME) expect(excluded).not.toContain(name);
    expect(excluded).not.toContain('@node-llama-cpp/linux-x64');
  });

  it("keeps node-llama-cpp's CPU build for each platform", () => {
    expect(llamaBinaryFor('linux', 'x64')).toBe('@node-llama-cpp/linux-x64');
    expect(llamaBinaryFor('linux', 'arm64')).toBe('@node-llama-cpp/linux-arm64');
    expect(llamaBinaryFor('darwin', 'arm64')).toBe('@node-llama-cpp/mac-arm64-metal');
    expect(llamaBinaryFor('darwin', 'x64')).toBe('@node-llama-cpp/mac-x64');
    expect(llamaBinaryFor('win32', 'x64')).toBe('@node-llama-cpp/win-x64');
  });

  it('is what the electron-builder configuration packs', () => {
    const config = require('../../electron-builder.config.cjs') as { files: string[] };
    const excluded = excludedPackages(process.cwd());
    expect(config.files).toEqual(expect.arrayContaining(excluded.map((n) => `!node_modules/${n}/**`)));
    expect(config.files).toContain('dist/**');
  });
});
