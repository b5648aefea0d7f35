/**
 * The contract's types, as the renderer sees them: the one place the renderer reaches into core,
 * and only for types (`export type` is erased from the bundle), never for values.
 * Runs on: renderer.
 */
export type {
  AppDefaults,
  CatalogModelEntry,
  ControlEvent,
  ControlMethod,
  DesktopBridge,
  Envelope,
  ExportResult,
  Job,
  ManifestIssue,
  ManifestPreview,
  MethodInput,
  MethodResult,
  ModelCost,
  ResponsesInput,
  ProbeReport,
  ResponsesPage,
  RosterHost,
  RosterModel,
  RosterReport,
  Run,
  RunDetail,
  RunEvent,
  RunStatus,
  RunSummary,
  SerializedError,
  StatsReport,
  StoredResponse,
  Vignette,
  WorkerInfo,
  WorkerListenerStatus,
} from '../../../core/service/contract.js';
export type { JobStatus } from '../../../core/service/contract.js';
