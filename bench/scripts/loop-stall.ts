import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';
import { startServer } from '../../tools/service-process.ts';
import { cancelReleases } from '../scenarios/cancel.ts';

// How long one step holds the server's event loop under ten heavy keys. Ten keys each
// loop over a mix of heavy requests (uncached aggregates, revisions diffs, CSV and
// Parquet exports, `release=` reads of the older release) on the two 1x releases of
// bench/scenarios/cancel.ts (generated once), while a victim key reads a small page.
// /metrics is read every 250 ms: prom-client's event-loop delay maximum, reset at each
// read, is the longest single stall in that window. Target: every window <= 50 ms.
// Bounded: SECONDS of load, each key's loop at most 200 requests.
//   npx tsx bench/scripts/loop-stall.ts [--seconds 30] [--profile]
// --profile runs the server with --cpu-prof into tmp/bench/profile/ (open it in Chrome's
// DevTools, Performance tab) to find what a long stall ran.

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const { values: args } = parseArgs({ options: { seconds: { type: 'string', default: '30' }, profile: { type: 'boolean' } } });
const SECONDS = Number(args.seconds);
const DATA_DIR = await cancelReleases(path.join(ROOT, 'tmp', 'bench'), (text) => console.error(`  … ${text}`));
const KEYS = 10;

const DIMS = ['region', 'country', 'product', 'channel', 'category', 'sub_channel', 'temporal', 'calculation'];
/** Request i of key k: each one different, so none is an answer or a result kept by another. */
function heavy(k: number, i: number): string {
  const n = k * 1000 + i;
  const pair = `${DIMS[n % 8]},${DIMS[(n + 1 + (Math.floor(n / 8) % 7)) % 8]}`;
  const year = 2000 + (n % 25);
  switch (i % 5) {
    case 0:
      return `/v1/aggregate?metric=ggr&fx=USD&group_by=${pair},year&limit=50`;
    case 1:
      return `/v1/revisions?metric=ggr&from=2026-01&to=2026-02&year=${year}&limit=20`;
    case 2:
      return `/v1/export?metric=ggr&format=csv&year=${year}`;
    case 3:
      return `/v1/export?metric=turnover&format=parquet&year=${year}&release=2026-01`;
    default:
      return `/v1/aggregate?metric=turnover&fx=USD&group_by=${pair}&release=2026-01&year=${year}&limit=50`;
  }
}

const agent = new Agent({ connections: 32, headersTimeout: 120_000, bodyTimeout: 120_000 });
async function get(url: string, key?: string): Promise<{ status: number; text: string }> {
  try {
    const res = await request(url, { headers: key ? { 'x-api-key': key } : {}, dispatcher: agent });
    return { status: res.statusCode, text: await res.body.text() };
  } catch {
    return { status: 0, text: '' };
  }
}

const stateDir = path.join(ROOT, 'tmp', 'bench', 'state-loop');
const profileDir = path.join(ROOT, 'tmp', 'bench', 'profile');
fs.rmSync(stateDir, { recursive: true, force: true });
const server = await startServer(
  { DATA_DIR, STATE_DIR: stateDir, BENCH_DISABLE_LIMITS: 'false', RATE_LIMIT_PER_MINUTE: '1000000', RATE_LIMIT_PER_DAY: '100000000' },
  path.join(ROOT, 'tmp', 'bench', 'logs', 'loop-stall.log'),
  ROOT,
  args.profile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
);
try {
  const token = fs.readFileSync(path.join(stateDir, 'admin-token'), 'utf8').trim();
  const keys: string[] = [];
  for (let k = 0; k < KEYS; k++) {
    const res = await request(`${server.adminUrl}/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ client: `heavy-${k}` }),
    });
    keys.push(((await res.body.json()) as { key: string }).key);
  }
  const lagMax = async () => {
    const { text } = await get(`${server.adminUrl}/metrics`);
    return Number(/^dqs_nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(text)?.[1] ?? Number.NaN) * 1000;
  };
  await lagMax(); // from here on
  const until = performance.now() + SECONDS * 1000;
  const statuses = new Map<number, number>();
  const windows: number[] = [];
  const sampler = (async () => {
    while (performance.now() < until) {
      await new Promise((r) => setTimeout(r, 250));
      windows.push(await lagMax());
    }
  })();
  const victim = (async () => {
    const victimMs: number[] = [];
    for (let i = 0; i < 2000 && performance.now() < until; i++) {
      const sent = performance.now();
      await get(`${server.url}/v1/financials?metric=ggr&limit=${1 + (i % 97)}`, server.headers['x-api-key']);
      victimMs.push(performance.now() - sent);
      await new Promise((r) => setTimeout(r, 100));
    }
    return victimMs;
  })();
  await Promise.all(
    keys.map(async (key, k) => {
      for (let i = 0; i < 200 && performance.now() < until; i++) {
        const { status } = await get(`${server.url}${heavy(k, i)}`, key);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }
    }),
  );
  await sampler;
  const victimMs = (await victim).sort((a, b) => a - b);
  const over = windows.filter((ms) => ms > 50).length;
  const sorted = [...windows].sort((a, b) => a - b);
  console.log(`heavy answers: ${[...statuses].map(([s, n]) => `${n}x${s}`).join(' ')}`);
  console.log(
    `event-loop stall per 250 ms window: max ${sorted.at(-1)?.toFixed(1)} ms, p95 ${sorted[Math.floor(sorted.length * 0.95)]?.toFixed(1)} ms, ${over} of ${windows.length} windows over 50 ms`,
  );
  console.log(`victim page: p50 ${victimMs[victimMs.length >> 1]?.toFixed(0)} ms, max ${victimMs.at(-1)?.toFixed(0)} ms`);
} finally {
  await server.stop();
  if (args.profile) console.log(`profile: ${profileDir}`);
}
