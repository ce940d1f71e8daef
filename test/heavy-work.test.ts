import fs from 'node:fs/promises';
import path from 'node:path';
import { request } from 'undici';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { loadDrop } from '../etl/load.ts';
import { fixtureDataDir, send, startTestService, type TestService, tempDir } from './helpers/service.ts';

// Heavy work stops when it should: past its deadline (QUERY_TIMEOUT_MS, or a shorter
// Prefer: wait), and when its client has gone, whether it was queued, running in
// DuckDB, or running in slices on the event loop; and an export let go of its release,
// its scratch file and its file handle however it ended, and once started is never cut
// short by admission. Two published full-size releases in which every row differs (two
// seeds), so a revisions diff runs long enough to be cut in the middle, and is as large
// as a user's full diff; before them a small one, a second release to load on demand.

const SCALE = 1;
const SMALL = '2026-09';
const OLD = '2026-10';
const NEW = '2026-11';
const FULL_DIFF = `/v1/revisions?metric=ggr&from=${OLD}&to=${NEW}&limit=3`;

const state: { dataDir: string } = { dataDir: '' };

async function publishReleases(): Promise<string> {
  const dataDir = await tempDir('dqs-heavy-');
  for (const [release, seed, scale] of [
    [SMALL, 7, 0.02],
    [OLD, 7, SCALE],
    [NEW, 8, SCALE],
  ] as const) {
    const generated = path.join(await fixtureDataDir({ seed, scale, release }), release);
    await loadDrop({ drop: generated, dataDir, release, force: true, minYear: 1990, maxYear: 2100, maxRowChange: 0.25 });
  }
  return dataDir;
}

const newKey = async (service: TestService, client: string): Promise<string> => (await service.admin('POST', '/keys', { client })).json.key;

/** GET with a key, the whole body read; `abortAfterMs` cuts the request off (the client leaves). */
async function get(
  service: TestService,
  pathAndQuery: string,
  options: { key?: string; headers?: Record<string, string>; abortAfterMs?: number } = {},
) {
  const signal = options.abortAfterMs === undefined ? undefined : AbortSignal.timeout(options.abortAfterMs);
  try {
    const res = await request(`${service.url}${pathAndQuery}`, {
      headers: { 'x-api-key': options.key ?? service.key, ...options.headers },
      signal,
    });
    const body = Buffer.from(await res.body.arrayBuffer());
    return { status: res.statusCode, headers: res.headers, body, aborted: false };
  } catch (err) {
    if (!signal?.aborted) throw err;
    return { status: 0, headers: {}, body: Buffer.alloc(0), aborted: true };
  }
}

const metric = async (service: TestService, pattern: RegExp): Promise<number> =>
  Number(pattern.exec((await send(`${service.adminUrl}/metrics`)).text)?.[1] ?? 0);

