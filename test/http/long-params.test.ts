/**
 * Route parameters as long as the contract allows reach the contract: a 1,000-character vignette id
 * (and one of accented letters, percent-encoded to 6,000 bytes) is found in a stored run and its
 * records served; a missing one gets the server's own error shape from the call, and one past the
 * limit the contract's refusal, never the HTTP framework's own body.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { initTelemetry } from '../../core/telemetry.js';
import { startApi, waitForRun, type ApiHarness } from './harness.js';

initTelemetry({ defaultLevel: 'silent' });

let api: ApiHarness | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

const LONG_IDS = ['v'.repeat(150), 'v'.repeat(1000), 'é'.repeat(1000)];

it('ids up to the contract limit are reachable; longer ones are refused in the one error shape', async () => {
  api = await startApi();
  const manifest = join(api.dir, 'long-ids.jsonl');
  writeFileSync(manifest, LONG_IDS.map((id) => JSON.stringify({ id, prompt: 'say a' })).join('\n') + '\n');
  const created = await api.call('POST', '/runs', { body: { manifest, models: ['mock-strong'], epochs: 1 } });
  expect(created.status).toBe(201);
  const runId = created.json.id as string;
  await waitForRun(api, runId);

  for (const id of LONG_IDS) {
    const found = await api.call('GET', `/runs/${runId}/scores/vignettes/${encodeURIComponent(id)}`);
    expect(found.status).toBe(200);
    expect(found.json).toMatchObject({ runId, vignette: { id }, responses: [{ model: 'mock-strong', epoch: 1 }] });
    const missing = await api.call('GET', `/runs/${runId}/scores/vignettes/${encodeURIComponent(id.slice(1) + 'w')}`);
    expect(missing.status).toBe(404);
    expect(missing.json).toMatchObject({ ok: false, error: { code: 'not_found', where: 'vignetteId' } });
  }
  const tooLong = await api.call('GET', `/runs/${runId}/scores/vignettes/${'v'.repeat(1001)}`);
  expect(tooLong.status).toBe(400);
  expect(tooLong.json).toMatchObject({ ok: false, error: { code: 'invalid_input', where: 'vignetteId' } });
});
