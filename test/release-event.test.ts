import fs from 'node:fs/promises';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { rollback } from '../etl/releases.ts';
import { Database } from '../src/duckdb/database.ts';
import { quoteIdent, quoteLiteral } from '../src/duckdb/sql-text.ts';
import { type DatasetChanges, ReleaseEvents } from '../src/notify/release-event.ts';
import { DATASETS } from '../src/registry.ts';
import { readManifest } from '../src/releases/manifest.ts';
import { type Publication, readPublicationLog } from '../src/releases/publication-log.ts';
import { PUBLISHED, R1, R2, R3, ROLLED_BACK, type Vintages, vintages } from './helpers/vintages.ts';

// The event of each line of the publication log (src/notify/release-event.ts), what
// webhooks deliver and the feeds list: its counts held against plain DuckDB over the
// releases' Parquet files, and against the changes test/helpers/vintages.ts made.

const BASE = 'https://data.example.com/api/';

/** Rows added, removed and changed from release `a` to `b`, by set differences (not the service's FULL JOIN). */
async function reference(dataDir: string, a: string, b: string): Promise<DatasetChanges> {
  const instance = await DuckDBInstance.create(':memory:', { threads: '1' });
  const connection = await instance.connect();
  try {
    const counts: Record<string, { added: number; removed: number; changed: number }> = {};
    for (const def of DATASETS) {
      const file = async (id: string) =>
        quoteLiteral(path.join(dataDir, id, (await readManifest(path.join(dataDir, id))).datasets[def.name]!.file));
      const [fa, fb] = [await file(a), await file(b)];
      const dims = def.dimensions.map(quoteIdent).join(', ');
      const one = async (sql: string) => Number((await connection.runAndReadAll(sql)).getRows()[0]![0]);
      const keysOnly = (x: string, y: string) =>
        one(`SELECT count(*) FROM (SELECT ${dims} FROM read_parquet(${x}) EXCEPT SELECT ${dims} FROM read_parquet(${y}))`);
      const added = await keysOnly(fb, fa);
      const removed = await keysOnly(fa, fb);
      const differing = await one(`SELECT count(*) FROM (SELECT * FROM read_parquet(${fb}) EXCEPT SELECT * FROM read_parquet(${fa}))`);
      counts[def.name] = { added, removed, changed: differing - added };
    }
    return counts;
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

const test = suite('release events');
let v: Vintages;
let db: Database;
test.before(async () => {
  v = await vintages({ rolledBack: true });
  db = await Database.open({ connections: 1, threads: 1 });
});
test.after(async () => {
  db.close();
  await v.remove();
});

const eventsOf = (log: readonly Publication[]) => new ReleaseEvents({ dataDir: v.dataDir, db, publications: () => log });

test('each publication and the withdrawal carry their counts, checked against DuckDB over the Parquet files', async () => {
  const log = await readPublicationLog(v.dataDir);
  assert.equal(
    log.map((l) => `${l.type} ${l.release} ${l.previous}`),
    [`release.published ${R1} null`, `release.published ${R2} ${R1}`, `release.published ${R3} ${R2}`, `release.withdrawn ${R3} ${R2}`],
  );
  const events = eventsOf(log);
  const [first, second, third, withdrawn] = await Promise.all(log.map((line) => events.event(line, BASE)));

  // The first release: every row added.
  const r1 = await readManifest(path.join(v.dataDir, R1));
  assert.equal(
    first!.data.changes,
    Object.fromEntries(Object.entries(r1.datasets).map(([name, d]) => [name, { added: d.rows, removed: 0, changed: 0 }])),
  );
  assert.ok(r1.datasets.ggr!.rows > 0);
  assert.equal(second!.data.changes, await reference(v.dataDir, R1, R2));
  assert.equal(third!.data.changes, await reference(v.dataDir, R2, R3));
  // The withdrawal: from the release withdrawn to the one served again.
  assert.equal(withdrawn!.data.changes, await reference(v.dataDir, R3, R2));

  // What vintages.ts made: A and D changed in R2; R3 removed A, added C and put D back.
  assert.equal(second!.data.changes!.ggr, { added: 0, removed: 0, changed: 2 });
  assert.equal(third!.data.changes!.ggr, { added: 1, removed: 1, changed: 1 });
  assert.equal(withdrawn!.data.changes!.ggr, { added: 1, removed: 1, changed: 1 });
  assert.equal(third!.data.changes!.turnover, { added: 0, removed: 0, changed: 0 });
});

test('type, timestamp, published_at and links', async () => {
  const log = await readPublicationLog(v.dataDir);
  const events = eventsOf(log);
  const third = await events.event(log[2]!, BASE);
  assert.equal(third, {
    type: 'release.published',
    timestamp: PUBLISHED[R3],
    data: {
      release: R3,
      previous: R2,
      published_at: PUBLISHED[R3],
      changes: third.data.changes,
      links: third.data.links,
    },
  });
  assert.is(third.data.links.catalog, `https://data.example.com/api/v1/catalog?release=${R3}`);
  // One link per financial dataset, each naming one of its metrics.
  assert.equal(Object.keys(third.data.links.revisions!), ['ggr', 'turnover', 'fx', 'country']);
  assert.is(third.data.links.revisions!.ggr, `https://data.example.com/api/v1/revisions?metric=ggr&from=${R2}&to=${R3}`);
  assert.is(third.data.links.revisions!.turnover, `https://data.example.com/api/v1/revisions?metric=turnover&from=${R2}&to=${R3}`);
  const withdrawn = await events.event(log[3]!, 'http://127.0.0.1:8080');
  assert.is(withdrawn.type, 'release.withdrawn');
  assert.is(withdrawn.timestamp, ROLLED_BACK);
  assert.is(withdrawn.data.published_at, PUBLISHED[R3]);
  // The catalog of the release served again; the withdrawn one can no longer be named.
  assert.equal(withdrawn.data.links, { catalog: `http://127.0.0.1:8080/v1/catalog?release=${R2}`, revisions: null });
  const first = await events.event(log[0]!, BASE);
  assert.equal(first.data.links, { catalog: `https://data.example.com/api/v1/catalog?release=${R1}`, revisions: null });
});

test('a roll forward past a withdrawn release, which no manifest counts, is counted once in DuckDB and kept', async () => {
  await rollback(v.dataDir, R1, () => new Date('2026-03-11T08:00:00.000Z'));
  await rollback(v.dataDir, R3, () => new Date('2026-03-12T08:00:00.000Z'));
  const log = await readPublicationLog(v.dataDir);
  const forward = log.at(-1)!;
  assert.equal([forward.type, forward.release, forward.previous], ['release.published', R3, R1]);
  const expected = await reference(v.dataDir, R1, R3);
  // A removed, C added, D back at its R1 value.
  assert.equal(expected.ggr, { added: 1, removed: 1, changed: 0 });
  const events = eventsOf(log);
  assert.equal((await events.event(forward, BASE)).data.changes, expected);
  assert.equal(
    (await events.event(forward, BASE)).data.links.revisions!.ggr,
    `https://data.example.com/api/v1/revisions?metric=ggr&from=${R1}&to=${R3}`,
  );

  // With R1's folder gone, the kept counts still answer; a new object has nothing to count.
  await fs.rename(path.join(v.dataDir, R1), path.join(v.dataDir, `.${R1}.aside`));
  try {
    assert.equal((await events.event(forward, BASE)).data.changes, expected);
    assert.is((await eventsOf(log).event(forward, BASE)).data.changes, null);
  } finally {
    await fs.rename(path.join(v.dataDir, `.${R1}.aside`), path.join(v.dataDir, R1));
  }
});

test.run();
