import fs from 'node:fs/promises';
import path from 'node:path';
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { tableFromIPC } from 'apache-arrow';
import { DataQueryClient } from 'data-query-client';
import { request } from 'undici';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { loadDrop } from '../etl/load.ts';
import { quoteLiteral } from '../src/duckdb/sql-text.ts';
import { DATASETS } from '../src/registry.ts';
import { columnSum, isDecimalColumn } from './helpers/exact-sum.ts';
import { runQueryCli } from './helpers/query-cli.ts';
import {
  FIXTURE_RELEASE,
  fixtureDataDir,
  type Response,
  send,
  startTestService,
  type TestService,
  tempDir,
  walkPages,
} from './helpers/service.ts';

// Every endpoint answers for any published month (`release=`), loaded on
// demand; /v1/releases and /v1/revisions. Three releases are published with `etl
// load` from drops written by plain DuckDB: 2026-09 is the fixture; 2026-10 revises
// ggr (2020 doubled), withdraws rows (2001) and adds rows (2030 copied to 2031);
// 2026-11 is 2026-10 with ggr tripled.

const RELEASES = ['2026-09', '2026-10', '2026-11'] as const;
const DIMS = DATASETS.find((d) => d.name === 'ggr')!.dimensions;
const state = {
  dataDir: '',
  drops: {} as Record<string, string>,
  service: undefined as TestService | undefined,
  db: undefined as DuckDBInstance | undefined,
  sql: undefined as DuckDBConnection | undefined,
};

const GGR_SQL: Record<(typeof RELEASES)[number], (fixture: string) => string> = {
  '2026-09': (f) => `SELECT * FROM read_parquet(${f})`,
  '2026-10': (f) => `SELECT * REPLACE (CASE WHEN year = 2020 THEN ggr * 2 ELSE ggr END AS ggr) FROM read_parquet(${f}) WHERE year <> 2001
                     UNION ALL SELECT * REPLACE (2031 AS year) FROM read_parquet(${f}) WHERE year = 2030`,
  '2026-11': (f) => `SELECT * REPLACE (ggr * 3 AS ggr) FROM (${GGR_SQL['2026-10'](f)})`,
};

const rows = async (sql: string) => (await state.sql!.runAndReadAll(sql)).getRowObjectsJS() as Array<Record<string, any>>;
const ggrOf = (release: string) => `read_parquet(${quoteLiteral(path.join(state.drops[release]!, 'ggr.parquet'))})`;
const flat = (row: any) => JSON.stringify({ ...row.dimensions, ...row.values });
const dbRow = (row: Record<string, any>) =>
  JSON.stringify(Object.fromEntries([...DIMS, 'ggr'].map((k) => [k, k === 'year' ? Number(row[k]) : row[k]])));

const vintages = suite('vintages');
vintages.before(async () => {
  state.dataDir = await tempDir('dqs-vintages-');
  state.db = await DuckDBInstance.create(':memory:');
  state.sql = await state.db.connect();
  const fixture = path.join(await fixtureDataDir(), FIXTURE_RELEASE);
  for (const release of RELEASES) {
    const drop = await tempDir('dqs-drop-');
    state.drops[release] = drop;
    await state.sql.run(
      `COPY (${GGR_SQL[release](quoteLiteral(path.join(fixture, 'ggr.parquet')))}) TO ${quoteLiteral(path.join(drop, 'ggr.parquet'))} (FORMAT parquet)`,
    );
    for (const name of ['turnover', 'fx', 'country', 'country_reference'])
      await fs.copyFile(path.join(fixture, `${name}.parquet`), path.join(drop, `${name}.parquet`));
    await loadDrop({ drop, dataDir: state.dataDir, release, force: false, minYear: 1990, maxYear: 2100, maxRowChange: 0.25 });
  }
  state.service = await startTestService({ dataDir: state.dataDir, env: { RELEASES_IN_MEMORY: '2', RELEASE_POLL_MS: '100' } });
});
vintages.after(async () => {
  await state.service?.stop();
  state.sql?.closeSync();
  state.db?.closeSync();
  for (const dir of [state.dataDir, ...Object.values(state.drops)]) await fs.rm(dir, { recursive: true, force: true });
});

