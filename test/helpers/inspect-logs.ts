/**
 * inspect_ai's EvalLog schema for the export tests (test/export/fixtures/inspect-evallog-schema.json,
 * extracted from its published OpenAPI file by scripts/inspect-evallog-schema.py), the logs of a
 * folder as inspect's listing reads them, and the shape the tests read them by.
 * Runs on: Node (tests).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';
import { expect } from 'vitest';

const schema = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'export', 'fixtures', 'inspect-evallog-schema.json'), 'utf8')) as Record<string, unknown>;
// strict off: OpenAPI's `discriminator` is an annotation here (each oneOf branch is checked whole).
const ajv = new Ajv2020({ strict: false, allErrors: true });
formats.default(ajv);
export const validateEvalLog = ajv.compile(schema);
export const validateEvalSet = ajv.compile({ ...schema, $ref: '#/$defs/EvalSet' });
/** inspect lists a `.json` file as a log only when its name matches this (log/_file.py's log_file_pattern). */
export const INSPECT_LOG_FILE = /^\d{4}-\d{2}-\d{2}T\d{2}[:-]\d{2}[:-]\d{2}.*$/;

export interface Sample {
  id: string;
  epoch: number;
  input: { role: string; content: string }[];
  target: string;
  messages: { role: string; content: string }[];
  output: { model: string; completion: string; choices: { message: { role: string; content: string }; stop_reason: string }[]; usage: { input_tokens: number; output_tokens: number; total_tokens: number } };
  scores: Record<string, { value: number; answer: string; explanation: string }>;
  model_usage: Record<string, { total_tokens: number }>;
}
export interface Log {
  version: number;
  status: string;
  eval: { eval_set_id: string; eval_id: string; model: string; task: string; created: string; task_args: Record<string, string>; dataset: { samples: number } };
  samples: Sample[];
  results: { total_samples: number; completed_samples: number; scores: { name: string; metrics: Record<string, { value: number }>; scored_samples: number }[] };
  stats: { started_at: string; completed_at: string; model_usage: Record<string, { input_tokens: number; output_tokens: number; total_tokens: number }> };
}

export function readLogs(dir: string): Log[] {
  return readdirSync(dir)
    .filter((f) => INSPECT_LOG_FILE.test(f))
    .sort()
    .map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as Log);
}

export function expectValid(log: Log): void {
  const ok = validateEvalLog(log);
  expect(ok ? [] : validateEvalLog.errors?.slice(0, 5)).toEqual([]);
}

