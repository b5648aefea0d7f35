/**
 * The Responses reader's thread: it answers a page's rows from its own read-only connection while
 * the store writes; a read past its bound is refused as a timeout and the thread replaced, so the
 * next page is read again; closing the store refuses what still waits.
 * Runs on: Node (tests).
 */
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ResponseReader } from '../../core/store/response-reader.js';
import { Store } from '../../core/store/store.js';
import { tempDir } from '../helpers/temp.js';

/** A query that runs for minutes: counting to ten billion. */
const ENDLESS = `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 10000000000) SELECT count(*) AS n FROM c`;

describe('the responses reader', () => {
  let tmp: ReturnType<typeof tempDir>;
  let store: Store;
  let reader: ResponseReader;
  beforeEach(() => {
    tmp = tempDir();
    store = new Store(join(tmp.dir, 'reader.db'));
    reader = new ResponseReader({ path: store.path, timeoutMs: 3000 });
  });
  afterEach(() => {
    reader.close();
    store.close();
    tmp.cleanup();
  });

  it('reads what the store committed, on a connection that cannot write', async () => {
    store.runs.beginStaging('r1');
    expect(await reader.rows(`SELECT run_id FROM staged_runs`, {})).toEqual([{ run_id: 'r1' }]);
    await expect(reader.rows(`INSERT INTO staged_runs (run_id, created_at) VALUES ('r2', 0) RETURNING run_id`, {})).rejects.toThrow(/readonly|read-only/i);
    expect(await reader.rows(`SELECT count(*) AS n FROM staged_runs`, {})).toEqual([{ n: 1 }]);
  });

  it('refuses a read past its bound, and reads the next page on a new thread', async () => {
    await expect(reader.rows(ENDLESS, {})).rejects.toMatchObject({ code: 'timeout', where: 'responses' });
    expect(await reader.rows(`SELECT 7 AS n`, {})).toEqual([{ n: 7 }]);
  });

  it('refuses what still waits when closed', async () => {
    const waiting = reader.rows(ENDLESS, {});
    reader.close();
    await expect(waiting).rejects.toMatchObject({ code: 'conflict' });
  });
});
