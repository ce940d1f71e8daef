import fs from 'node:fs/promises';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { DataQueryClient } from 'data-query-client';
import { request } from 'undici';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { quoteLiteral } from '../src/duckdb/sql-text.ts';
import { runQueryCli } from './helpers/query-cli.ts';
import { fixtureDataDir, send, startTestService, type TestService, tempDir, walkPages } from './helpers/service.ts';
import { ggrIn, R1, R2, R3, ROLLED_BACK, type Vintages, vintages } from './helpers/vintages.ts';

// GET /v1/history over three releases written by plain DuckDB (helpers/vintages.ts):
// A added in R1, changed in R2, removed in R3; B the same throughout; C added in R3;
// D changed in R2 and back in R3 to its R1 value. Every value expected is read from
// the releases' own Parquet files by plain DuckDB.

type Letter = 'A' | 'B' | 'C' | 'D';
const LETTERS = ['A', 'B', 'C', 'D'] as const;

/** The query naming one observation: each of its dimensions as a filter. */
const only = (dims: Readonly<Record<string, string | number>>) =>
  new URLSearchParams(Object.entries(dims).map(([k, v]) => [k, String(v)])).toString();

/** The rows of one observation's history, every page walked. */
async function historyOf(service: TestService, data: Vintages, letter: Letter, query = ''): Promise<any[]> {
  const pages = await walkPages(service, `/v1/history?metric=ggr&${only(data.observations[letter])}${query}`, 100);
  const rows = pages.flatMap((page) => page.data);
  for (const row of rows) assert.equal(row.dimensions, data.observations[letter], `${letter}: its own row`);
  return rows.map(({ dimensions: _, ...rest }) => rest);
}

/** Plain DuckDB over CSV text: its rows, every field as text (null where empty). */
async function csvRows(text: string): Promise<Record<string, string | null>[]> {
  const dir = await tempDir('dqs-history-csv-');
  const file = path.join(dir, 'history.csv');
  await fs.writeFile(file, text);
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    const read = await connection.runAndReadAll(
      `SELECT * FROM read_csv(${quoteLiteral(file)}, header = true, all_varchar = true, allow_quoted_nulls = false)`,
    );
    return read.getRowObjectsJS() as Record<string, string | null>[];
  } finally {
    connection.closeSync();
    instance.closeSync();
    await fs.rm(dir, { recursive: true, force: true });
  }
}

/** Rows in one release's file, and distinct observations over several, by plain DuckDB. */
async function countIn(files: readonly string[], distinct: boolean): Promise<number> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    const list = `[${files.map(quoteLiteral).join(', ')}]`;
    const sql = distinct
      ? `SELECT count(*) FROM (SELECT DISTINCT * EXCLUDE (ggr) FROM read_parquet(${list}))`
      : `SELECT count(*) FROM read_parquet(${list})`;
    return Number((await connection.runAndReadAll(sql)).getRows()[0]![0]);
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

const published = suite('history: three published releases');
let data: Vintages;
let service: TestService;
let capped: TestService;

published.before(async () => {
  data = await vintages({ rolledBack: false });
  service = await startTestService({ dataDir: data.dataDir });
  capped = await startTestService({ dataDir: data.dataDir, env: { HISTORY_MAX_RELEASES: '2' } });
});
published.after(async () => {
  await service?.stop();
  await capped?.stop();
  await data?.remove();
});

const ggr = (release: string, letter: Letter) => ggrIn(data.files[release]!, data.observations[letter]);

published('output=changes: A, B, C and D exactly, each valid_to the next valid_from, values from the files', async () => {
  const version = async (letter: Letter, change: string, from: string, to: string | null) => ({
    change,
    valid_from: from,
    valid_to: to,
    values: change === 'removed' ? null : { ggr: await ggr(from, letter) },
  });
  const expected: Record<Letter, any[]> = {
    A: [await version('A', 'added', R1, R2), await version('A', 'changed', R2, R3), await version('A', 'removed', R3, null)],
    B: [await version('B', 'added', R1, null)],
    C: [await version('C', 'added', R3, null)],
    D: [await version('D', 'added', R1, R2), await version('D', 'changed', R2, R3), await version('D', 'changed', R3, null)],
  };
  for (const letter of LETTERS) {
    const rows = await historyOf(service, data, letter);
    assert.equal(rows, expected[letter], letter);
    for (let i = 0; i + 1 < rows.length; i++)
      assert.is(rows[i].valid_to, rows[i + 1].valid_from, `${letter}: a version ends where the next starts`);
  }
  // year is written as the integer it is, as every other endpoint writes it (it once read 2000.0).
  const text = (await service.get(`/v1/history?metric=ggr&${only(data.observations.B)}`)).text;
  assert.match(text, new RegExp(`"year":${data.observations.B.year}[,}]`));
  // The fixture's own: A's value did change in R2, and D's R3 value is its R1 value.
  assert.is.not(await ggr(R2, 'A'), await ggr(R1, 'A'));
  assert.is(await ggr(R3, 'D'), await ggr(R1, 'D'));
  assert.is.not(await ggr(R2, 'D'), await ggr(R1, 'D'));
});

