/**
 * PANOPTES_LOG as the telemetry design says: a level, then levels per component
 * (`info,router=debug`); anything unreadable falls back to `info` with exactly one warning that
 * says why — in-process and through the real `panoptes` binary, where it must not be a stack trace.
 */
import type { DestinationStream } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { parseLogSpec } from '../../core/log-spec.js';
import { componentLogger, initTelemetry, resetTelemetryForTests } from '../../core/telemetry.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const saved = process.env.PANOPTES_LOG;
afterEach(() => {
  if (saved === undefined) delete process.env.PANOPTES_LOG;
  else process.env.PANOPTES_LOG = saved;
  resetTelemetryForTests();
});

function capture(spec: string): Array<{ level: number; msg: string; component?: string }> {
  const lines: string[] = [];
  const destination: DestinationStream = { write: (line: string) => void lines.push(line) };
  resetTelemetryForTests();
  process.env.PANOPTES_LOG = spec;
  const root = initTelemetry({ destination, defaultLevel: 'warn' });
  root.info('root info');
  componentLogger(root, 'router').debug('router debug');
  componentLogger(root, 'router').child({ host: 'h' }).debug('router child debug');
  componentLogger(root, 'http').debug('http debug');
  componentLogger(root, 'http').info('http info');
  return lines.map((l) => JSON.parse(l) as { level: number; msg: string; component?: string });
}

describe('PANOPTES_LOG', () => {
  it('reads a level and per-component levels', () => {
    expect(parseLogSpec('info,router=debug', 'warn')).toEqual({ level: 'info', components: { router: 'debug' }, problem: null });
    expect(parseLogSpec(' router=DEBUG , worker-listener=error ', 'warn')).toEqual({
      level: 'warn',
      components: { router: 'debug', 'worker-listener': 'error' },
      problem: null,
    });
    expect(parseLogSpec(undefined, 'warn')).toEqual({ level: 'warn', components: {}, problem: null });
    expect(parseLogSpec('', 'info').level).toBe('info');
    expect(parseLogSpec('silent', 'info').level).toBe('silent');
  });

  it('refuses what it cannot read as a whole, falling back to info with the reason', () => {
    for (const bad of ['loud', 'info,router=loud', 'info,Router!=debug', '=debug', 'info;router=debug']) {
      const spec = parseLogSpec(bad, 'warn');
      expect(spec.level).toBe('info');
      expect(spec.components).toEqual({});
      expect(spec.problem).toMatch(/is not valid .*logging at info/);
    }
  });

  it('makes one component more verbose without the others', () => {
    const lines = capture('info,router=debug');
    expect(lines.map((l) => l.msg)).toEqual(['root info', 'router debug', 'router child debug', 'http info']);
    expect(lines[1]!.component).toBe('router');
  });

  it('falls back to info with one warning instead of throwing', () => {
    const lines = capture('verbose-please');
    expect(lines.filter((l) => l.level === 40)).toHaveLength(1);
    expect(lines[0]!.msg).toContain('PANOPTES_LOG="verbose-please" is not valid');
    expect(lines.map((l) => l.msg).slice(1)).toEqual(['root info', 'http info']);
  });

  it('the real binary warns once and carries on', async () => {
    const tmp = tempDir();
    try {
      const res = await runCli(['runs', '--data-dir', tmp.dir], { PANOPTES_LOG: 'loud' });
      expect(res.code).toBe(0);
      expect(res.stderr.match(/is not valid/g)).toHaveLength(1);
      expect(res.stderr).not.toMatch(/\n\s+at /);
      expect(res.stdout).toContain('no runs');
    } finally {
      tmp.cleanup();
    }
  });
});
