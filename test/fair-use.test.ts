import fs from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { request } from 'undici';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { loadDrop } from '../etl/load.ts';
import { fixtureDataDir, send, startTestService, type TestService, tempDir } from './helpers/service.ts';

// One key's heavy requests (a revisions diff, a rollup too large to answer, a large
// aggregate, a filtered export, an old release loaded) cannot keep another key's
// requests waiting until they end, run DuckDB out of memory into a 500, or get around
// the export budget; an export nobody reads ends. Two published releases in which every
// row differs (two seeds), a quarter of the full size, with a second key as the victim.
// How long the victim waits is the bench's to measure (bench/scripts/fair-use.ts), not
// a wall-clock bound here.

const SCALE = 0.25;
/** Deadlines and budgets no request here meets, however busy the machine: what is tested is what is answered, not how soon. */
const UNHURRIED = { QUERY_TIMEOUT_MS: '600000', RELEASE_LOAD_WAIT_MS: '600000', KEY_HEAVY_SECONDS_PER_MINUTE: '3600' };

const state: { dataDir: string; service?: TestService; attacker: string } = { dataDir: '', attacker: '' };

async function publishTwoReleases(): Promise<string> {
  const dataDir = await tempDir('dqs-fair-');
  for (const [release, seed] of [
    ['2026-10', 7],
    ['2026-11', 8],
  ] as const) {
    const generated = path.join(await fixtureDataDir({ seed, scale: SCALE, release }), release);
    await loadDrop({ drop: generated, dataDir, release, force: true, minYear: 1990, maxYear: 2100, maxRowChange: 0.25 });
  }
  return dataDir;
}

const newKey = async (service: TestService, client: string): Promise<string> => (await service.admin('POST', '/keys', { client })).json.key;

/** GET with a key, the whole body read; undici directly (no OpenAPI check: the victim loop wants the bare cost). */
async function get(service: TestService, pathAndQuery: string, key: string, headers: Record<string, string> = {}) {
  const res = await request(`${service.url}${pathAndQuery}`, { headers: { 'x-api-key': key, ...headers } });
  const body = Buffer.from(await res.body.arrayBuffer());
  return { status: res.statusCode, headers: res.headers, body };
}

/**
 * Runs `attack` while the victim key asks for a small page every 20 ms, alternating a
 * cached one and one the cache has not seen; returns every status each side got.
 */