vintages('/v1/releases lists them newest first, with counts, years and the changes etl load measured', async () => {
  const res = await state.service!.get('/v1/releases');
  assert.is(res.status, 200, res.text);
  const listed = res.json.releases;
  assert.equal(
    listed.map((r: any) => [r.id, r.current, r.synthetic]),
    [
      ['2026-11', true, false],
      ['2026-10', false, false],
      ['2026-09', false, false],
    ],
  );
  for (const release of listed) {
    const { n, first, last } = (
      await rows(`SELECT count(*)::INTEGER AS n, min(year)::INTEGER AS first, max(year)::INTEGER AS last FROM ${ggrOf(release.id)}`)
    )[0]!;
    assert.equal(release.datasets.ggr, { row_count: n, first_year: first, last_year: last }, release.id);
    assert.equal(Object.keys(release.datasets).sort(), DATASETS.map((d) => d.name).sort());
  }
  assert.is(listed[2].changes, undefined, 'the first release has nothing to compare with');
  const keys = DIMS.map((d) => `"${d}"`).join(', ');
  const [counts] =
    await rows(`SELECT count(*) FILTER (WHERE a.ggr IS NULL)::INTEGER AS added, count(*) FILTER (WHERE b.ggr IS NULL)::INTEGER AS removed,
      count(*) FILTER (WHERE a.ggr IS DISTINCT FROM b.ggr AND a.ggr IS NOT NULL AND b.ggr IS NOT NULL)::INTEGER AS changed
      FROM ${ggrOf('2026-09')} a FULL JOIN ${ggrOf('2026-10')} b USING (${keys})`);
  assert.ok(counts!.added > 0 && counts!.removed > 0 && counts!.changed > 0);
  assert.equal(listed[1].changes.ggr, counts);
  assert.is(listed[1].changes_against, '2026-09');
  assert.equal(listed[1].changes.fx, { added: 0, removed: 0, changed: 0 });
});

vintages('release= serves each published release, compared with DuckDB on its drop; immutable unless current', async () => {
  const service = state.service!;
  for (const release of RELEASES) {
    const country = 'France';
    const pages = await walkPages(service, `/v1/financials?metric=ggr&country=${country}&release=${release}`, 97);
    assert.ok(pages.every((p) => p.meta.release === release));
    const expected = await rows(
      `SELECT * FROM ${ggrOf(release)} WHERE country = 'France' ORDER BY ${DIMS.map((d) => `"${d}"`).join(', ')}`,
    );
    assert.equal(pages.flatMap((p) => p.data).map(flat), expected.map(dbRow), release);

    const sums = await service.get(`/v1/aggregate?metric=ggr&fx=USD&state=&group_by=year&release=${release}`);
    assert.is(sums.status, 200, sums.text);
    const totals = await rows(
      `SELECT year::INTEGER AS year, list(ggr) AS values FROM ${ggrOf(release)} WHERE fx = 'USD' AND state = '' GROUP BY year ORDER BY year`,
    );
    const [all] = await rows(`SELECT list(ggr) AS ggr FROM ${ggrOf(release)}`);
    const decimal = isDecimalColumn(all!.ggr);
    assert.equal(
      sums.json.data.map((g: any) => [g.dimensions.year, g.values.ggr_sum]),
      totals.map((t) => [t.year, columnSum(t.values, decimal)]),
      `${release} aggregate`,
    );

    const reference = await service.get(`/v1/reference?dataset=country_reference&limit=5&release=${release}`);
    assert.equal([reference.status, reference.json.meta.release], [200, release]);
    const catalog = await service.get(`/v1/catalog?release=${release}`);
    assert.is(catalog.json.release.id, release);
    assert.is(
      catalog.json.datasets.find((d: any) => d.name === 'ggr').row_count,
      (await rows(`SELECT count(*)::INTEGER AS n FROM ${ggrOf(release)}`))[0]!.n,
    );

    const cacheControl = reference.headers['cache-control'];
    if (release === '2026-11') assert.not.match(String(cacheControl), /immutable/);
    else assert.is(cacheControl, 'private, max-age=31536000, immutable');
    const again = await service.get(`/v1/reference?dataset=country_reference&limit=5&release=${release}`, {
      headers: { 'if-none-match': String(reference.headers.etag) },
    });
    assert.is(again.status, 304);
  }
});

