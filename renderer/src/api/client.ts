/**
 * The one client interface every view talks to. Two implementations exist: over Electron's IPC
 * (`window.panoptes`, see ipc-client.ts) and over the browser bridge (HTTP + WebSocket, see
 * bridge-client.ts); `connect.ts` picks one at start-up. Errors arrive as data (an Envelope) and
 * are rethrown here as `ApiError`, keeping the code, the message and the field they name.
 * Runs on: renderer.
 */
import type { ControlEvent, ControlMethod, ManifestPreview, MethodInput, MethodResult, ReportHtmlInput, SerializedError } from './types.js';

export class ApiError extends Error {
  readonly code: SerializedError['code'];
  /** The field, `file:line` or frame the error names, when it names one. */
  readonly where: string | undefined;

  constructor(readonly error: SerializedError) {
    super(error.message);
    this.name = 'ApiError';
    this.code = error.code;
    this.where = error.where;
  }
}

/** A method's arguments: the input may be left out exactly when the contract makes it optional. */
export type CallArgs<M extends ControlMethod> = undefined extends MethodInput<M> ? [input?: MethodInput<M>] : [input: MethodInput<M>];

/**
 * The event stream's state; after a reconnect the views fetch again, since events may have been
 * missed. `unauthorized`: the server answers but refuses this tab's token (it restarted with a new
 * one), so reconnecting cannot help until the tab gets the new address.
 */
export type ConnectionState = 'connecting' | 'open' | 'reconnecting' | 'unauthorized';

/** `inspect`: inspect_ai logs, a folder in the desktop app, one tar of it in the browser. */
export type ExportFormat = 'jsonl' | 'csv' | 'inspect';

/** What an export did: saved to a file (desktop) or handed to the browser as a download. */
export type ExportOutcome = { kind: 'saved'; path: string; lines: number } | { kind: 'download'; fileName: string };

export interface PanoptesClient {
  readonly kind: 'desktop' | 'browser';
  call<M extends ControlMethod>(method: M, ...args: CallArgs<M>): Promise<MethodResult<M>>;
  onEvent(listener: (event: ControlEvent) => void): () => void;
  onConnection(listener: (state: ConnectionState) => void): () => void;
  /** A native file dialog for the manifest (desktop only; the browser offers an upload instead). */
  chooseManifest: (() => Promise<string | null>) | null;
  /** Sends a manifest file the user picked to be kept and checked (browser only). */
  uploadManifest: ((file: File) => Promise<ManifestPreview>) | null;
  /** Saves (desktop: save dialog) or downloads (browser) a run's responses (a CSV with `scores`: a column per scorer); null when the user cancelled. */
  exportRun(runId: string, format: ExportFormat, opts?: { scores?: boolean }): Promise<ExportOutcome | null>;
  /** Saves (desktop: save dialog) or downloads (browser) a run's report as one HTML page; null when the user cancelled. */
  saveReport(input: SaveReportInput): Promise<SaveReportOutcome | null>;
}

/** The report a page is saved of: the report's own choices (where it is written is the client's). */
export type SaveReportInput = Omit<ReportHtmlInput, 'outPath'>;

/** What Save report did: a file written (desktop) or a page handed to the browser as a download. */
export type SaveReportOutcome = { kind: 'saved'; path: string; rows: number; total: number } | { kind: 'download'; fileName: string; rows: number; total: number };

/** Unwraps an Envelope: the value, or an ApiError carrying the serialized error. */
export function unwrap<T>(envelope: { ok: true; value: T } | { ok: false; error: SerializedError }): T {
  if (envelope.ok) return envelope.value;
  throw new ApiError(envelope.error);
}

/** A small listener set, shared by both clients. */
export class Listeners<T> {
  private readonly set = new Set<(value: T) => void>();

  add(listener: (value: T) => void): () => void {
    this.set.add(listener);
    return () => this.set.delete(listener);
  }

  emit(value: T): void {
    for (const listener of this.set) listener(value);
  }
}

/** The name the save dialog offers: a file, or for inspect the folder its logs go in. */
export function exportFileName(runId: string, format: ExportFormat): string {
  return format === 'inspect' ? `${runId}-inspect` : `${runId}-responses.${format}`;
}