published('from=R2: B still valid from R1, A from its R2 change; validity is never clipped', async () => {
  assert.equal(await historyOf(service, data, 'B', `&from=${R2}`), [
    { change: 'added', valid_from: R1, valid_to: null, values: { ggr: await ggr(R1, 'B') } },
  ]);
  assert.equal(
    (await historyOf(service, data, 'A', `&from=${R2}`)).map((r) => [r.change, r.valid_from, r.valid_to]),
    [
      ['changed', R2, R3],
      ['removed', R3, null],
    ],
  );
  // to=R2: versions after it are not shown, but the valid_to of those shown is not cut at R2.
  assert.equal(
    (await historyOf(service, data, 'D', `&to=${R2}`)).map((r) => [r.change, r.valid_from, r.valid_to]),
    [
      ['added', R1, R2],
      ['changed', R2, R3],
    ],
  );
  const page = await service.get(`/v1/history?metric=ggr&from=${R2}&limit=1`);
  assert.equal([page.json.meta.from, page.json.meta.to, page.json.meta.releases, page.json.meta.withdrawn], [R2, R3, [R2, R3], []]);
});

published('output=first: each observation present in the range, its first published value and release', async () => {
  for (const letter of LETTERS) {
    const first = letter === 'C' ? R3 : R1;
    assert.equal(
      await historyOf(service, data, letter, '&output=first'),
      [{ first_release: first, values: { ggr: await ggr(first, letter) } }],
      letter,
    );
  }
  // A has no row in R3: no first value in a range of R3 alone; D's is still its R1 value.
  assert.equal(await historyOf(service, data, 'A', `&output=first&from=${R3}`), []);
  assert.equal(await historyOf(service, data, 'D', `&output=first&from=${R3}`), [
    { first_release: R1, values: { ggr: await ggr(R1, 'D') } },
  ]);
  const whole = await service.get(`/v1/history?metric=ggr&output=first&limit=1`);
  assert.is(whole.json.meta.output, 'first');
  const count = (await walkPages(service, '/v1/history?metric=ggr&output=first', 1000)).reduce((n, p) => n + p.data.length, 0);
  assert.is(count, await countIn(Object.values(data.files), true), 'one row per observation of the three files');
});

published(
  'output=all: long, a row per observation and release where it has one; wide, a column per release, null where absent',
  async () => {
    for (const letter of LETTERS) {
      const expected = [];
      for (const release of [R1, R2, R3]) {
        const value = await ggr(release, letter);
        if (value !== undefined) expected.push({ release, values: { ggr: value } });
      }
      assert.equal(await historyOf(service, data, letter, '&output=all'), expected, `${letter} long`);
      const wide = Object.fromEntries(await Promise.all([R1, R2, R3].map(async (r) => [`ggr_${r}`, (await ggr(r, letter)) ?? null])));
      assert.equal(await historyOf(service, data, letter, '&output=all&shape=wide'), [{ values: wide }], `${letter} wide`);
    }
    assert.equal(await historyOf(service, data, 'A', `&output=all&shape=wide&from=${R2}&to=${R2}`), [
      { values: { [`ggr_${R2}`]: await ggr(R2, 'A') } },
    ]);
    const count = (await walkPages(service, '/v1/history?metric=ggr&output=all', 1000)).reduce((n, p) => n + p.data.length, 0);
    assert.is(count, await countIn(Object.values(data.files), false), 'every row of the three files');
    const csv = await csvRows(
      (await service.get(`/v1/history?metric=ggr&output=all&shape=wide&format=csv&${only(data.observations.C)}`)).text,
    );
    assert.equal(
      csv.map((row) => [row[`ggr_${R1}`], row[`ggr_${R2}`], row[`ggr_${R3}`] === null ? null : Number(row[`ggr_${R3}`])]),
      [[null, null, await ggr(R3, 'C')]],
    );
  },
);