vintages('unknown, unpublished and malformed releases; a cursor from another release', async () => {
  const service = state.service!;
  for (const q of [
    '/v1/financials?metric=ggr&release=1999-01',
    '/v1/reference?dataset=country_reference&release=1999-01',
    '/v1/catalog?release=1999-01',
    '/v1/aggregate?metric=ggr&fx=USD&release=1999-01',
    '/v1/revisions?metric=ggr&from=1999-01',
  ]) {
    const res = await service.get(q);
    assert.equal([res.status, res.json], [404, { error: "Unknown release '1999-01'; GET /v1/releases lists the published ones" }], q);
  }
  const bad = await service.get('/v1/financials?metric=ggr&release=2026-13');
  assert.equal([bad.status, bad.json.details.fieldErrors], [400, { release: ['Expected a release id like 2026-11'] }]);
  const cursor = (await service.get('/v1/financials?metric=ggr&limit=3&release=2026-09')).json.pagination.cursor;
  const mixed = await service.get(`/v1/financials?metric=ggr&limit=3&release=2026-10&cursor=${encodeURIComponent(cursor)}`);
  assert.equal([mixed.status, mixed.json], [400, { error: 'Invalid pagination cursor' }]);
});

vintages('/v1/revisions equals a FULL JOIN diff of the two drops, in every format, computed once per walk', async () => {
  const service = state.service!;
  const keys = DIMS.map((d) => `"${d}"`).join(', ');
  const diff =
    await rows(`SELECT ${keys}, CASE WHEN a.ggr IS NULL THEN 'added' WHEN b.ggr IS NULL THEN 'removed' ELSE 'changed' END AS change, a.ggr AS before, b.ggr AS after
    FROM ${ggrOf('2026-09')} a FULL JOIN ${ggrOf('2026-10')} b USING (${keys}) WHERE a.ggr IS DISTINCT FROM b.ggr ORDER BY ${keys}`);
  const expected = diff.map((r) =>
    JSON.stringify([
      Object.fromEntries(DIMS.map((d) => [d, d === 'year' ? Number(r[d]) : r[d]])),
      r.change,
      r.before === null ? null : { ggr: r.before },
      r.after === null ? null : { ggr: r.after },
    ]),
  );
  const metrics = async () =>
    Number(/^dqs_revision_computations_total (\d+)/m.exec(await (await fetch(`${service.adminUrl}/metrics`)).text())?.[1]);
  const before = await metrics();
  const pages = await walkPages(service, '/v1/revisions?metric=ggr&from=2026-09&to=2026-10', 7);
  assert.is(await metrics(), before + 1, 'one FULL JOIN for the whole walk');
  const served = pages.flatMap((p) => p.data).map((r: any) => JSON.stringify([r.dimensions, r.change, r.before, r.after]));
  assert.is(served.length, expected.length);
  assert.equal(served, expected);
  assert.equal(pages[0].meta, { dataset: 'ggr', metric: 'ggr', from: '2026-09', to: '2026-10', filters_applied: {}, row_count: 7 });

  // Filters and change=, against the same diff.
  const removedInFrance = await walkPages(service, '/v1/revisions?metric=ggr&from=2026-09&to=2026-10&change=removed&country=France', 1000);
  assert.equal(
    removedInFrance.flatMap((p) => p.data).map((r: any) => JSON.stringify([r.dimensions, r.change, r.before, r.after])),
    expected.filter((e) => JSON.parse(e)[1] === 'removed' && JSON.parse(e)[0].country === 'France'),
  );

  // Defaults: from the release before the current one to the current one.
  const defaults = await service.get('/v1/revisions?metric=ggr&limit=1');
  assert.equal([defaults.json.meta.from, defaults.json.meta.to], ['2026-10', '2026-11']);

  // CSV read back by DuckDB; Arrow by apache-arrow.
  const csv = await send(`${service.url}/v1/revisions?metric=ggr&from=2026-09&to=2026-10&limit=1000`, {
    headers: { 'x-api-key': service.key, accept: 'text/csv' },
  });
  const file = path.join(state.dataDir, 'revisions.csv');
  await fs.writeFile(file, csv.text);
  const read = await rows(`SELECT * FROM read_csv(${quoteLiteral(file)}, header = true, all_varchar = true)`);
  assert.equal(Object.keys(read[0]!), [...DIMS, 'change', 'before_ggr', 'after_ggr']);
  assert.equal(
    read.map((r) => [r.change, r.before_ggr === null ? null : Number(r.before_ggr), r.after_ggr === null ? null : Number(r.after_ggr)]),
    diff.slice(0, 1000).map((r) => [r.change, r.before, r.after]),
  );
  const arrow = await request(`${service.url}/v1/revisions?metric=ggr&from=2026-09&to=2026-10&limit=50`, {
    headers: { 'x-api-key': service.key, accept: 'application/vnd.apache.arrow.stream' },
  });
  const table = tableFromIPC(new Uint8Array(await arrow.body.arrayBuffer()));
  assert.is(table.numRows, 50);
  assert.equal(
    table.toArray().map((r: any) => [r.change, r.before_ggr, r.after_ggr]),
    diff.slice(0, 50).map((r) => [r.change, r.before, r.after]),
  );
});