const computations = (service: TestService) => metric(service, /^dqs_revision_computations_total (\d+)/m);
const cancellations = (service: TestService, kind: string, reason: string) =>
  metric(service, new RegExp(`^dqs_heavy_cancellations_total\\{kind="${kind}",reason="${reason}"\\} (\\d+)`, 'm'));

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** This process's CPU seconds (every thread: DuckDB's too), read from /proc as `top` does. */
async function cpuSeconds(): Promise<number> {
  const fields = (await fs.readFile('/proc/self/stat', 'utf8')).split(') ')[1]!.split(' ');
  // utime and stime, fields 14 and 15 of stat(5), in clock ticks (100 a second on Linux).
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * The CPU seconds the server (this process: the test service runs in it) spends from
 * now, or from `since` (a reading of cpuSeconds), until a 250 ms window in which it
 * uses under a quarter of a core, i.e. its work has stopped; Infinity when none comes
 * within 60 s. The test itself only sleeps meanwhile. CPU, not time: on a busy machine
 * the same work takes longer, not more CPU.
 */
async function cpuUntilIdle(since?: number): Promise<number> {
  const start = since ?? (await cpuSeconds());
  const started = performance.now();
  while (performance.now() - started < 60_000) {
    const before = await cpuSeconds();
    const from = performance.now();
    await sleep(250);
    const used = (await cpuSeconds()) - before;
    if (used / ((performance.now() - from) / 1000) < 0.25) return before - start;
  }
  return Infinity;
}

/** What a diff stopped by its deadline or its client may still cost, at most: this share of the CPU a whole one takes. */
const STOPPED_SHARE = 0.1;
/** The CPU seconds of one whole full-size diff, measured in this run (deadlines.before) as the ceiling of what a stopped one may cost. */
const whole = { cpuSeconds: 0 };

const deadlines = suite('heavy work: deadlines');
const dl: { service?: TestService; other: string } = { other: '' };
deadlines.before(async () => {
  state.dataDir = await publishReleases();
  // The ceiling: a whole diff, on a server that lets it finish.
  const unbounded = await startTestService({ dataDir: state.dataDir, env: { QUERY_TIMEOUT_MS: '600000' } });
  try {
    await cpuUntilIdle();
    const before = await cpuSeconds();
    assert.is((await get(unbounded, FULL_DIFF)).status, 200);
    whole.cpuSeconds = (await cpuSeconds()) - before;
  } finally {
    await unbounded.stop();
  }
  dl.service = await startTestService({ dataDir: state.dataDir, env: { QUERY_TIMEOUT_MS: '300' } });
  dl.other = await newKey(dl.service, 'other');
});

/** Asserts that what the server spent from now until idle is a small share of a whole diff: its work stopped. */
async function assertStopped(what: string, since?: number): Promise<void> {
  const spent = await cpuUntilIdle(since);
  assert.ok(
    spent <= STOPPED_SHARE * whole.cpuSeconds,
    `${what}: the server spent ${spent} CPU seconds before it was idle; a whole diff takes ${whole.cpuSeconds}`,
  );
}
deadlines.after(async () => {
  await dl.service?.stop();
});

deadlines('a diff past QUERY_TIMEOUT_MS answers 504 timeout, and the server stops its work', async () => {
  const service = dl.service!;
  // Another key's answer, cached before the heavy request starts.
  const cached = '/v1/financials?metric=ggr&limit=5';
  assert.is((await get(service, cached, { key: dl.other })).status, 200);
  const victim: number[] = [];
  let heavyDone = false;
  const probe = (async () => {
    while (!heavyDone) {
      victim.push((await get(service, cached, { key: dl.other })).status);
      await sleep(10);
    }
  })();
  const heavy = await get(service, FULL_DIFF);
  heavyDone = true;
  await probe;
  assert.is(heavy.status, 504, heavy.body.toString());
  const body = JSON.parse(heavy.body.toString());
  assert.match(body.error, /0\.3 s \(QUERY_TIMEOUT_MS\)/);
  assert.match(body.error, /group_by/);
  assert.match(body.error, /year=/);
  assert.ok(victim.length > 0 && victim.every((s) => s === 200), `the other key's cached answers: ${victim.join(',')}`);
  // Stopped by its deadline, not answered once it was over.
  assert.is(await cancellations(service, 'revisions', 'deadline'), 1);
  await assertStopped('after the 504');
  const log = service.logs.find((line) => line.msg === 'request' && line.url?.startsWith('/v1/revisions'));
  assert.is(log?.code, 'timeout');
  assert.is(log?.status, 504);
});

deadlines('what timed out is not kept: the same request computes again, and times out again', async () => {
  const service = dl.service!;
  const before = await computations(service);
  assert.is((await get(service, FULL_DIFF)).status, 504);
  assert.is(await computations(service), before + 1);
});

const gone = suite('heavy work: a client that leaves');
const cg: { service?: TestService; second: string } = { second: '' };
gone.before(async () => {
  cg.service = await startTestService({ dataDir: state.dataDir, env: { QUERY_TIMEOUT_MS: '60000', ADMISSION_CONCURRENCY: '1' } });
  cg.second = await newKey(cg.service, 'second');
});
gone.after(async () => {
  await cg.service?.stop();
});

gone('a diff whose client leaves after 300 ms stops, and nothing is kept', async () => {
  const service = cg.service!;
  const before = await computations(service);
  const cut = await get(service, FULL_DIFF, { abortAfterMs: 300 });
  assert.ok(cut.aborted);
  await assertStopped('after the client left');
  assert.is(await cancellations(service, 'revisions', 'client_gone'), 1);
  assert.is(await computations(service), before + 1);
  // Nothing was kept: asked again (and left again), it computes afresh.
  await get(service, FULL_DIFF, { abortAfterMs: 300 });
  assert.is(await computations(service), before + 2);
  await cpuUntilIdle();
});

gone("a request queued behind another key's work, whose client leaves, never runs", async () => {
  const service = cg.service!;
  const aggregatesBefore = await metric(service, /^dqs_aggregate_computations_total (\d+)/m);
  // ADMISSION_CONCURRENCY=1: the diff holds the only turn while the aggregate waits for it.
  const { admission } = service.running.services;
  const holder = get(service, FULL_DIFF, { abortAfterMs: 1500 });
  for (let waited = 0; admission.active === 0 && waited < 10_000; waited += 5) await sleep(5);
  const queued = await get(service, '/v1/aggregate?metric=ggr&fx=USD&group_by=country&group_by=year', {
    key: cg.second,
    abortAfterMs: 300,
  });
  assert.ok(queued.aborted);
  await holder;
  await cpuUntilIdle();
  assert.is(await cancellations(service, 'aggregate', 'client_gone'), 1);
  assert.is(await metric(service, /^dqs_aggregate_computations_total (\d+)/m), aggregatesBefore + 1, 'counted once asked, never run');
  // The turn it would have taken is free: the same aggregate now runs and answers.
  assert.is((await get(service, '/v1/aggregate?metric=ggr&fx=USD&group_by=country&group_by=year', { key: cg.second })).status, 200);
});

gone('walking the pages of a full-size diff runs it once', async () => {
  const service = cg.service!;
  const before = await computations(service);
  let url = `/v1/revisions?metric=ggr&from=${OLD}&to=${NEW}&limit=1000`;
  const seen = new Set<string>();
  for (let page = 0; page < 4; page++) {
    const res = await get(service, url);
    assert.is(res.status, 200, res.body.toString());
    const body = JSON.parse(res.body.toString());
    assert.is(body.data.length, 1000);
    for (const row of body.data) seen.add(JSON.stringify(row));
    url = `/v1/revisions?metric=ggr&from=${OLD}&to=${NEW}&limit=1000&cursor=${encodeURIComponent(body.pagination.cursor)}`;
  }
  assert.is(seen.size, 4000, 'four pages, no row twice');
  assert.is(await computations(service), before + 1, 'one diff for the whole walk');
});

gone('Prefer: wait=0.2 times out quickly on a server whose limit is 60 s, and says so', async () => {
  const service = cg.service!;
  const res = await get(service, `${FULL_DIFF}&change=changed`, { headers: { Prefer: 'wait=0.2' } });
  assert.is(res.status, 504);
  assert.is(res.headers['preference-applied'], 'wait=0.2');
  assert.match(JSON.parse(res.body.toString()).error, /0\.2 s \(Prefer: wait\)/);
  assert.is(await cancellations(service, 'revisions', 'deadline'), 1, 'stopped at its deadline, not answered once it was over');
  await assertStopped('after the 504');
  // A longer wait than the limit is not applied, and a malformed one is ignored: both answer.
  const small = '/v1/revisions?metric=ggr&from=2026-10&to=2026-11&country=France&year=2024&limit=3';
  for (const prefer of ['wait=600', 'wait=soon']) {
    const answered = await get(service, small, { headers: { Prefer: prefer } });
    assert.is(answered.status, 200, prefer);
    assert.is(answered.headers['preference-applied'], undefined, prefer);
  }
});

gone('an aggregate computed in slices stops at its deadline', async () => {
  const service = cg.service!;
  const wide =
    '/v1/aggregate?metric=ggr&fx=USD&group_by=country&group_by=state&group_by=product&group_by=channel&group_by=year&rollup=true&limit=5';
  const res = await get(service, wide, { headers: { Prefer: 'wait=0.001' } });
  assert.is(res.status, 504, res.body.toString());
  assert.is(await cancellations(service, 'aggregate', 'deadline'), 1);
  await assertStopped('after the 504');
});

const loads = suite('heavy work: a release loaded for release=');
const rl: { service?: TestService; other: string } = { other: '' };
loads.before(async () => {
  // An idle release other than the current one is unloaded a second after its last request;
  // a full-size load is waited for however long a busy machine takes.
  rl.service = await startTestService({
    dataDir: state.dataDir,
    env: { QUERY_TIMEOUT_MS: '60000', RELEASE_LOAD_WAIT_MS: '60000', RELEASE_GRACE_SECONDS: '1' },
  });
  rl.other = await newKey(rl.service, 'other');
});
loads.after(async () => {
  await rl.service?.stop();
});

/** A page of `release`: each test asks for its own `limit`, so that no answer comes from the response cache. */
const cold = (release: string, limit = 1) => `/v1/financials?metric=fx&limit=${limit}&release=${release}`;
const loadedReleases = (service: TestService) => metric(service, /^dqs_releases_loaded (\d+)/m);
const releaseLoadCharged = (service: TestService) => metric(service, /^dqs_heavy_seconds_total\{kind="release_load"\} ([\d.e-]+)/m);
const loadsStarted = (service: TestService) => service.logs.filter((line) => line.msg === 'loading a release on demand').length;

/** Waits until only the current release is loaded (the others idle past RELEASE_GRACE_SECONDS), 30 s at most. */
async function onlyCurrentLoaded(service: TestService): Promise<void> {
  for (const started = Date.now(); Date.now() - started < 30_000; await sleep(100)) if ((await loadedReleases(service)) === 1) return;
  assert.unreachable('the other releases were never unloaded');
}

loads("a key's second cold load while its first runs is refused 429 release_load_running; another key's is served", async () => {
  const service = rl.service!;
  const started = loadsStarted(service);
  const first = get(service, cold(OLD));
  // Sent once the full-size release's load has started: it runs for seconds.
  while (loadsStarted(service) === started) await sleep(5);
  const refused = await get(service, cold(SMALL));
  assert.is(refused.status, 429, refused.body.toString());
  const body = JSON.parse(refused.body.toString());
  assert.is(body.error, `Release '${OLD}' is loading for this key: one release loads per key at a time; try again once it has answered`);
  assert.is(refused.headers['retry-after'], String(body.retryAfterSeconds));
  // Another key loads it meanwhile (after the first load, in DuckDB's turn), and the first answers.
  assert.is((await get(service, cold(SMALL), { key: rl.other })).status, 200);
  assert.is((await first).status, 200);
  // Once the first has answered, the key may load another.
  await onlyCurrentLoaded(service);
  assert.is((await get(service, cold(SMALL, 4))).status, 200);
});

loads('a cold load past its deadline is charged and stopped: the server stops its work, nothing is left, and it loads again', async () => {
  const service = rl.service!;
  await onlyCurrentLoaded(service);
  const chargedBefore = await releaseLoadCharged(service);
  const res = await get(service, cold(OLD, 2), { headers: { Prefer: 'wait=0.001' } });
  assert.is(res.status, 504, res.body.toString());
  assert.match(JSON.parse(res.body.toString()).error, /0\.001 s \(Prefer: wait\)/);
  const since = await cpuSeconds();
  // The stop reaches the checksums between two chunks and DuckDB's reading at once; on a
  // busy machine it can be counted after a quiet window, so it is waited for (60 s at most).
  const stopped = () => metric(service, /^dqs_release_load_stopped_seconds_count (\d+)/m);
  for (const started = Date.now(); (await stopped()) === 0 && Date.now() - started < 60_000; ) await sleep(100);
  assert.is(await stopped(), 1, 'stopped once');
  await assertStopped('after the 504 of a cold load', since);
  assert.is(await loadedReleases(service), 1, 'nothing half-loaded is kept');
  // Its running time up to the stop, not the 1 ms before the 504, is charged to the key.
  const stoppedAfter = await metric(service, /^dqs_release_load_stopped_seconds_sum ([\d.e-]+)/m);
  const charged = (await releaseLoadCharged(service)) - chargedBefore;
  assert.ok(charged >= stoppedAfter / 2, `charged ${charged} s of a load stopped after ${stoppedAfter} s`);
  // Asked for again, it loads afresh, and is charged again.
  const loaded = await metric(service, /^dqs_release_load_seconds_count (\d+)/m);
  const again = await get(service, cold(OLD, 3));
  assert.is(again.status, 200, again.body.toString());
  assert.is(await metric(service, /^dqs_release_load_seconds_count (\d+)/m), loaded + 1);
  assert.ok((await releaseLoadCharged(service)) - chargedBefore > charged);
});

const retried = suite('heavy work: a release load outlasting its request');
const rt: { service?: TestService } = {};
retried.before(async () => {
  // A full-size release loads for seconds, far past this deadline and wait.
  rt.service = await startTestService({ dataDir: state.dataDir, env: { QUERY_TIMEOUT_MS: '800', RELEASE_LOAD_WAIT_MS: '200' } });
});
retried.after(async () => {
  await rt.service?.stop();
});

retried(
  'a request answered 503 release_loading keeps the load going for its retry: a client retrying gets the release, loaded once',
  async () => {
    const service = rt.service!;
    const loaded = await metric(service, /^dqs_release_load_seconds_count (\d+)/m);
    const first = await get(service, cold(OLD));
    assert.is(first.status, 503, first.body.toString());
    assert.is(first.headers['retry-after'], '5');
    // Retried sooner than Retry-After asks, to keep the test short; 60 s at most.
    let answer = first;
    for (const started = Date.now(); answer.status === 503 && Date.now() - started < 60_000; ) {
      await sleep(1000);
      answer = await get(service, cold(OLD));
    }
    assert.is(answer.status, 200, answer.body.toString());
    assert.is(await metric(service, /^dqs_release_load_seconds_count (\d+)/m), loaded + 1, 'one load, carried across the retries');
    assert.is(await metric(service, /^dqs_release_load_stopped_seconds_count (\d+)/m), 0, 'never stopped');
  },
);

const sharing = suite('heavy work: identical requests sharing one computation');
const sh: { service?: TestService; holder: string; second: string } = { holder: '', second: '' };
sharing.before(async () => {
  sh.service = await startTestService({
    dataDir: state.dataDir,
    env: { QUERY_TIMEOUT_MS: '60000', ADMISSION_CONCURRENCY: '1', ADMISSION_WAIT_MS: '30000' },
  });
  sh.holder = await newKey(sh.service, 'holder');
  sh.second = await newKey(sh.service, 'second');
});
sharing.after(async () => {
  await sh.service?.stop();
});

/**
 * Holds the only turn (ADMISSION_CONCURRENCY=1) for up to a second, so that two
 * identical requests sent meanwhile both join their computation before it starts.
 */
const holdTurn = (service: TestService) =>
  get(service, `/v1/revisions?metric=turnover&from=${OLD}&to=${NEW}&limit=3`, { key: sh.holder, headers: { Prefer: 'wait=1' } });

sharing("a key's Prefer: wait=0.2 is its own: it gets its 504, naming it, while another key without one gets the 200", async () => {
  const service = sh.service!;
  const before = await computations(service);
  const holding = holdTurn(service);
  const first = get(service, FULL_DIFF, { headers: { Prefer: 'wait=0.2' } });
  await sleep(50);
  const second = await get(service, FULL_DIFF, { key: sh.second });
  const shorter = await first;
  await holding;
  assert.is(shorter.status, 504, shorter.body.toString());
  assert.match(JSON.parse(shorter.body.toString()).error, /0\.2 s \(Prefer: wait\)/);
  assert.is(shorter.headers['preference-applied'], 'wait=0.2');
  assert.is(second.status, 200, second.body.toString());
  assert.is(second.headers['preference-applied'], undefined);
  assert.is(await computations(service), before + 2, "the holder's diff, and one shared by both");
});

sharing(
  "a key's Prefer: wait=0.3 joining another's computation is kept: its 504 comes at its own deadline, the other's 200 after",
  async () => {
    const service = sh.service!;
    const diff = `${FULL_DIFF}&change=changed`;
    const before = await computations(service);
    const holding = holdTurn(service);
    let longerAnswered = false;
    const first = get(service, diff).finally(() => {
      longerAnswered = true;
    });
    await sleep(50);
    const shorter = await get(service, diff, { key: sh.second, headers: { Prefer: 'wait=0.3' } });
    assert.not.ok(longerAnswered, 'the 504 comes before the 200');
    const longer = await first;
    await holding;
    assert.is(shorter.status, 504, shorter.body.toString());
    assert.match(JSON.parse(shorter.body.toString()).error, /0\.3 s \(Prefer: wait\)/);
    assert.is(longer.status, 200, longer.body.toString());
    assert.is(await computations(service), before + 2);
  },
);

const budget = suite('heavy work: a budget of heavy seconds per key');
const hb: { service?: TestService; other: string } = { other: '' };
budget.before(async () => {
  // 50 ms of heavy work a minute: a few aggregates of the small sample spend it.
  hb.service = await startTestService({ env: { KEY_HEAVY_SECONDS_PER_MINUTE: '0.05' } });
  hb.other = await newKey(hb.service, 'other');
});
budget.after(async () => {
  await hb.service?.stop();
});

budget('a key that spends it gets 429 heavy_budget with Retry-After; its light requests and another key are served', async () => {
  const service = hb.service!;
  const dims = ['region', 'country', 'product', 'channel', 'category', 'sub_channel', 'temporal', 'calculation'];
  // Distinct aggregates, each over a different pair of dimensions: a result of its own,
  // never a page of a kept one, so each is heavy work, charged as it ends.
  const heavy = (i: number) =>
    `/v1/aggregate?metric=ggr&fx=USD&group_by=${dims[i % 8]},${dims[(i + 1 + Math.floor(i / 8)) % 8]},year&limit=5`;
  let refused: Awaited<ReturnType<typeof get>> | undefined;
  const answered: number[] = [];
  for (let i = 0; i < 56 && !refused; i++) {
    const res = await get(service, heavy(i));
    if (res.status === 429) refused = res;
    else {
      assert.is(res.status, 200, res.body.toString());
      assert.match(String(res.headers['x-heavy-remaining']), /^\d+$/);
      answered.push(i);
    }
  }
  assert.ok(refused, 'refused within 56 aggregates');
  const body = JSON.parse(refused!.body.toString());
  assert.match(body.error, /^Heavy request budget spent: at most 0\.05 s of heavy work per key per minute/);
  assert.is(refused!.headers['retry-after'], String(body.retryAfterSeconds));
  assert.ok(body.retryAfterSeconds >= 1 && body.retryAfterSeconds <= 60);
  assert.is(refused!.headers['x-heavy-remaining'], '0');
  // Light requests of the same key: an answer already made, a page of rows, the catalog.
  assert.is((await get(service, heavy(answered[0]!))).status, 200);
  assert.is((await get(service, '/v1/financials?metric=ggr&limit=5')).status, 200);
  assert.is((await get(service, '/v1/catalog')).status, 200);
  // Another key's heavy request is served.
  assert.is((await get(service, heavy(99), { key: hb.other })).status, 200);
  assert.ok((await metric(service, /^dqs_heavy_refusals_total\{reason="heavy_budget"\} (\d+)/m)) >= 1);
  assert.ok((await metric(service, /^dqs_heavy_seconds_total\{kind="aggregate"\} ([\d.e-]+)/m)) > 0);
});

const exporting = suite('heavy work: exports cut off');
const ex: { service?: TestService; others: string[] } = { others: [] };
exporting.before(async () => {
  ex.service = await startTestService({
    dataDir: state.dataDir,
    // Loads and exports may take long on a busy machine: no deadline or budget of theirs is tested here.
    env: {
      RELEASE_GRACE_SECONDS: '2',
      RELEASES_IN_MEMORY: '3',
      ADMISSION_CONCURRENCY: '1',
      ADMISSION_WAIT_MS: '200',
      QUERY_TIMEOUT_MS: '600000',
      RELEASE_LOAD_WAIT_MS: '600000',
      KEY_HEAVY_SECONDS_PER_MINUTE: '3600',
    },
  });
  for (const name of ['a', 'b', 'c']) ex.others.push(await newKey(ex.service, name));
});
exporting.after(async () => {
  await ex.service?.stop();
  await fs.rm(state.dataDir, { recursive: true, force: true });
});

/** File descriptors of this process open on files in `dir` (a file removed while open still shows its old path). */
async function fdsUnder(dir: string): Promise<number> {
  let n = 0;
  for (const fd of await fs.readdir('/proc/self/fd')) {
    const target = await fs.readlink(`/proc/self/fd/${fd}`).catch(() => '');
    if (target.startsWith(dir)) n++;
  }
  return n;
}

/** Releases loaded, scratch files left and file descriptors open on them now. */
async function leftovers(service: TestService) {
  const scratch = path.join(service.stateDir, 'scratch');
  const files: string[] = [];
  for (const dir of await fs.readdir(scratch)) files.push(...(await fs.readdir(path.join(scratch, dir))));
  return { loaded: await metric(service, /^dqs_releases_loaded (\d+)/m), files, fds: await fdsUnder(scratch) };
}

/**
 * What is left once nothing holds the old release: polled until only the current
 * release is loaded (an idle one is unloaded on the poll after RELEASE_GRACE_SECONDS)
 * and no scratch file or handle is left, 30 s at most. A leak never gets there.
 */
async function settled(service: TestService) {
  let left = await leftovers(service);
  for (const started = Date.now(); Date.now() - started < 30_000; left = await leftovers(service)) {
    if (left.loaded === 1 && left.files.length === 0 && left.fds === 0) break;
    await sleep(250);
  }
  return left;
}

exporting('an export cut off at each stage lets go of its release, scratch file and file handle', async () => {
  const service = ex.service!;
  const before = await settled(service);
  assert.is(before.loaded, 1);
  const filtered = `/v1/export?metric=ggr&temporal=Current&temporal=Forecast&release=${OLD}`;
  const stages = [
    // While DuckDB writes the filtered Parquet file (the release loaded for it first).
    { url: `${filtered}&format=parquet`, abortAfterMs: 150 },
    // While the file is sent: the client reads the head and leaves.
    { url: `${filtered}&format=parquet`, firstBytes: true },
    // While CSV batches stream.
    { url: `${filtered}&format=csv`, firstBytes: true },
  ];
  for (const stage of stages) {
    // The old release loaded first (it stays for RELEASE_GRACE_SECONDS), so each stage is cut where it says, not in the load.
    assert.is((await get(service, `/v1/financials?metric=ggr&limit=1&release=${OLD}`)).status, 200);
    if (stage.firstBytes) {
      const controller = new AbortController();
      const res = await request(`${service.url}${stage.url}`, { headers: { 'x-api-key': service.key }, signal: controller.signal });
      assert.is(res.statusCode, 200, `${stage.url}: ${res.statusCode === 200 ? '' : await res.body.text()}`);
      for await (const _ of res.body) break;
      controller.abort();
    } else {
      assert.ok((await get(service, stage.url, { abortAfterMs: stage.abortAfterMs })).aborted);
    }
    const after = await settled(service);
    assert.is(after.loaded, 1, `${stage.url}: the old release is let go and unloaded`);
    assert.equal(after.files, [], `${stage.url}: no scratch file left`);
    assert.is(after.fds, 0, `${stage.url}: no file handle left open on a scratch file`);
  }
});

exporting("a started export's later batches wait for their turns under load instead of cutting the 200 short", async () => {
  const service = ex.service!;
  const whole = await get(service, '/v1/export?metric=ggr&format=csv&channel=Online');
  assert.is(whole.status, 200, whole.body.toString());
  // The export starts, and its client reads slowly; meanwhile (ADMISSION_CONCURRENCY=1,
  // ADMISSION_WAIT_MS=200) three other keys' diffs keep the only turn busy past the wait bound.
  const res = await request(`${service.url}/v1/export?metric=ggr&format=csv&channel=Online`, { headers: { 'x-api-key': service.key } });
  assert.is(res.statusCode, 200, res.statusCode === 200 ? '' : await res.body.text());
  const chunks: Buffer[] = [];
  const reader = res.body[Symbol.asyncIterator]();
  chunks.push((await reader.next()).value);
  const heavy = ex.others.map((key) => get(service, `${FULL_DIFF}&change=changed`, { key }));
  await sleep(500);
  for (let chunk = await reader.next(); !chunk.done; chunk = await reader.next()) chunks.push(chunk.value);
  await Promise.all(heavy);
  const streamed = Buffer.concat(chunks);
  assert.is(streamed.length, whole.body.length, 'the whole file, not a cut-off one');
  assert.ok(streamed.equals(whole.body));
});

deadlines.run();
gone.run();
loads.run();
retried.run();
sharing.run();
budget.run();
exporting.run();
