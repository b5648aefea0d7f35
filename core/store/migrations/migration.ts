/**
 * One step of the schema: the SQL that takes a database from `version - 1` to `version`, run once
 * in its own transaction (see the list in ../migrations.ts).
 * Runs on: Node (core).
 */
export interface Migration {
  version: number;
  description: string;
  /** The statements that make this version, executed as one script. */
  up: string;
}
