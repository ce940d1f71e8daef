import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { DuckDBInstance } from '@duckdb/node-api';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { loadDrop } from '../etl/load.ts';
import { rollback } from '../etl/releases.ts';
import { quoteLiteral } from '../src/duckdb/sql-text.ts';
import { MANIFEST_FILE } from '../src/releases/manifest.ts';
import { writePointer } from '../src/releases/on-disk.ts';
import { SERVER_ARGS } from './helpers/processes.ts';
import { FIXTURE_RELEASE, fixtureDataDir, type Response, startTestService, type TestService, tempDir } from './helpers/service.ts';

// A running server follows DATA_DIR's pointer: releases published by `etl load`
// (each with ggr multiplied by a known factor) are switched in under traffic.

const GRACE_SECONDS = 3600;
const state = {
  dataDir: '',
  now: Date.now(),
  service: undefined as TestService | undefined,
  other: undefined as TestService | undefined,
};
const clock = () => state.now;

/** Publishes the fixture release with ggr × factor as `release`; returns when the pointer names it. */
async function publish(release: string, factor: number, dataDir = state.dataDir): Promise<number> {
  const drop = await tempDir('dqs-drop-');
  try {
    const fixture = path.join(await fixtureDataDir(), FIXTURE_RELEASE);
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    await connection.run(
      `COPY (SELECT * REPLACE (ggr * ${factor} AS ggr) FROM read_parquet(${quoteLiteral(path.join(fixture, 'ggr.parquet'))})) TO ${quoteLiteral(path.join(drop, 'ggr.parquet'))} (FORMAT parquet)`,
    );
    connection.closeSync();
    instance.closeSync();
    for (const name of ['turnover', 'fx', 'country', 'country_reference'])
      await fs.copyFile(path.join(fixture, `${name}.parquet`), path.join(drop, `${name}.parquet`));
    await loadDrop({ drop, dataDir, release, force: false, minYear: 1990, maxYear: 2100, maxRowChange: 0.25 });
    return Date.now();
  } finally {
    await fs.rm(drop, { recursive: true, force: true });
  }
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const serving = async (service: TestService) => (await service.get('/healthz')).json?.release as string;
const untilServing = (service: TestService, release: string) =>
  waitFor(`serving ${release}`, async () => ((await serving(service)) === release ? true : undefined));

const QUERIES = [
  '/v1/financials?metric=ggr&limit=50',
  ...[2001, 2010, 2020, 2030].map((y) => `/v1/financials?metric=ggr&year=${y}&limit=20`),
  '/v1/financials?metric=fx&limit=30',
];

const live = suite('live release switch');
live.before(async () => {
  state.dataDir = await tempDir('dqs-releases-');
  await publish('2026-10', 1);
  const env = { RELEASE_POLL_MS: '200', RELEASE_GRACE_SECONDS: String(GRACE_SECONDS) };
  state.service = await startTestService({ dataDir: state.dataDir, clock, env });
  state.other = await startTestService({ dataDir: state.dataDir, env });
});
live.after(async () => {
  await state.service?.stop();
  await state.other?.stop();
  await fs.rm(state.dataDir, { recursive: true, force: true });
});

live('the catalog, financial and reference responses name the serving release and describe it', async () => {
  const service = state.service!;
  const manifest = JSON.parse(await fs.readFile(path.join(state.dataDir, '2026-10', MANIFEST_FILE), 'utf8'));
  const catalog = (await service.get('/v1/catalog')).json;
  assert.equal(catalog.release, { id: '2026-10', published_at: manifest.published_at, synthetic: false });
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    for (const entry of catalog.datasets) {
      assert.is(entry.row_count, manifest.datasets[entry.name].rows, entry.name);
      const file = quoteLiteral(path.join(state.dataDir, '2026-10', `${entry.name}.parquet`));
      if (entry.name === 'country_reference') {
        assert.is(entry.first_year, undefined);
        continue;
      }
      const [[first, last]] = (await connection.runAndReadAll(`SELECT min(year), max(year) FROM read_parquet(${file})`)).getRows() as [
        [number, number],
      ];
      assert.equal([entry.first_year, entry.last_year], [first, last], entry.name);
    }
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
  assert.is((await service.get('/v1/financials?metric=turnover&limit=2')).json.meta.release, '2026-10');
  assert.is((await service.get('/v1/reference?dataset=country_reference&limit=2')).json.meta.release, '2026-10');
});

live(
  'a published release is switched in under concurrent traffic: zero non-200s, no response mixing releases; each replica switches',
  async () => {
    const service = state.service!;
    assert.is(await serving(service), '2026-10');
    const before = new Map<string, string>();
    for (const q of QUERIES) before.set(q, (await service.get(q)).text);

    const seen: Array<{ query: string; res: Response }> = [];
    let switchedAt = 0;
    const deadline = Date.now() + 60_000;
    const worker = async (w: number) => {
      // Bounded in count and time; keeps going until 40 requests after the switch.
      for (let i = 0, after = 0; i < 3000 && after < 40 && Date.now() < deadline; i++) {
        const query = QUERIES[(i + w) % QUERIES.length]!;
        seen.push({ query, res: await service.get(query) });
        if (switchedAt) after++;
      }
    };
    const traffic = Promise.all([0, 1, 2, 3].map(worker));
    await waitFor('traffic before the switch', async () => (seen.length >= 40 ? true : undefined));
    const published = await publish('2026-11', 2);
    const log = await waitFor('the switch logged', async () =>
      state.service!.logs.find((l) => l.msg === 'serving release' && l.release === '2026-11'),
    );
    switchedAt = Date.now();
    await traffic;

    const noticed = service.logs.find((l) => l.msg === 'loading release' && l.release === '2026-11');
    assert.ok(Date.parse(noticed.time) - published < 2000, `pointer change noticed after ${Date.parse(noticed.time) - published} ms`);
    assert.ok(log);
    const after = new Map<string, string>();
    for (const q of QUERIES) after.set(q, (await service.get(q)).text);
    assert.is.not(after.get(QUERIES[0]!), before.get(QUERIES[0]!), 'ggr doubled: the releases must differ');

    const statuses = seen.filter((s) => s.res.status !== 200).map((s) => `${s.query}: ${s.res.status} ${s.res.text}`);
    assert.equal(statuses, [], 'every response is 200');
    const mixed = seen.filter((s) => s.res.text !== before.get(s.query) && s.res.text !== after.get(s.query));
    assert.equal(
      mixed.map((s) => s.query),
      [],
      "every body is one release's, whole",
    );
    const fromNew = seen.filter((s) => s.res.text === after.get(s.query) && s.res.text !== before.get(s.query)).length;
    assert.ok(fromNew > 0 && fromNew < seen.length, `traffic spanned the switch (${fromNew} of ${seen.length} from the new release)`);

    await untilServing(state.other!, '2026-11');
    assert.is((await service.get('/v1/catalog')).json.release.id, '2026-11');
    assert.is(JSON.parse(after.get(QUERIES[0]!)!).meta.release, '2026-11');
    assert.is(JSON.parse(before.get(QUERIES[0]!)!).meta.release, '2026-10');
    const health = await service.get('/healthz');
    assert.equal(health.json, { status: 'ok', release: '2026-11', retained: ['2026-10'] });
  },
);

live('a cursor issued before a switch keeps paging through its release; once its release is unloaded, it loads it again', async () => {
  const service = state.service!;
  const q = '/v1/financials?metric=ggr&limit=100';
  const first = await service.get(q);
  const pages = [first];
  for (let i = 0; i < 3; i++) pages.push(await service.get(`${q}&cursor=${encodeURIComponent(pages.at(-1)!.json.pagination.cursor)}`));
  await publish('2026-12', 3);
  await untilServing(service, '2026-12');
  // Same cursors after the switch: the same pages of 2026-11, byte for byte.
  for (let i = 1; i < pages.length; i++) {
    const again = await service.get(`${q}&cursor=${encodeURIComponent(pages[i - 1]!.json.pagination.cursor)}`);
    assert.is(again.status, 200);
    assert.is(again.text, pages[i]!.text, `page ${i + 1}`);
  }
  const fresh = await service.get(q);
  assert.is.not(fresh.text, first.text);

  state.now += GRACE_SECONDS * 1000;
  await waitFor('the idle release unloaded', async () =>
    service.logs.find((l) => l.msg === 'unloaded a release' && l.release === '2026-11'),
  );
  assert.equal((await service.get('/healthz')).json.retained, []);
  // Another page size: not a cached body, so its rows come from the release loaded again.
  const again = await service.get(`/v1/financials?metric=ggr&limit=99&cursor=${encodeURIComponent(first.json.pagination.cursor)}`);
  assert.is(again.status, 200);
  assert.equal(again.json.data, pages[1]!.json.data.slice(0, 99));
  assert.is(again.json.meta.release, '2026-11');
  assert.ok(service.logs.some((l) => l.msg === 'release loaded on demand' && l.release === '2026-11'));
  assert.equal((await service.get('/healthz')).json.retained, ['2026-11']);
});

live('etl rollback switches the server back', async () => {
  const service = state.service!;
  const ggr = async () => (await service.get('/v1/financials?metric=ggr&limit=1')).json.data[0].values.ggr as number;
  const tripled = await ggr();
  assert.equal(await rollback(state.dataDir), ['2026-12', '2026-11']);
  await untilServing(service, '2026-11');
  assert.ok(Math.abs((await ggr()) / tripled - 2 / 3) < 1e-9, 'ggr × 2 again');
  // Forward again: 2026-12 is still loaded (withdrawn, not removed), so the switch reuses it instead of loading it.
  await rollback(state.dataDir, '2026-12');
  await untilServing(service, '2026-12');
  assert.ok(service.logs.some((l) => l.msg === 'switching to a loaded release' && l.release === '2026-12'));
});

live('a corrupt release leaves the server on its old data and says why; the admin reload reports it', async () => {
  const service = state.service!;
  const bad = path.join(state.dataDir, '2027-01');
  await fs.cp(path.join(state.dataDir, '2026-12'), bad, { recursive: true });
  const manifest = JSON.parse(await fs.readFile(path.join(bad, MANIFEST_FILE), 'utf8'));
  await fs.writeFile(path.join(bad, MANIFEST_FILE), JSON.stringify({ ...manifest, release: '2027-01' }));
  await fs.appendFile(path.join(bad, 'fx.parquet'), 'garbage');
  await writePointer(state.dataDir, '2027-01');
  const failed = await waitFor('the failure logged', async () =>
    service.logs.find((l) => l.release === '2027-01' && /cannot switch releases, still serving 2026-12/.test(l.msg)),
  );
  assert.match(failed.msg, /fx\.parquet: SHA-256/);
  assert.is(await serving(service), '2026-12');
  assert.is((await service.get('/v1/financials?metric=ggr&limit=5')).status, 200);

  const reload = await service.admin('POST', '/releases/reload');
  assert.is(reload.status, 409);
  assert.match(reload.json.error, /^Cannot load the release, still serving the previous one: .*fx\.parquet: SHA-256/);
  await writePointer(state.dataDir, '2026-12');
  const ok = await service.admin('POST', '/releases/reload');
  assert.equal([ok.status, ok.json.serving, ok.json.changed], [200, '2026-12', false]);
});

live.run();

const hup = suite('SIGHUP');
hup('SIGHUP retries a release that failed to load; polls do not', async () => {
  const dataDir = await tempDir('dqs-releases-');
  const stateDir = await tempDir();
  await publish('2026-10', 1, dataDir);
  await publish('2026-11', 2, dataDir);
  await writePointer(dataDir, '2026-10');
  const fx = path.join(dataDir, '2026-11', 'fx.parquet');
  const good = await fs.readFile(fx);
  await fs.appendFile(fx, 'garbage');
  const child = spawn(process.execPath, [...SERVER_ARGS], {
    cwd: path.resolve(import.meta.dirname, '..'),
    env: { ...process.env, DATA_DIR: dataDir, STATE_DIR: stateDir, PORT: '0', ADMIN_PORT: '0', RELEASE_POLL_MS: '100' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines: any[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) => lines.push(JSON.parse(line)));
  const logged = (what: string, match: (l: any) => boolean) => waitFor(what, async () => lines.find(match), 60_000);
  try {
    await logged('ready', (l) => l.msg === 'ready');
    await writePointer(dataDir, '2026-11');
    await logged('the failed load', (l) => /^cannot switch releases, still serving 2026-10/.test(l.msg));
    await fs.writeFile(fx, good);
    await new Promise((resolve) => setTimeout(resolve, 1000)); // ten polls
    assert.is(
      lines.filter((l) => /^cannot switch releases/.test(l.msg) || (l.msg === 'loading release' && l.release === '2026-11')).length,
      2,
      'one attempt only',
    );
    child.kill('SIGHUP');
    const switched = await logged('the switch', (l) => l.msg === 'serving release' && l.release === '2026-11');
    assert.is(lines.find((l) => l.msg === 'loading release' && l.reason === 'SIGHUP')?.release, '2026-11');
    assert.equal(switched.retained, ['2026-10']);
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
    await fs.rm(dataDir, { recursive: true, force: true });
    await fs.rm(stateDir, { recursive: true, force: true });
  }
});
hup.run();

// The poll's drop of an expired release used to run under a request
// still waiting to read it (a 500: "Table … does not exist").
const held = suite('a release held by a request in flight');
held(
  'its idle time ends and a poll runs while the request waits for a connection: it answers 200 from its release, and the release is unloaded after',
  async () => {
    const dataDir = await tempDir('dqs-releases-');
    let now = Date.now();
    let open = () => {};
    await publish('2026-10', 1, dataDir);
    const service = await startTestService({
      dataDir,
      clock: () => now,
      env: { DUCKDB_CONNECTIONS: '1', RELEASE_POLL_MS: '50', RELEASE_GRACE_SECONDS: '60', CACHE_MAX_BYTES: '0' },
    });
    try {
      const q = '/v1/financials?metric=ggr&limit=100';
      const first = await service.get(q);
      const cursor = encodeURIComponent(first.json.pagination.cursor);
      const expected = (await service.get(`${q}&cursor=${cursor}`)).text;
      await publish('2026-11', 2, dataDir);
      await untilServing(service, '2026-11');
      // The pool's only connection, held until the gate opens.
      const gate = new Promise<void>((resolve) => (open = resolve));
      const busy = service.running.services.db.use(() => gate);
      const inFlight = service.get(`${q}&cursor=${cursor}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
      now += 61_000;
      await new Promise((resolve) => setTimeout(resolve, 400)); // several polls
      assert.not.ok(
        service.logs.some((l) => l.msg === 'unloaded a release'),
        'not dropped while held',
      );
      open();
      await busy;
      const res = await inFlight;
      assert.is(res.status, 200, res.text);
      assert.is(res.text, expected);
      assert.is(res.json.meta.release, '2026-10');
      now += 61_000; // idle since the request let go
      await waitFor('dropped once let go', async () => service.logs.find((l) => l.msg === 'unloaded a release' && l.release === '2026-10'));
      const after = await service.get(`${q}&cursor=${cursor}`);
      assert.equal([after.status, after.text], [200, expected], 'loaded again for the cursor');
    } finally {
      open();
      await service.stop();
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  },
);
held.run();

// A pointer the server cannot follow is logged once per distinct
// failure, not on every poll, and counted in dqs_release_switch_failures_total.
const pointer = suite('a pointer the server cannot follow');
pointer(
  'a missing folder, a bad manifest, an unreadable CURRENT: one error line each over many polls, counted; the fix is logged once',
  async () => {
    const dataDir = await tempDir('dqs-releases-');
    await publish('2026-10', 1, dataDir);
    const service = await startTestService({ dataDir, env: { RELEASE_POLL_MS: '100' } });
    const failures = () => service.logs.filter((l) => l.level >= 50 && /^cannot switch releases/.test(l.msg));
    const counted = async () =>
      Number(/^dqs_release_switch_failures_total (\d+)/m.exec(await fetch(`${service.adminUrl}/metrics`).then((r) => r.text()))?.[1]);
    try {
      await writePointer(dataDir, '2026-09');
      await new Promise((resolve) => setTimeout(resolve, 1500)); // 15 polls
      assert.is(failures().length, 1, 'one line for the missing folder');
      assert.match(failures()[0].msg, /2026-09/);
      await fs.mkdir(path.join(dataDir, '2026-08'));
      await fs.writeFile(path.join(dataDir, '2026-08', MANIFEST_FILE), '{"release": ');
      await writePointer(dataDir, '2026-08');
      await new Promise((resolve) => setTimeout(resolve, 1000));
      assert.is(failures().length, 2, 'one line for the bad manifest');
      // Renamed into place: a poll between writeFile's truncate and its write would read "" instead, another failure.
      await fs.writeFile(path.join(dataDir, '.CURRENT.test'), 'not a release\n');
      await fs.rename(path.join(dataDir, '.CURRENT.test'), path.join(dataDir, 'CURRENT'));
      await new Promise((resolve) => setTimeout(resolve, 1000));
      assert.is(failures().length, 3, 'one line for the unreadable pointer, not silence');
      assert.match(failures()[2].msg, /not a release id/);
      assert.is(await counted(), 3);
      await writePointer(dataDir, '2026-10');
      await waitFor('the recovery logged', async () => service.logs.find((l) => l.msg === 'the release pointer is served again'));
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.is(service.logs.filter((l) => l.msg === 'the release pointer is served again').length, 1);
      assert.is((await service.get('/healthz')).json.release, '2026-10');
    } finally {
      await service.stop();
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  },
);
pointer.run();

// With two releases loaded, a cursor re-tagged with the other one's release
// finds that release, and its MAC is what refuses it.
const retag = suite('a cursor re-tagged with another loaded release');
retag('is refused by its MAC, while the untouched cursor of either release pages', async () => {
  const dataDir = await tempDir('dqs-releases-');
  await publish('2026-10', 1, dataDir);
  const service = await startTestService({ dataDir, env: { RELEASE_POLL_MS: '100' } });
  try {
    const q = '/v1/financials?metric=ggr&limit=50';
    const old = (await service.get(q)).json.pagination.cursor as string;
    await publish('2026-11', 2, dataDir);
    await untilServing(service, '2026-11');
    const current = (await service.get(q)).json.pagination.cursor as string;
    assert.equal((await service.get('/healthz')).json.retained, ['2026-10'], 'both loaded');
    const tag = (cursor: string) => cursor.split('.')[2]!;
    assert.is.not(tag(old), tag(current));
    for (const [cursor, other] of [
      [current, old],
      [old, current],
    ] as const) {
      assert.is((await service.get(`${q}&cursor=${encodeURIComponent(cursor)}`)).status, 200);
      const retagged = `${cursor.split('.').slice(0, 2).join('.')}.${tag(other)}`;
      const res = await service.get(`${q}&cursor=${encodeURIComponent(retagged)}`);
      assert.equal([res.status, res.json], [400, { error: 'Invalid pagination cursor' }], retagged);
    }
  } finally {
    await service.stop();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
});
retag.run();