vintages(
  'with RELEASES_IN_MEMORY=2, concurrent traffic over three releases: loads and unloads, never a 500, never a mixed body',
  async () => {
    const service = state.service!;
    const firstRows = new Map<string, string[]>();
    for (const release of RELEASES)
      firstRows.set(
        release,
        (await rows(`SELECT * FROM ${ggrOf(release)} ORDER BY ${DIMS.map((d) => `"${d}"`).join(', ')} LIMIT 1000`)).map(dbRow),
      );
    const unloadsBefore = service.logs.filter((l) => l.msg === 'unloaded a release').length;
    const failures: string[] = [];
    const deadline = Date.now() + 90_000;
    let served = 0;
    const worker = async (w: number) => {
      for (let i = 0; i < 30 && Date.now() < deadline; i++) {
        const release = RELEASES[(i * 7 + w) % 3]!;
        // A page size nobody asked for yet, so the body is read from the release, not the cache.
        const limit = 1 + ((i * 131 + w * 17) % 997);
        const res = await service.get(`/v1/financials?metric=ggr&limit=${limit}&release=${release}`);
        if (res.status !== 200) failures.push(`${release} ${limit}: ${res.status} ${res.text}`);
        else if (
          res.json.meta.release !== release ||
          JSON.stringify(res.json.data.map(flat)) !== JSON.stringify(firstRows.get(release)!.slice(0, limit))
        )
          failures.push(`${release} ${limit}: rows of another release`);
        else served++;
      }
    };
    await Promise.all([0, 1, 2, 3].map(worker));
    assert.equal(failures, [], JSON.stringify(service.logs.filter((l) => l.level >= 50).slice(0, 3)));
    assert.ok(served > 0);
    assert.ok(service.logs.filter((l) => l.msg === 'unloaded a release').length > unloadsBefore, 'releases were unloaded to make room');
    const loaded = Number(/^dqs_releases_loaded (\d+)/m.exec(await (await fetch(`${service.adminUrl}/metrics`)).text())?.[1]);
    assert.ok(loaded <= 2, `${loaded} loaded`);
  },
);

vintages('a cursor of an unloaded release still pages', async () => {
  const service = state.service!;
  const first = await service.get('/v1/financials?metric=ggr&limit=10&release=2026-09');
  const cursor = encodeURIComponent(first.json.pagination.cursor);
  // Room for 2026-10 beside the current release: 2026-09 goes.
  await service.get('/v1/financials?metric=ggr&limit=11&release=2026-10');
  assert.equal((await service.get('/healthz')).json.retained, ['2026-10']);
  const next = await service.get(`/v1/financials?metric=ggr&limit=13&cursor=${cursor}`);
  assert.is(next.status, 200, next.text);
  assert.is(next.json.meta.release, '2026-09');
  const expected = await rows(`SELECT * FROM ${ggrOf('2026-09')} ORDER BY ${DIMS.map((d) => `"${d}"`).join(', ')} LIMIT 13 OFFSET 10`);
  assert.equal(next.json.data.map(flat), expected.map(dbRow));
});