published(
  'refusals, by their exact text: more than HISTORY_MAX_RELEASES, shape=wide without output=all, from after to, an unknown release',
  async () => {
    const refused = async (on: TestService, query: string, status: number) => {
      const res = await on.get(`/v1/history?metric=ggr&${query}`);
      assert.is(res.status, status, `${query}: ${res.text}`);
      return res.json;
    };
    const invalid = (fieldErrors: Record<string, string[]>) => ({
      error: 'Invalid query parameters',
      details: { formErrors: [], fieldErrors },
    });
    assert.equal(
      await refused(capped, '', 400),
      invalid({
        from: [
          `3 releases from ${R1} to ${R3}: at most 2 (HISTORY_MAX_RELEASES) in one request; ask for a later from, and fetch the rest in another request`,
        ],
      }),
    );
    assert.is((await capped.get(`/v1/history?metric=ggr&from=${R2}&limit=1`)).status, 200, 'two releases are within it');
    for (const output of ['changes', 'first'])
      assert.equal(
        await refused(service, `output=${output}&shape=wide`, 400),
        invalid({ shape: ['shape=wide needs output=all: only every value of every release has a column per release'] }),
      );
    assert.equal(
      await refused(service, 'shape=wide', 400),
      invalid({ shape: ['shape=wide needs output=all: only every value of every release has a column per release'] }),
    );
    assert.equal(
      await refused(service, `from=${R3}&to=${R1}`, 400),
      invalid({ from: [`${R3} was published after to (${R1}): from is the earlier release`] }),
    );
    assert.equal(await refused(service, 'output=every', 400), invalid({ output: ['Expected changes, first, all'] }));
    // No release= or as_of=: `to` says up to which release.
    for (const query of [`release=${R2}`, 'as_of=2026-02-10']) assert.ok((await refused(service, query, 400)).error, query);
    assert.equal(await refused(service, 'from=2025-12', 404), {
      error: "Unknown release '2025-12'; GET /v1/releases lists the published ones",
    });
  },
);

published('CSV without limit is the whole history, as the JSON pages walked give it, streamed as an export', async () => {
  const res = await service.get('/v1/history?metric=ggr&format=csv');
  assert.is(res.status, 200);
  assert.match(String(res.headers['content-disposition']), `ggr-history-changes-${R1}-${R3}.csv`);
  const csv = await csvRows(res.text);
  const walked = (await walkPages(service, '/v1/history?metric=ggr', 700)).flatMap((page) => page.data);
  assert.ok(walked.length > 700, `${walked.length} rows: several pages`);
  assert.is(csv.length, walked.length);
  const text = (value: unknown) => (value === null || value === undefined ? null : String(value));
  walked.forEach((row, i) => {
    const line = csv[i]!;
    for (const [name, value] of Object.entries(row.dimensions)) assert.is(line[name], text(value), `row ${i} ${name}`);
    assert.equal([line.change, line.valid_from, line.valid_to], [row.change, row.valid_from, row.valid_to], `row ${i}`);
    assert.is(line.ggr === null ? null : Number(line.ggr), row.values?.ggr ?? null, `row ${i} ggr`);
  });
  // Every kind of change is in the whole history.
  assert.equal(new Set(csv.map((row) => row.change)), new Set(['added', 'changed', 'removed']));
  // Charged as one export each time; a page of CSV (with limit) is not.
  const again = await service.get('/v1/history?metric=ggr&format=arrow');
  assert.is(Number(again.headers['x-export-remaining']), Number(res.headers['x-export-remaining']) - 1);
  const page = await service.get('/v1/history?metric=ggr&format=csv&limit=5');
  assert.is(page.headers['x-export-remaining'], undefined);
  assert.is((await csvRows(page.text)).length, 5);
});

published('a JSON page with a cursor: the next rows of the same history', async () => {
  const first = await service.get('/v1/history?metric=ggr&output=all&limit=3');
  assert.ok(first.json.pagination.has_more);
  const next = await service.get(`/v1/history?metric=ggr&output=all&limit=3&cursor=${encodeURIComponent(first.json.pagination.cursor)}`);
  assert.is(next.status, 200);
  const six = await service.get('/v1/history?metric=ggr&output=all&limit=6');
  assert.equal([...first.json.data, ...next.json.data], six.json.data);
  assert.is(next.json.meta.row_count, 3);
  // A cursor pages only its own history.
  const other = await service.get(`/v1/history?metric=ggr&output=first&limit=3&cursor=${encodeURIComponent(first.json.pagination.cursor)}`);
  assert.is(other.status, 400);
});

published("the typed client's history() and the query CLI's history command walk the same rows", async () => {
  const api = new DataQueryClient({ baseUrl: service.url, apiKey: service.key });
  const dims = data.observations.D;
  const rows = [];
  for await (const row of api.history('ggr', { country: String(dims.country), output: 'all' }, { limit: 7 })) rows.push(row);
  const walked = (
    await walkPages(service, `/v1/history?metric=ggr&country=${encodeURIComponent(String(dims.country))}&output=all`, 1000)
  ).flatMap((page) => page.data);
  assert.ok(walked.length > 7);
  assert.equal(rows, walked);
  const run = await runQueryCli(
    ['history', 'ggr', '--country', String(dims.country), '--output', 'all', '--shape', 'wide', '--format', 'csv', '--all', '--limit', '5'],
    { DQS_API_KEY: service.key, DQS_URL: service.url },
  );
  assert.is(run.code, 0, run.stderr);
  const csv = await csvRows(run.stdout.toString());
  const wide = (
    await walkPages(service, `/v1/history?metric=ggr&country=${encodeURIComponent(String(dims.country))}&output=all&shape=wide`, 1000)
  ).flatMap((page) => page.data);
  assert.is(csv.length, wide.length);
  assert.equal(Object.keys(csv[0]!).slice(-3), [`ggr_${R1}`, `ggr_${R2}`, `ggr_${R3}`]);
});

