/**
 * The WorkerHandle seam: the only thing the scheduler knows about a worker. A LocalWorker runs
 * jobs in-process; a RemoteWorker fronts a TCP connection to a `panoptes worker` process.
 * Runs on: Node (core).
 */
import type { ErrorCode, EvalJob, HostWait, JobOutcome, ResponseRecord, StageAnswer, Usage } from '../domain.js';
import type { Unavailable } from '../models/model-client.js';

/** A vignette given up on: where it sits in the manifest, the tries spent and the last error. */
export interface GaveUp {
  vignetteIndex: number;
  attempts: number;
  code: ErrorCode;
  message: string;
}

/** Where a worker delivers records as they come; the scheduler lands them in batches. */
export interface JobSink {
  record(record: ResponseRecord): void;
  /** A vignette given up on after its attempts, with its last error (the job goes on with the rest). */
  gaveUp?(failure: GaveUp): void;
  /** The host the job's calls are waiting for (down), or null when none waits any more. */
  waiting?(wait: HostWait | null): void;
  /** Call `callIdx` of a staged vignette's chain answered (stored at once, so a resumed job does not pose it again). */
  stage?(vignetteIndex: number, callIdx: number, answer: StageAnswer): void;
}

export interface WorkerInfo {
  id: string;
  kind: 'local' | 'remote';
  /** Jobs this worker takes at once. */
  capacity: number;
  /** Logical models served, or 'all'. */
  models: string[] | 'all';
  alive: boolean;
  inFlight: number;
  address?: string;
  version?: string;
  connectedAt: number;
  /** Jobs in flight with the progress the worker last reported (remote workers, via heartbeats). */
  jobs?: WorkerJobProgress[];
}

export interface WorkerJobProgress {
  jobId: number;
  attempt: number;
  model: string;
  epoch: number;
  vignetteCount: number;
  vignettesDone: number;
  usage: Usage;
}

export interface WorkerHandle {
  readonly id: string;
  readonly capacity: number;
  serves(model: string): boolean;
  /** Why `serves(model)` is false, when the worker can tell. */
  unavailableReason?(model: string): Unavailable | undefined;
  isAlive(): boolean;
  info(): WorkerInfo;
  /**
   * Runs one attempt of a job. Resolves with the outcome once every vignette has a record;
   * rejects with a PanoptesError whose `retryable` says whether another worker should try.
   */
  dispatch(job: EvalJob, attempt: number, sink: JobSink, signal: AbortSignal): Promise<JobOutcome>;
  close(): Promise<void>;
}