vintages('the typed client and the query CLI: releases(), revisions(), the release option everywhere', async () => {
  const service = state.service!;
  const api = new DataQueryClient({ baseUrl: service.url, apiKey: service.key });
  assert.equal(
    (await api.releases()).map((r) => r.id),
    ['2026-11', '2026-10', '2026-09'],
  );
  const revised = [];
  for await (const row of api.revisions('ggr', { from: '2026-09', to: '2026-10', country: 'France' }, { limit: 9 })) revised.push(row);
  const walked = (await walkPages(service, '/v1/revisions?metric=ggr&from=2026-09&to=2026-10&country=France', 1000)).flatMap((p) => p.data);
  assert.ok(walked.length > 0);
  assert.equal(revised, walked);
  for await (const page of api.financialPages('ggr', { country: 'France' }, { release: '2026-09', maxPages: 1, limit: 2 }))
    assert.is(page.body.meta.release, '2026-09');
  const catalog = await api.catalog({ release: '2026-10' });
  assert.ok(catalog.some((d) => d.name === 'ggr'));

  const cli = async (args: string[]) => {
    const run = await runQueryCli(args, { DQS_API_KEY: service.key, DQS_URL: service.url });
    return { code: run.code, stdout: run.stdout.toString() };
  };
  const csv = await cli([
    'revisions',
    'ggr',
    '--from',
    '2026-09',
    '--to',
    '2026-10',
    '--country',
    'France',
    '--format',
    'csv',
    '--all',
    '--limit',
    '7',
  ]);
  assert.is(csv.code, 0);
  const lines = csv.stdout.trim().split(/\r?\n/);
  assert.is(lines[0], [...DIMS, 'change', 'before_ggr', 'after_ggr'].join(','));
  assert.is(lines.length - 1, walked.length);
  const old = await cli(['ggr', '--country', 'France', '--release', '2026-09', '--limit', '3']);
  assert.is(old.code, 0);
  const expected = await rows(
    `SELECT * FROM ${ggrOf('2026-09')} WHERE country = 'France' ORDER BY ${DIMS.map((d) => `"${d}"`).join(', ')} LIMIT 3`,
  );
  assert.equal(JSON.parse(old.stdout).map(flat), expected.map(dbRow));
});

vintages("README's vintage examples answer", async () => {
  const text = await fs.readFile(path.resolve(import.meta.dirname, '../README.md'), 'utf8');
  const section = text.slice(text.indexOf('### Releases and revisions'), text.indexOf('### Bulk export'));
  const lines = [...section.matchAll(/^curl -s "\$BASE(\/v1\/[^"]+)"(.*)$/gm)];
  assert.ok(lines.length >= 4, 'README shows the vintage examples');
  // README names the release served before its second one FIRST, and that one NEXT.
  const [next, first] = (await state.service!.get('/v1/releases')).json.releases.map((r: { id: string }) => r.id);
  for (const [, example, rest] of lines) {
    const pathAndQuery = example!.replaceAll('$FIRST', first).replaceAll('$NEXT', next);
    const accept = /-H "Accept: ([^"]+)"/.exec(rest!)?.[1];
    const res = await state.service!.get(pathAndQuery, accept ? { headers: { accept } } : {});
    assert.is(res.status, 200, `${pathAndQuery}: ${res.text}`);
    if (accept || pathAndQuery.includes('format=csv')) assert.ok(res.text.split('\r\n').length > 3, pathAndQuery);
    else if (pathAndQuery.endsWith('.atom')) assert.match(res.text, /<entry>/, pathAndQuery);
    else assert.ok((res.json.data ?? res.json.releases).length > 0, pathAndQuery);
  }
});

vintages.run();

const waiting = suite('a release that takes longer than RELEASE_LOAD_WAIT_MS');
waiting('answers 503 with Retry-After while it loads, then 200', async () => {
  // The fixture as the current release and, copied, as an older one.
  const dataDir = await tempDir('dqs-vintages-');
  const fixture = path.join(await fixtureDataDir(), FIXTURE_RELEASE);
  await fs.cp(fixture, path.join(dataDir, FIXTURE_RELEASE), { recursive: true });
  await fs.cp(fixture, path.join(dataDir, '2026-09'), { recursive: true });
  const manifest = path.join(dataDir, '2026-09', 'manifest.json');
  await fs.writeFile(manifest, JSON.stringify({ ...JSON.parse(await fs.readFile(manifest, 'utf8')), release: '2026-09' }));
  await fs.writeFile(path.join(dataDir, 'CURRENT'), `${FIXTURE_RELEASE}\n`);
  const service = await startTestService({ dataDir, env: { RELEASE_LOAD_WAIT_MS: '1' } });
  try {
    const q = '/v1/financials?metric=ggr&limit=5&release=2026-09';
    const res = await service.get(q);
    assert.equal(
      [res.status, res.json, res.headers['retry-after']],
      [503, { error: "Release '2026-09' is loading; try again shortly" }, '5'],
    );
    let ok: Response | undefined;
    for (let i = 0; i < 200 && ok?.status !== 200; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      ok = await service.get(q);
    }
    assert.is(ok!.status, 200);
  } finally {
    await service.stop();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
});
waiting.run();