published.run();

const rolledBack = suite('history: after a rollback to R2');
let back: Vintages;
let backService: TestService;

rolledBack.before(async () => {
  back = await vintages({ rolledBack: true });
  backService = await startTestService({ dataDir: back.dataDir });
});
rolledBack.after(async () => {
  await backService?.stop();
  await back?.remove();
});

rolledBack('R3 is left out of every output, and meta.withdrawn names it with when', async () => {
  const page = await backService.get('/v1/history?metric=ggr&limit=1');
  assert.equal([page.json.meta.from, page.json.meta.to, page.json.meta.releases], [R1, R2, [R1, R2]]);
  assert.equal(page.json.meta.withdrawn, [{ id: R3, withdrawn_at: ROLLED_BACK }]);
  const r = (release: string, letter: Letter) => ggrIn(back.files[release]!, back.observations[letter]);
  assert.equal(await historyOf(backService, back, 'A'), [
    { change: 'added', valid_from: R1, valid_to: R2, values: { ggr: await r(R1, 'A') } },
    { change: 'changed', valid_from: R2, valid_to: null, values: { ggr: await r(R2, 'A') } },
  ]);
  assert.equal(await historyOf(backService, back, 'C'), []);
  assert.equal(await historyOf(backService, back, 'C', '&output=all'), []);
  assert.equal((await historyOf(backService, back, 'D', '&output=all&shape=wide'))[0].values, {
    [`ggr_${R1}`]: await r(R1, 'D'),
    [`ggr_${R2}`]: await r(R2, 'D'),
  });
  const asked = await backService.get(`/v1/history?metric=ggr&to=${R3}`);
  assert.is(asked.status, 404);
  assert.equal(asked.json, { error: `Unknown release '${R3}'; GET /v1/releases lists the published ones` });
});

rolledBack.run();

const heavy = suite('history: heavy work, on a full-size release');
let big: TestService;

heavy.before(async () => {
  big = await startTestService({ dataDir: await fixtureDataDir({ seed: 1, scale: 1 }), env: { QUERY_TIMEOUT_MS: '120000' } });
});
heavy.after(async () => {
  await big?.stop();
});

/** A counter of the server's /metrics, polled until it reaches `at` least (what a stop records once it has happened), or 60 s. */
async function counter(pattern: RegExp, at: number): Promise<number> {
  let value = 0;
  for (const started = Date.now(); Date.now() - started < 60_000; await new Promise((resolve) => setTimeout(resolve, 100))) {
    value = Number(pattern.exec((await send(`${big.adminUrl}/metrics`)).text)?.[1] ?? 0);
    if (value >= at) break;
  }
  return value;
}
const stopped = (reason: string) => new RegExp(`^dqs_heavy_cancellations_total\\{kind="history",reason="${reason}"\\} (\\d+)`, 'm');

heavy('past its deadline a history is 504 and stopped; one whose client leaves is stopped; neither is kept', async () => {
  const path = '/v1/history?metric=ggr&limit=1';
  const late = await send(`${big.url}${path}`, { headers: { 'x-api-key': big.key, prefer: 'wait=0.2' } });
  assert.is(late.status, 504, late.text);
  assert.match(JSON.parse(late.text).error, /0\.2 s/);
  assert.is(await counter(stopped('deadline'), 1), 1);
  const gone = await request(`${big.url}${path}`, { headers: { 'x-api-key': big.key }, signal: AbortSignal.timeout(300) }).then(
    () => 'answered',
    () => 'left',
  );
  assert.is(gone, 'left');
  assert.is(await counter(stopped('client_gone'), 1), 1);
  // Nothing of either was kept: asked again (and left again), it computes afresh.
  assert.is(await counter(/^dqs_history_computations_total (\d+)/m, 2), 2);
  await request(`${big.url}${path}`, { headers: { 'x-api-key': big.key }, signal: AbortSignal.timeout(300) }).catch(() => {});
  assert.is(await counter(/^dqs_history_computations_total (\d+)/m, 3), 3);
  assert.is(await counter(stopped('client_gone'), 2), 2);
});

heavy.run();