async function underAttack(service: TestService, attack: () => Promise<number[]>) {
  const victim: number[] = [];
  let attacking = true;
  let n = 0;
  const probe = (async () => {
    while (attacking) {
      n++;
      const page = n % 2 === 0 ? '/v1/financials?metric=ggr&limit=10' : `/v1/financials?metric=turnover&limit=${1 + (n % 997)}&fx=USD`;
      victim.push((await get(service, page, service.key)).status);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  try {
    const attacker = await attack();
    return { victim, attacker };
  } finally {
    attacking = false;
    await probe;
  }
}

const heavy = suite('fair use: heavy requests of one key');
heavy.before(async () => {
  // Shared by every suite here; the last one removes it.
  state.dataDir = await publishTwoReleases();
  // No deadline is tested here: on a busy machine a heavy request may take long, and is
  // still to be answered (or refused as busy), never cut into a 504.
  state.service = await startTestService({ dataDir: state.dataDir, env: UNHURRIED });
  state.attacker = await newKey(state.service, 'attacker');
});
heavy.after(async () => {
  await state.service?.stop();
});

heavy('the victim key is answered, never refused, while another key runs each heavy request', async () => {
  const service = state.service!;
  const attacks: Record<string, string[]> = {
    revisions: ['metric=ggr', 'metric=turnover', 'metric=ggr&change=changed'].map(
      (q) => `/v1/revisions?${q}&from=2026-10&to=2026-11&limit=1`,
    ),
    'refused rollup': ['', '&channel=Online', '&channel=Land'].map(
      (q) => `/v1/aggregate?metric=ggr&group_by=country,state,product,sub_channel,year,fx&rollup=true${q}`,
    ),
    'large aggregate': ['country,state,product,year', 'country,state,sub_channel,year', 'state,product,channel,year'].map(
      (g) => `/v1/aggregate?metric=ggr&fx=USD&group_by=${g}&order=-ggr_sum`,
    ),
    'filtered export': ['text/csv', 'application/x-ndjson', 'application/vnd.apache.arrow.stream'].map(
      (accept) => `/v1/export?metric=ggr&period=1990-01-01:2100-12-31#${accept}`,
    ),
    'old release loaded': ['ggr', 'turnover', 'fx'].map((metric) => `/v1/financials?metric=${metric}&release=2026-10&limit=5`),
  };
  for (const [name, paths] of Object.entries(attacks)) {
    const run = await underAttack(service, () =>
      Promise.all(
        paths.map(async (pathAndQuery) => {
          const [url, accept] = pathAndQuery.split('#') as [string, string | undefined];
          return (await get(service, url, state.attacker, accept ? { accept } : {})).status;
        }),
      ),
    );
    assert.ok(run.victim.length > 0 && run.victim.every((s) => s === 200), `${name}: the victim's statuses ${run.victim}`);
    assert.ok(
      run.attacker.every((s) => s < 500 || s === 503),
      `${name}: the attacker's statuses ${run.attacker}`,
    );
  }
});

heavy('a rollup too large to answer is refused for the price of one count in DuckDB', async () => {
  const service = state.service!;
  const { db } = service.running.services;
  const before = db.queriesRun;
  const res = await service.get('/v1/aggregate?metric=ggr&group_by=country,state,product,sub_channel,year,fx&rollup=true', {
    key: state.attacker,
  });
  assert.is(res.status, 400);
  assert.match(res.json.error, /^The aggregate has \d+ groups, more than the 100000 one request may return/);
  assert.is(db.queriesRun - before, 1, 'one query, the count');
});

heavy('revisions at once within a small DuckDB memory limit: every one answered, none a 500', async () => {
  const service = await startTestService({
    dataDir: state.dataDir,
    env: { ...UNHURRIED, DUCKDB_MEMORY_LIMIT: '64MB', ADMISSION_CONCURRENCY: '2', ADMISSION_WAIT_MS: '600000' },
  });
  try {
    const queries = [
      'metric=ggr',
      'metric=turnover',
      'metric=ggr&change=changed',
      'metric=turnover&change=changed',
      'metric=ggr&fx=USD',
      'metric=turnover&fx=EUR',
    ];
    const answers = await Promise.all(queries.map((q) => service.get(`/v1/revisions?${q}&from=2026-10&to=2026-11&limit=2`)));
    assert.equal(
      answers.map((a) => a.status),
      queries.map(() => 200),
      answers.map((a) => a.text.slice(0, 200)).join('\n'),
    );
    // Every row differs between the two seeds: pages are full.
    assert.ok(answers.every((a) => a.json.data.length === 2));
  } finally {
    await service.stop();
  }
});

heavy.run();

const admission = suite('fair use: admission between keys');

admission("with one turn at a time, a key with six aggregates queued does not hold up another key's one", async () => {
  const service = await startTestService({
    dataDir: state.dataDir,
    env: {
      ...UNHURRIED,
      ADMISSION_CONCURRENCY: '1',
      ADMISSION_PER_KEY: '1',
      ADMISSION_WAIT_MS: '600000',
      AGGREGATE_KEEP_BYTES: '0',
      CACHE_MAX_BYTES: '0',
    },
  });
  try {
    const attacker = await newKey(service, 'attacker');
    const finished: string[] = [];
    const ask = async (key: string, name: string, filter: string) => {
      const res = await get(service, `/v1/aggregate?metric=ggr&fx=USD&group_by=country,state,product,year&${filter}`, key);
      assert.is(res.status, 200, `${name}: ${res.body.toString().slice(0, 200)}`);
      finished.push(name);
    };
    const { admission } = service.running.services;
    // The one turn is taken by a job of a third key until every request has queued, so
    // the order they run in is the queue's alone, however fast each aggregate is.
    let release!: () => void;
    const holder = admission.run('holder', 'aggregate', () => new Promise<void>((resolve) => (release = resolve)));
    const queued = async (n: number) => {
      const deadline = Date.now() + 60_000;
      while (admission.queued < n) {
        if (Date.now() > deadline) throw new Error(`${admission.queued} heavy jobs queued after 60 s, not ${n}`);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    };
    const backlog = ['Online', 'Land']
      .flatMap((channel) => ['Betting', 'Gaming', 'Lottery'].map((category) => `channel=${channel}&category=${category}`))
      .map((filter, i) => ask(attacker, `a${i + 1}`, filter));
    await queued(6);
    const victim = ask(service.key, 'victim', 'channel=Online&category=Betting&year=2024');
    await queued(7);
    release();
    await Promise.all([holder, ...backlog, victim]);
    // First come first served would run it last, seventh.
    assert.ok(finished.indexOf('victim') <= 1, `finished in the order ${finished}`);
  } finally {
    await service.stop();
  }
});

admission('past ADMISSION_WAIT_MS a heavy request is refused: 503 busy with Retry-After, and the waiting one is not run', async () => {
  const service = await startTestService({
    dataDir: state.dataDir,
    env: { ADMISSION_CONCURRENCY: '1', ADMISSION_WAIT_MS: '1', AGGREGATE_KEEP_BYTES: '0', CACHE_MAX_BYTES: '0' },
  });
  try {
    const answers = await Promise.all(
      ['ggr', 'turnover', 'ggr&change=changed'].map((q) => service.get(`/v1/revisions?metric=${q}&from=2026-10&to=2026-11&limit=1`)),
    );
    const busy = answers.filter((a) => a.status === 503);
    assert.ok(busy.length >= 1, `statuses ${answers.map((a) => a.status)}`);
    assert.equal(busy[0]!.json, { error: 'Server busy with heavy requests; try again in 1 seconds', retryAfterSeconds: 1 });
    assert.is(busy[0]!.headers['retry-after'], '1');
    assert.ok(answers.every((a) => a.status === 200 || a.status === 503));
    const metrics = (await send(`${service.adminUrl}/metrics`)).text;
    assert.match(metrics, new RegExp(`dqs_heavy_refusals_total\\{reason="busy"\\} ${busy.length}\\b`));
  } finally {
    await service.stop();
  }
});

admission.run();

const exports = suite('fair use: exports');

/** A raw request whose response is never read: the socket is paused at once. */
async function unreadExport(service: TestService, key: string, pathAndQuery: string, accept: string) {
  const socket = net.connect(Number(new URL(service.url).port), '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.write(`GET ${pathAndQuery} HTTP/1.1\r\nHost: x\r\nx-api-key: ${key}\r\nAccept: ${accept}\r\n\r\n`);
  const head = await new Promise<string>((resolve) => socket.once('data', (chunk) => resolve(String(chunk).split('\r\n')[0]!)));
  socket.pause();
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  return { head, closed, socket };
}

exports(
  'every answer that sends export bytes costs one export, whatever the conditional and range headers; 304 and 416 cost nothing',
  async () => {
    const service = await startTestService({ dataDir: state.dataDir, env: { EXPORT_LIMIT_PER_DAY: '8' } });
    try {
      const whole = await get(service, '/v1/export?metric=ggr', service.key);
      assert.equal([whole.status, whole.headers['x-export-remaining']], [200, '7']);
      const etag = String(whole.headers.etag);
      const size = whole.body.length;
      const charged: Array<[Record<string, string>, number]> = [
        [{ 'if-none-match': '"x"' }, 200],
        [{ range: 'bytes=0-' }, 206],
        [{ range: 'bytes=zero-ten' }, 200],
        [{ range: 'bytes=0-9,20-29' }, 200],
        [{ range: 'bytes=10-', 'if-range': '"another"' }, 200],
        [{ range: 'bytes=10-', 'if-range': etag }, 206],
      ];
      let remaining = 7;
      for (const [headers, status] of charged) {
        const res = await get(service, '/v1/export?metric=ggr', service.key, headers);
        remaining--;
        assert.equal([res.status, res.headers['x-export-remaining']], [status, String(remaining)], JSON.stringify(headers));
      }
      const free: Record<string, string>[] = [{ 'if-none-match': etag }, { range: `bytes=${size}-` }];
      for (const headers of free) {
        const res = await get(service, '/v1/export?metric=ggr', service.key, headers);
        assert.ok(res.status === 304 || res.status === 416, JSON.stringify(headers));
      }
      assert.is(
        (await get(service, '/v1/export?metric=ggr&country=France', service.key, { accept: 'text/csv' })).headers['x-export-remaining'],
        '0',
        'the two free answers spent nothing',
      );
      const spent = await get(service, '/v1/export?metric=ggr', service.key, { range: 'bytes=0-' });
      assert.is(spent.status, 429, 'a range is an export like any other once the budget is spent');
      assert.is((await get(service, '/v1/export?metric=ggr', service.key, { 'if-none-match': etag })).status, 304, 'a 304 stays free');
    } finally {
      await service.stop();
    }
  },
);

exports(
  'an export the client stops reading ends after EXPORT_IDLE_SECONDS; a key has EXPORTS_OPEN_PER_KEY open at most (a whole revisions CSV counts), another key is not affected',
  async () => {
    const service = await startTestService({ dataDir: state.dataDir, env: { EXPORT_IDLE_SECONDS: '1', EXPORTS_OPEN_PER_KEY: '1' } });
    try {
      const other = await newKey(service, 'other');
      const stalled = await unreadExport(
        service,
        service.key,
        '/v1/export?metric=ggr&period=1990-01-01:2100-12-31',
        'application/x-ndjson',
      );
      assert.is(stalled.head, 'HTTP/1.1 200 OK');
      const second = await service.get('/v1/export?metric=ggr&country=France', { headers: { accept: 'text/csv' } });
      assert.is(second.status, 429);
      assert.equal(second.json, {
        error: 'Too many exports open: at most 1 per key at once; finish or cancel one, then try again',
        retryAfterSeconds: 10,
      });
      // A whole revisions diff as CSV streams as an export, and is counted as one.
      const diff = await service.get('/v1/revisions?metric=ggr&format=csv');
      assert.is(diff.status, 429, 'a whole revisions CSV is an export too');
      assert.equal(diff.json, second.json);
      assert.is(
        (await service.get('/v1/export?metric=ggr&country=France', { key: other, headers: { accept: 'text/csv' } })).status,
        200,
        'another key',
      );
      // Ended by the server within a few checks of the bound, not left open.
      const metric = async () =>
        /dqs_heavy_refusals_total\{reason="export_idle"\} 1\b/.test((await send(`${service.adminUrl}/metrics`)).text);
      let ended = false;
      for (let waited = 0; waited < 60_000 && !ended; waited += 100) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        ended = await metric();
      }
      assert.ok(ended, 'the unread export was ended');
      // The client sees the connection end once it reads again, short of the body's end.
      stalled.socket.resume();
      await stalled.closed;
      assert.is(
        (await service.get('/v1/export?metric=ggr&country=France', { headers: { accept: 'text/csv' } })).status,
        200,
        'and its place is free again',
      );
    } finally {
      await service.stop();
    }
  },
);

exports.after(async () => {
  await fs.rm(state.dataDir, { recursive: true, force: true });
});

exports.run();
