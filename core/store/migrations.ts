/**
 * The schema, as an ordered list of migrations, one file each under migrations/. `PRAGMA
 * user_version` records how many have run; a migration is never edited once released, only
 * followed by another: a new one is the next numbered file, listed last here.
 * Runs on: Node (core).
 */
import { migration as m001 } from './migrations/001-runs-jobs-responses.js';
import { migration as m002 } from './migrations/002-router-tables.js';
import { migration as m003 } from './migrations/003-job-seq-range.js';
import { migration as m004 } from './migrations/004-prompt-cache-rowid.js';
import { migration as m005 } from './migrations/005-cached-calls.js';
import { migration as m006 } from './migrations/006-scoring.js';
import { migration as m007 } from './migrations/007-judge-usage.js';
import { migration as m008 } from './migrations/008-run-prices-host-waits-vignette-failures.js';
import { migration as m009 } from './migrations/009-retry-attempts.js';
import { migration as m010 } from './migrations/010-run-names-restarts-scorer-errors.js';
import { migration as m011 } from './migrations/011-stage-answers.js';
import { migration as m012 } from './migrations/012-stopped-scorers.js';
import { migration as m013 } from './migrations/013-chat-vignettes.js';
import { migration as m014 } from './migrations/014-finish-reasons.js';
import { migration as m015 } from './migrations/015-verdicts-boolean.js';
import { migration as m016 } from './migrations/016-finished-stages.js';
import { migration as m017 } from './migrations/017-change-sequence.js';
import { migration as m018 } from './migrations/018-response-sort-indexes.js';
import { migration as m019 } from './migrations/019-sweep-usage.js';
import type { Migration } from './migrations/migration.js';

export type { Migration } from './migrations/migration.js';

export const MIGRATIONS: readonly Migration[] = [m001, m002, m003, m004, m005, m006, m007, m008, m009, m010, m011, m012, m013, m014, m015, m016, m017, m018, m019];
