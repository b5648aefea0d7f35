/**
 * TLS between coordinator and workers (node:tls), with a self-signed certificate made by openssl at
 * test time: a worker that trusts it (as a CA file or by pinned fingerprint) registers and runs a
 * sweep; one that trusts another certificate, only the system's CAs, or the wrong fingerprint is
 * refused; plaintext to the TLS port — a plain worker or a raw register frame — is refused too.
 * Runs on: Node (tests).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { certificateFingerprint } from '../../core/remote/transport.js';
import { tempDir } from '../helpers/temp.js';
import { expectExactlyOnce } from '../helpers/verify.js';
import { RawPeer, assertBuilt, registerFrame, spawnWorker, startCoordinator, stopWorkers, tallyLogger, waitFor, type Coordinator, type WorkerProcess } from './harness.js';

// The test certificate is made with openssl at test time (Debian ships it); without it, say so.
const hasOpenssl = spawnSync('openssl', ['version']).status === 0;
const certs = tempDir('panoptes-tls-');
const log = tallyLogger('info');
let coord: Coordinator;
const workers: WorkerProcess[] = [];

function selfSigned(name: string): { cert: string; key: string } {
  const cert = join(certs.dir, `${name}.pem`);
  const key = join(certs.dir, `${name}.key`);
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2',
    '-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost', '-keyout', key, '-out', cert,
  ], { stdio: 'ignore' });
  return { cert, key };
}

let server: { cert: string; key: string };
let other: { cert: string; key: string };

beforeAll(async () => {
  if (!hasOpenssl) return;
  assertBuilt();
  server = selfSigned('coordinator');
  other = selfSigned('other');
  coord = await startCoordinator({
    models: { 'tls-a': { latencyMs: 2 } },
    logger: log.logger,
    listener: { tls: { cert: readFileSync(server.cert), key: readFileSync(server.key) } },
  });
});

afterAll(async () => {
  await stopWorkers(workers);
  await coord?.close();
  certs.cleanup();
});

describe.skipIf(!hasOpenssl)(`TLS${hasOpenssl ? '' : ' (skipped: no openssl on PATH to make the test certificate)'}`, () => {
  it('accepts workers that trust the certificate, and refuses every other one', async () => {
    const fingerprint = certificateFingerprint(readFileSync(server.cert));
    const start = (id: string, extraArgs: string[]) => {
      const w = spawnWorker({ id, catalogPath: coord.catalogPath, port: coord.listener.port, models: 'tls-a', extraArgs });
      workers.push(w);
      return w;
    };
    start('by-ca', ['--ca', server.cert]);
    start('by-pin', ['--fingerprint', fingerprint.replace(/:/g, '').toLowerCase()]);
    const otherCa = start('other-ca', ['--ca', other.cert]);
    const systemCa = start('system-ca', ['--tls']);
    const wrongPin = start('wrong-pin', ['--fingerprint', certificateFingerprint(readFileSync(other.cert))]);
    const plain = start('plain', []);

    await waitFor(() => coord.engine.pool.list().length === 2, 20_000, 'the two trusting workers');
    for (const refused of [otherCa, systemCa, wrongPin, plain]) {
      await waitFor(() => /cannot reach coordinator|disconnected from coordinator/.test(refused.stderr()), 20_000, `${refused.id} to be refused`);
    }
    expect(otherCa.stderr()).toMatch(/self[- ]signed certificate|unable to verify/);
    expect(systemCa.stderr()).toMatch(/self[- ]signed certificate|unable to verify/);
    expect(wrongPin.stderr()).toContain('is not the pinned one');
    expect(log.count(/TLS handshake refused/)).toBeGreaterThanOrEqual(1);
    expect(coord.engine.pool.list().map((w) => w.id).sort()).toEqual(['by-ca', 'by-pin']);

    const run = await coord.engine.service.createRun({ manifestPath: coord.manifest(20), models: ['tls-a'], epochs: 4 });
    const final = await coord.engine.scheduler.runToCompletion(run.id);
    expect(final.status).toBe('done');
    expectExactlyOnce(coord.engine.store, coord.dataDir, run.id);
    expect(new Set(coord.engine.store.queries.jobs(run.id).map((j) => j.workerId))).toEqual(new Set(['by-ca', 'by-pin']));
  });

  it('refuses a plaintext register frame sent to the TLS port', async () => {
    const peer = await RawPeer.connect(coord.listener.port);
    peer.send(registerFrame({ worker_id: 'plaintext-peer', models: ['tls-a'] }));
    await peer.closed;
    expect(peer.frames).toEqual([]);
    expect(coord.engine.pool.list().map((w) => w.id)).not.toContain('plaintext-peer');
  });
});
