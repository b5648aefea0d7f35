/**
 * The contract's inputs about this machine's hosts rather than a run: the router's metrics, a probe
 * of hosts, and the worker listener's address. Re-exported by contract.ts, the one API.
 * Runs on: Node (core).
 */
import { z } from 'zod';

export const MetricsInputSchema = z
  .object({
    /** Only calls at or after this time (ms since the epoch; default: the last 24 hours). */
    since: z.number().int().min(0).optional(),
    /** Only calls for this logical model. */
    model: z.string().min(1).max(200).optional(),
    /** Only calls to this provider (its catalog name). */
    provider: z.string().min(1).max(200).optional(),
    /** Only calls made under this profile (its catalog name, or `default`). */
    profile: z.string().min(1).max(200).optional(),
    /** How many recent calls to list (default 100). Aggregates cover every matching call. */
    limit: z.number().int().min(1).max(1000).optional(),
  })
  .strict();
export type MetricsInput = z.infer<typeof MetricsInputSchema>;

export const ProbeInputSchema = z
  .object({
    /** The logical models whose hosts to probe (default: every model in the catalog). */
    models: z
      .array(z.string().min(1).max(200))
      .min(1, 'name at least one model, or leave models out to probe all')
      .max(1000)
      .optional(),
  })
  .strict();
export type ProbeInput = z.infer<typeof ProbeInputSchema>;

export const StartWorkerListenerInputSchema = z
  .object({
    /** The address to bind: 127.0.0.1 (this machine only, the default), 0.0.0.0 (every interface), or one interface's address. */
    host: z
      .string()
      .min(1)
      .max(253)
      .regex(/^[\w.:-]+$/, 'an IP address or a host name')
      .optional(),
    /** The TCP port (default 7878; 0: any free port). */
    port: z.number().int().min(0).max(65535).optional(),
  })
  .strict();
export type StartWorkerListenerInput = z.infer<typeof StartWorkerListenerInputSchema>;
