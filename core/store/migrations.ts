/**
 * The schema, as an ordered list of migrations. `PRAGMA user_version` records how many have run;
 * a migration is never edited once released, only followed by another.
 * Runs on: Node (core).
 */

export interface Migration {
  version: number;
  description: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'runs, staged vignettes, jobs, responses',
    sql: `
      CREATE TABLE runs (
        id             TEXT PRIMARY KEY,
        manifest_path  TEXT NOT NULL,
        models         TEXT NOT NULL,             -- JSON array of logical model ids
        epochs         INTEGER NOT NULL CHECK (epochs >= 1),
        vignette_count INTEGER NOT NULL,
        status         TEXT NOT NULL CHECK (status IN ('queued','running','done','failed','cancelled')),
        job_count      INTEGER NOT NULL,
        done_count     INTEGER NOT NULL DEFAULT 0,
        failed_count   INTEGER NOT NULL DEFAULT 0,
        options        TEXT NOT NULL,             -- JSON RunOptions
        created_at     INTEGER NOT NULL,
        started_at     INTEGER,
        finished_at    INTEGER,
        error          TEXT,
        owner          TEXT,                      -- scheduler holding the run: host:pid:nonce
        lease_until    INTEGER                    -- the owner renews this while it works
      );
      CREATE INDEX runs_by_status ON runs (status, created_at);
      CREATE INDEX runs_by_created ON runs (created_at);

      -- A run's vignettes, copied from its manifest at creation so the run does not depend on the file.
      CREATE TABLE vignettes (
        run_id      TEXT NOT NULL,
        idx         INTEGER NOT NULL,
        vignette_id TEXT NOT NULL,
        prompt      TEXT NOT NULL,
        system      TEXT,
        target      TEXT,
        metadata    TEXT,
        PRIMARY KEY (run_id, idx)
      ) WITHOUT ROWID;

      -- Runs whose vignettes are being copied in; cleared when the run row commits or is discarded.
      CREATE TABLE staged_runs (
        run_id     TEXT PRIMARY KEY,
        created_at INTEGER NOT NULL
      );

      CREATE TABLE jobs (
        id             INTEGER PRIMARY KEY,
        run_id         TEXT NOT NULL REFERENCES runs (id),
        model          TEXT NOT NULL,
        epoch          INTEGER NOT NULL,
        status         TEXT NOT NULL CHECK (status IN ('pending','running','done','failed','cancelled')),
        attempt        INTEGER NOT NULL DEFAULT 0,
        worker_id      TEXT,
        vignettes_done INTEGER NOT NULL DEFAULT 0,
        input_tokens   INTEGER NOT NULL DEFAULT 0,
        output_tokens  INTEGER NOT NULL DEFAULT 0,
        started_at     INTEGER,
        finished_at    INTEGER,
        error          TEXT,
        UNIQUE (run_id, model, epoch)
      );

      -- One row per model call. The prompt lives once in vignettes; no index touches response text.
      CREATE TABLE responses (
        seq              INTEGER PRIMARY KEY,
        job_id           INTEGER NOT NULL,
        vignette_idx     INTEGER NOT NULL,
        response         TEXT NOT NULL,
        input_tokens     INTEGER NOT NULL,
        output_tokens    INTEGER NOT NULL,
        cached_tokens    INTEGER,
        reasoning_tokens INTEGER,
        latency_ms       INTEGER NOT NULL,
        host             TEXT NOT NULL,
        cached           INTEGER NOT NULL,
        finished_at      INTEGER NOT NULL,
        UNIQUE (job_id, vignette_idx)
      );
    `,
  },
  {
    version: 2,
    description: 'model router: prompt cache, per-call metrics, rolling budget windows',
    sql: `
      -- Successful answers by sha256 of the whole normalised request (hex). No prompt text is kept.
      CREATE TABLE prompt_cache (
        key        TEXT PRIMARY KEY,
        value      TEXT NOT NULL,                 -- JSON: text, usage, host, finishReason
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL
      ) WITHOUT ROWID;
      CREATE INDEX prompt_cache_by_expiry ON prompt_cache (expires_at);

      -- One row per model call (every host attempt and every cache hit); never prompt or response text.
      CREATE TABLE router_calls (
        id               INTEGER PRIMARY KEY,
        at               INTEGER NOT NULL,
        profile          TEXT NOT NULL,
        provider         TEXT NOT NULL,
        host             TEXT NOT NULL,
        model            TEXT NOT NULL,
        status           TEXT NOT NULL,           -- 'ok' or an error code
        latency_ms       INTEGER NOT NULL,
        input_tokens     INTEGER NOT NULL,
        output_tokens    INTEGER NOT NULL,
        cached_tokens    INTEGER,
        reasoning_tokens INTEGER,
        cost_usd         REAL NOT NULL,
        cache_hit        INTEGER NOT NULL
      );
      CREATE INDEX router_calls_by_at ON router_calls (at);

      -- Spend per (profile, provider) in one-minute buckets: the rolling 24 h budget window.
      CREATE TABLE budget_usage (
        profile  TEXT NOT NULL,
        provider TEXT NOT NULL,
        minute   INTEGER NOT NULL,                -- floor(ms / 60000)
        calls    INTEGER NOT NULL,
        tokens   INTEGER NOT NULL,
        usd      REAL NOT NULL,
        PRIMARY KEY (profile, provider, minute)
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 3,
    description: "each job's first and last response seq (so a run's pages scan only its own range); vignettes by id",
    sql: `
      ALTER TABLE jobs ADD COLUMN first_seq INTEGER;
      ALTER TABLE jobs ADD COLUMN last_seq INTEGER;
      UPDATE jobs SET
        first_seq = (SELECT MIN(seq) FROM responses WHERE job_id = jobs.id),
        last_seq  = (SELECT MAX(seq) FROM responses WHERE job_id = jobs.id);
      CREATE INDEX vignettes_by_id ON vignettes (run_id, vignette_id);
    `,
  },
  {
    version: 4,
    description: 'prompt cache as a rowid table: entries carry whole responses, and random-key inserts of large rows into a WITHOUT ROWID b-tree cost a sweep its speed',
    sql: `
      CREATE TABLE prompt_cache_rows (
        id         INTEGER PRIMARY KEY,
        key        TEXT NOT NULL UNIQUE,
        value      TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL
      );
      INSERT INTO prompt_cache_rows (key, value, created_at, expires_at)
        SELECT key, value, created_at, expires_at FROM prompt_cache;
      DROP TABLE prompt_cache;
      ALTER TABLE prompt_cache_rows RENAME TO prompt_cache;
      CREATE INDEX prompt_cache_by_expiry ON prompt_cache (expires_at);
    `,
  },
  {
    version: 5,
    description: "each job's calls answered from the prompt cache and the tokens those answers carry: a re-run reports what it reused",
    sql: `
      ALTER TABLE jobs ADD COLUMN cached_calls INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE jobs ADD COLUMN cached_input_tokens INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE jobs ADD COLUMN cached_output_tokens INTEGER NOT NULL DEFAULT 0;
      UPDATE jobs SET
        cached_calls = (SELECT COUNT(*) FROM responses WHERE job_id = jobs.id AND cached = 1),
        cached_input_tokens = (SELECT COALESCE(SUM(input_tokens), 0) FROM responses WHERE job_id = jobs.id AND cached = 1),
        cached_output_tokens = (SELECT COALESCE(SUM(output_tokens), 0) FROM responses WHERE job_id = jobs.id AND cached = 1);
    `,
  },
  {
    version: 6,
    description: 'scoring: scorer versions, the scorers attached to each run with their durable progress, and scores',
    sql: `
      -- One row per scorer version (a hash of its whole definition), shared by every run scored with it.
      CREATE TABLE scorers (
        id         INTEGER PRIMARY KEY,
        version    TEXT NOT NULL UNIQUE,
        name       TEXT NOT NULL,
        kind       TEXT NOT NULL CHECK (kind IN ('pass_fail','graded')),
        layer      TEXT NOT NULL CHECK (layer IN ('rule','plugin','judge')),
        judges     TEXT NOT NULL,                -- JSON array of judge models, in order
        definition TEXT NOT NULL                 -- JSON, as the scoring file gave it
      );

      -- The scoring work of a run: every record with seq <= scored_seq has its scores. A lease
      -- (owner, lease_until) makes one process at a time score a (run, scorer), so no judge call is
      -- made twice; the cursor and the scores commit together, so a kill -9 loses no score and
      -- makes none twice.
      CREATE TABLE run_scorers (
        run_id       TEXT NOT NULL REFERENCES runs (id),
        scorer_id    INTEGER NOT NULL REFERENCES scorers (id),
        position     INTEGER NOT NULL,           -- the order scorers were attached in
        scored_seq   INTEGER NOT NULL DEFAULT 0,
        done_count   INTEGER NOT NULL DEFAULT 0, -- records scored
        failed_count INTEGER NOT NULL DEFAULT 0, -- records the scorer could not score (a judge call kept failing)
        owner        TEXT,
        lease_until  INTEGER,
        PRIMARY KEY (run_id, scorer_id)
      ) WITHOUT ROWID;

      -- One row per (scorer version, record, judge): integers but the value, and an explanation
      -- only where a check failed or a judge spoke. judge indexes the scorer's judges (0 for rules).
      -- severity: 0 none, 1 soft, 2 hard. failed: the scorer could not score this record.
      CREATE TABLE scores (
        scorer_id   INTEGER NOT NULL,
        seq         INTEGER NOT NULL,
        judge       INTEGER NOT NULL,
        value       REAL NOT NULL,
        passed      INTEGER,
        severity    INTEGER NOT NULL,
        explanation TEXT,
        failed      INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (scorer_id, seq, judge)
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 7,
    description: "judge usage: the judges' calls and tokens per (run, scorer version, judge), apart from the sweep's",
    sql: `
      -- Added in the same transaction as the scores they paid for, so counted exactly once. Tokens of
      -- calls the prompt cache answered are kept apart, unbilled, as for the sweep's records.
      CREATE TABLE judge_usage (
        run_id              TEXT NOT NULL REFERENCES runs (id),
        scorer_id           INTEGER NOT NULL,
        judge               TEXT NOT NULL,
        calls               INTEGER NOT NULL,
        input_tokens        INTEGER NOT NULL,
        output_tokens       INTEGER NOT NULL,
        cached_calls        INTEGER NOT NULL,
        cached_input_tokens INTEGER NOT NULL,
        cached_output_tokens INTEGER NOT NULL,
        PRIMARY KEY (run_id, scorer_id, judge)
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 8,
    description: "a run's prices kept with it; a job waiting for a down host; each vignette given up on, with its last error",
    sql: `
      ALTER TABLE runs ADD COLUMN prices TEXT;             -- JSON: {model: {inputPerMTok, outputPerMTok}} as of creation
      ALTER TABLE jobs ADD COLUMN waiting_for_host TEXT;   -- JSON {host, since} while the job's calls wait for a host that is down
      CREATE TABLE vignette_failures (
        job_id       INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
        vignette_idx INTEGER NOT NULL,
        attempts     INTEGER NOT NULL,
        code         TEXT NOT NULL,
        message      TEXT NOT NULL,
        at           INTEGER NOT NULL,
        PRIMARY KEY (job_id, vignette_idx)
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 9,
    description: 'retries on hard fails: the extra attempts a scorer asked for, their scores, and their calls apart from the sweep',
    sql: `
      -- A retry of a record (seq, attempt 1) that a scorer version found a hard fail: the same
      -- vignette posed to the same model again. Written in the transaction of the score page that
      -- asked for it, so a kill -9 keeps all of a page's attempts or none; the key refuses a second
      -- attempt with the same number.
      CREATE TABLE retry_attempts (
        scorer_id     INTEGER NOT NULL,
        seq           INTEGER NOT NULL,           -- the sweep's record: attempt 1
        attempt       INTEGER NOT NULL CHECK (attempt >= 2),
        response      TEXT NOT NULL,
        input_tokens  INTEGER NOT NULL,
        output_tokens INTEGER NOT NULL,
        latency_ms    INTEGER NOT NULL,
        host          TEXT NOT NULL,
        finished_at   INTEGER NOT NULL,
        PRIMARY KEY (scorer_id, seq, attempt)
      ) WITHOUT ROWID;

      -- The scorer's verdicts on an attempt, like scores (severity 0 none, 1 soft, 2 hard). An
      -- attempt that could not be scored has none.
      CREATE TABLE attempt_scores (
        scorer_id   INTEGER NOT NULL,
        seq         INTEGER NOT NULL,
        attempt     INTEGER NOT NULL,
        judge       INTEGER NOT NULL,
        value       REAL NOT NULL,
        passed      INTEGER,
        severity    INTEGER NOT NULL,
        explanation TEXT,
        PRIMARY KEY (scorer_id, seq, attempt, judge)
      ) WITHOUT ROWID;
      -- Exports read the retries of a range of records beside their scores.
      CREATE INDEX attempt_scores_by_seq ON attempt_scores (seq);

      -- The retries' calls per (run, scorer version, model): the candidate's calls, accounted apart
      -- from the sweep's (jobs) and the judges' (judge_usage). Retries never use the prompt cache.
      CREATE TABLE retry_usage (
        run_id        TEXT NOT NULL REFERENCES runs (id),
        scorer_id     INTEGER NOT NULL,
        model         TEXT NOT NULL,
        calls         INTEGER NOT NULL,
        input_tokens  INTEGER NOT NULL,
        output_tokens INTEGER NOT NULL,
        PRIMARY KEY (run_id, scorer_id, model)
      ) WITHOUT ROWID;
    `,
  },
];
