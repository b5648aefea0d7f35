/**
 * What an import produces, whatever it reads: manifest lines handed to a sink as they are made
 * (a large table is never held whole), scorers, the models its source named, and the fidelity
 * notes: everything it could not carry over, and why.
 * Runs on: Node (core).
 */
import type { ChatTurn } from '../domain.js';
import type { ScorerDefinition } from '../scoring/scoring-config.js';

/** One manifest line as an import writes it (`docs/reference/data-files.md`): a prompt, or a conversation. */
export interface ImportedVignette {
  id: string;
  prompt?: string;
  messages?: ChatTurn[];
  system?: string;
  target?: string;
  metadata?: Record<string, unknown>;
}

/** Something the import could not carry over exactly, and why. */
export interface FidelityNote {
  what: string;
  why: string;
}

/** Hands one vignette to the writer; `where` names its source (`tests.csv:4`) for a duplicate id. */
export type VignetteSink = (vignette: ImportedVignette, where: string) => Promise<void>;

export interface ImportOutcome {
  scorers: ScorerDefinition[];
  notes: FidelityNote[];
  /** The source's models: those the catalog knows (as catalog ids), and those it does not. */
  models?: { mapped: Array<{ from: string; model: string }>; unmapped: string[] };
}
