/**
 * Kind-specific provider options (`options` in a catalog's provider or host entry), validated with
 * the provider's own schema so a typo names its place instead of being ignored.
 * Runs on: Node (core).
 */
import type { z } from 'zod';
import { PanoptesError } from '../../domain.js';
import { formatZodIssues } from '../../validation.js';

export function parseProviderOptions<S extends z.ZodType>(schema: S, raw: unknown, where: string): z.output<S> {
  const parsed = schema.safeParse(raw ?? {});
  if (!parsed.success) {
    throw new PanoptesError('invalid_input', `${where}: ${formatZodIssues(parsed.error)}`, { where });
  }
  return parsed.data;
}
