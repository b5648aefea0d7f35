/**
 * New run's "from a repository" source in real Chromium, over the browser bridge: a folder under a
 * manifest root is packed by the engine, the manifest it keeps fills the Manifest field (checked,
 * with its preview), and the run created from it runs to the end with the packed prompt; a folder
 * outside the roots, an empty folder and a ref that does not exist are refused beside their field,
 * and nothing is packed.
 * Runs on: Node (tests), driving Chromium.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp.js';
import { shotPath, WAIT } from './harness.js';
import { useUiSession } from './ui-session.js';

describe('New run from a repository', () => {
  const s = useUiSession();
  let outside: ReturnType<typeof tempDir>;
  let repo: string;

  beforeAll(() => {
    outside = tempDir('panoptes-outside-');
    repo = join(s.dir, 'service');
    mkdirSync(join(repo, 'src'), { recursive: true });
    writeFileSync(join(repo, 'src', 'main.ts'), 'export const answer = 42;\n');
    writeFileSync(join(repo, 'README.md'), '# service\n');
    execFileSync('git', ['-C', repo, 'init', '-q']);
    mkdirSync(join(s.dir, 'empty'));
    mkdirSync(join(outside.dir, 'elsewhere'));
    writeFileSync(join(outside.dir, 'elsewhere', 'x.ts'), 'export {};\n');
  });
  afterAll(() => outside?.cleanup());

  const openForm = async () => {
    await s.page.goto(`${s.ui.origin}/#/new/example`);
    await expect.poll(() => s.page.getByTestId('create-run').textContent(), WAIT).toBe('Create run · 144 calls');
    // The example's scorers want a target; a packed repository has none.
    await s.page.locator('[data-testid=new-run-scoring] textarea').fill('');
    await s.page.getByTestId('epochs').fill('1');
    await s.page.getByTestId('repository-source').locator('summary').click();
  };

  it('packs a folder, fills the manifest with it, and the run answers the packed prompt', async () => {
    await s.page.goto(s.ui.appUrl);
    await openForm();
    await s.page.getByTestId('repo-source').fill(repo);
    await s.page.getByTestId('repo-instruction').fill('Review this service.');
    await s.page.getByTestId('repo-pack').click();
    await expect.poll(() => s.page.getByTestId('repo-pack-summary').textContent(), WAIT).toBe(
      'Packed service: 1 vignette, 2 of 2 files (100.0% of the characters), fitted to 128,000 tokens with 4,096 kept for the answer.',
    );
    await s.page.getByTestId('repository-source').screenshot({ path: shotPath('new-run-repository') });
    const manifestPath = await s.page.getByTestId('manifest-path').inputValue();
    expect(manifestPath.startsWith(join(s.dir, 'data', 'manifests'))).toBe(true);
    expect(manifestPath).toMatch(/service-pack\.jsonl$/);
    await expect.poll(() => s.page.getByTestId('create-run').textContent(), WAIT).toBe('Create run · 2 calls');
    await s.page.getByTestId('create-run').click();
    await s.page.waitForURL(/#\/runs\/r[0-9a-z]+$/);
    const runId = decodeURIComponent(s.page.url().split('#/runs/')[1]!);
    await expect.poll(() => s.page.locator('.view-header [data-testid=status]').textContent(), WAIT).toBe('done');
    const page1 = await s.ui.engine.service.responses({ runId });
    expect(page1.items).toHaveLength(2);
    const detail = await s.ui.engine.service.scoreDetail({ runId, vignetteId: 'service' });
    expect(detail.vignette.prompt).toMatch(/^Review this service\.\n\nRepository service: /);
    expect(detail.vignette.prompt).toContain('===== FILE: src/main.ts =====\nexport const answer = 42;\n');
    expect(s.problems).toEqual([]);
  });

  it('refuses a folder outside the roots, an empty folder and a missing ref beside their field', async () => {
    await openForm();
    const before = await s.page.getByTestId('manifest-path').inputValue();
    await s.page.getByTestId('repo-source').fill(join(outside.dir, 'elsewhere'));
    await s.page.getByTestId('repo-pack').click();
    await expect.poll(() => s.page.getByTestId('error-repoSource').textContent(), WAIT).toMatch(/is outside the folders data files are read from over this server/);

    await s.page.getByTestId('repo-source').fill(join(s.dir, 'empty'));
    await s.page.getByTestId('repo-pack').click();
    await expect.poll(() => s.page.getByTestId('error-repoSource').textContent(), WAIT).toBe('source: empty has no text files to pack');

    await s.page.getByTestId('repo-source').fill(repo);
    await s.page.getByTestId('repo-diff').fill('main..nowhere');
    await s.page.getByTestId('repo-pack').click();
    await expect.poll(() => s.page.getByTestId('error-repoDiff').textContent(), WAIT).toMatch(/^diff: no such ref in .*: main$/);
    expect(await s.page.getByTestId('repo-pack-summary').count()).toBe(0);
    expect(await s.page.getByTestId('manifest-path').inputValue()).toBe(before);
  });
});
