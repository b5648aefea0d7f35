/**
 * Route parameters as long as the contract allows reach the contract: a 1,000-character vignette id
 * (and one of accented letters, percent-encoded to 4,000 bytes) gets the server's own error shape
 * from the call, never the HTTP framework's own body.
 */
import { afterEach, expect, it } from 'vitest';
import { initTelemetry } from '../../core/telemetry.js';
import { startApi, type ApiHarness } from './harness.js';

initTelemetry({ defaultLevel: 'silent' });

let api: ApiHarness | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

it('ids up to the contract limit are reachable; longer ones are refused in the one error shape', async () => {
  api = await startApi({ startScheduler: false });
  for (const id of ['v'.repeat(150), 'v'.repeat(1000), 'é'.repeat(1000)]) {
    const res = await api.call('GET', `/runs/r-none/scores/vignettes/${encodeURIComponent(id)}`);
    expect(res.status).toBe(404);
    expect(res.json).toMatchObject({ ok: false, error: { code: 'not_found' } });
  }
  const tooLong = await api.call('GET', `/runs/r-none/scores/vignettes/${'v'.repeat(1001)}`);
  expect(tooLong.status).toBe(400);
  expect(tooLong.json).toMatchObject({ ok: false, error: { code: 'invalid_input', where: 'vignetteId' } });
});
