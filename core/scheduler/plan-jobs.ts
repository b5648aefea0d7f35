/**
 * planJobs: one job per (model, epoch), epochs numbered from 1, in model-major order.
 * Runs on: Node (core).
 */
import type { Run } from '../domain.js';

export function planJobs(run: Pick<Run, 'models' | 'epochs'>): Array<{ model: string; epoch: number }> {
  const jobs: Array<{ model: string; epoch: number }> = [];
  for (const model of run.models) {
    for (let epoch = 1; epoch <= run.epochs; epoch++) jobs.push({ model, epoch });
  }
  return jobs;
}
