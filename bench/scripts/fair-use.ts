import fs from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';
import { generateRelease } from '../../etl/generate.ts';
import { loadDrop } from '../../etl/load.ts';
import { processMemory, type ServiceProcess, startServer } from '../../tools/service-process.ts';

// One key's heavy requests (attacks), each on a fresh server over five published 1x releases in which
// every row differs (seeds 1-5), with a second key as the victim asking for a small
// /v1/financials page every 50-700 ms (a cached one and an uncached one in turn).
// For each attack: the victim's p95 and longest answer, the attacker's status mix, and
// the server's peak RSS. Bounded: each attack runs at most ATTACK_SECONDS, each loop a
// fixed count. Targets: the victim's max <= 1 s and p95 <= 300 ms, no 5xx, RSS <= 2 GB.
//   npx tsx bench/scripts/fair-use.ts [--root CHECKOUT] [--only NAME,...]
// --root runs another checkout's server (the code before, for the table's first half).

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const { values: args } = parseArgs({ options: { root: { type: 'string' }, only: { type: 'string' } } });
const serverRoot = path.resolve(args.root ?? ROOT);
const DATA_DIR = path.join(ROOT, 'tmp', 'bench', 'fair');
const RELEASES = ['2026-01', '2026-02', '2026-03', '2026-04', '2026-05'];
const ATTACK_SECONDS = 30;

async function publishReleases(): Promise<void> {
  for (const [i, release] of RELEASES.entries()) {
    if (
      await fs.stat(path.join(DATA_DIR, release, 'manifest.json')).then(
        () => true,
        () => false,
      )
    )
      continue;
    const drop = path.join(ROOT, 'tmp', 'bench', `fair-drop-${release}`);
    console.error(`generating ${release} (seed ${i + 1}, scale 1) and publishing it`);
    await fs.rm(drop, { recursive: true, force: true });
    await generateRelease({ out: drop, seed: i + 1, scale: 1, release });
    await loadDrop({ drop, dataDir: DATA_DIR, release, force: true, minYear: 1990, maxYear: 2100, maxRowChange: 0.25 });
    await fs.rm(drop, { recursive: true, force: true });
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const agent = new Agent({ connections: 32, headersTimeout: 600_000, bodyTimeout: 600_000 });

async function get(server: ServiceProcess, pathAndQuery: string, key: string, headers: Record<string, string> = {}) {
  try {
    const res = await request(`${server.url}${pathAndQuery}`, { headers: { 'x-api-key': key, ...headers }, dispatcher: agent });
    const bytes = (await res.body.arrayBuffer()).byteLength;
    return { status: res.statusCode, headers: res.headers, bytes };
  } catch (err) {
    return { status: 0, headers: {} as Record<string, string | string[] | undefined>, bytes: 0, error: (err as Error).message };
  }
}

async function newKey(server: ServiceProcess, stateDir: string, client: string): Promise<string> {
  const token = (await fs.readFile(path.join(stateDir, 'admin-token'), 'utf8')).trim();
  const res = await request(`${server.adminUrl}/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ client }),
  });
  return ((await res.body.json()) as { key: string }).key;
}

async function metric(server: ServiceProcess, name: string): Promise<number | undefined> {
  const text = await (await request(`${server.adminUrl}/metrics`)).body.text();
  const found = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  return found ? Number(found[1]) : undefined;
}

interface Outcome {
  readonly victim: number[];
  readonly victimStatuses: Map<number, number>;
  readonly attacker: Map<number, number>;
  readonly rssPeakMb: number;
  readonly note: string;
}

type Attack = (server: ServiceProcess, attacker: string, stateDir: string) => Promise<{ statuses: number[]; note?: string }>;

const count = (statuses: readonly number[]) => statuses.reduce((m, s) => m.set(s, (m.get(s) ?? 0) + 1), new Map<number, number>());

/** A fresh server, the victim's loop for as long as `attack` runs, and what each side got. */
async function run(name: string, attack: Attack): Promise<Outcome> {
  const stateDir = path.join(ROOT, 'tmp', 'bench', `fair-state-${name}`);
  await fs.rm(stateDir, { recursive: true, force: true });
  const server = await startServer(
    // The default limits on exports; the request limits raised so that neither side's loop meets them (the victim asks ~160 times a minute).
    { DATA_DIR, STATE_DIR: stateDir, BENCH_DISABLE_LIMITS: 'false', RATE_LIMIT_PER_MINUTE: '1000000', RATE_LIMIT_PER_DAY: '100000000' },
    path.join(ROOT, 'tmp', 'bench', 'logs', `fair-${name}.log`),
    serverRoot,
  );
  try {
    const attacker = await newKey(server, stateDir, 'attacker');
    const victimKey = server.headers['x-api-key']!;
    // Warm: the cached page, and the release the victim reads.
    await get(server, '/v1/financials?metric=ggr&limit=10', victimKey);
    const victim: number[] = [];
    const victimStatuses: number[] = [];
    let attacking = true;
    let n = 0;
    const probe = (async () => {
      while (attacking && n < 2000) {
        n++;
        const page = n % 2 === 0 ? '/v1/financials?metric=ggr&limit=10' : `/v1/financials?metric=turnover&fx=USD&limit=${1 + (n % 997)}`;
        const sent = performance.now();
        victimStatuses.push((await get(server, page, victimKey)).status);
        victim.push(performance.now() - sent);
        await sleep(50 + Math.random() * 650);
      }
    })();
    let peak = 0;
    const sampler = setInterval(() => {
      try {
        peak = Math.max(peak, processMemory(server.pid).rss);
      } catch {
        // The server is gone: the attack's own statuses say so.
      }
    }, 100);
    const { statuses, note = '' } = await attack(server, attacker, stateDir);
    attacking = false;
    await probe;
    clearInterval(sampler);
    return {
      victim,
      victimStatuses: count(victimStatuses),
      attacker: count(statuses),
      rssPeakMb: Math.max(peak, processMemory(server.pid).peak),
      note,
    };
  } finally {
    await server.stop();
  }
}

/** `connections` loops, each sending the next of `paths` until ATTACK_SECONDS pass or `max` requests were sent in all. */
async function flood(server: ServiceProcess, key: string, paths: readonly string[], connections: number, max: number): Promise<number[]> {
  const statuses: number[] = [];
  const until = performance.now() + ATTACK_SECONDS * 1000;
  let next = 0;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < until && next < max) {
        const pathAndQuery = paths[next++ % paths.length]!;
        statuses.push((await get(server, pathAndQuery, key)).status);
      }
    }),
  );
  return statuses;
}

const pairs = RELEASES.slice(1).map((to, i) => [RELEASES[i]!, to] as const);
const revisions = pairs.flatMap(([from, to]) =>
  ['ggr', 'turnover'].flatMap((metric) =>
    ['', '&change=changed'].map((c) => `/v1/revisions?metric=${metric}&from=${from}&to=${to}&limit=1${c}`),
  ),
);

const ATTACKS: Record<string, Attack> = {
  // 1: revisions, 4 connections (issue: 6.9-11.7 s each, 5 s event-loop stall, 500s, RSS 2.4 GB).
  revisions: async (server, key) => ({ statuses: await flood(server, key, revisions, 4, 200) }),
  // 2: three distinct turnover revisions at once (issue: two 500s, DuckDB out of memory).
  'three-revisions': async (server, key) => ({
    statuses: await Promise.all(
      pairs
        .slice(0, 3)
        .map(([from, to]) => get(server, `/v1/revisions?metric=turnover&from=${from}&to=${to}&limit=1`, key).then((r) => r.status)),
    ),
  }),
  // 3: a rollup that ends in a 400, 3 connections (issue: 2.4 s of main-thread work each; victim up to 12 s).
  'refused-rollup': async (server, key) => ({
    statuses: await flood(
      server,
      key,
      ['', '&channel=Online', '&channel=Land', '&temporal=Current'].map(
        (f) => `/v1/aggregate?metric=ggr&group_by=country,state,product,sub_channel,year,fx&rollup=true${f}`,
      ),
      3,
      300,
    ),
  }),
  // 4: the export budget, with each header that sent the whole file for free (issue: 60 exports, the budget stayed at 50).
  'export-budget': async (server, key) => {
    const headers: Record<string, string>[] = [
      { 'if-none-match': '"x"' },
      { range: 'bytes=0-' },
      { range: 'bytes=zero-' },
      { range: 'bytes=0-9,20-29' },
      { range: 'bytes=10-', 'if-range': '"another"' },
    ];
    const statuses: number[] = [];
    let remaining = '';
    let fullFiles = 0;
    let size = 0;
    for (let i = 0; i < 60; i++) {
      const res = await get(server, '/v1/export?metric=fx', key, headers[i % headers.length]!);
      statuses.push(res.status);
      if (i === 0) size = res.bytes;
      if (res.status === 200 || res.status === 206) fullFiles += res.bytes >= size - 10 ? 1 : 0;
      remaining = String(res.headers['x-export-remaining'] ?? remaining);
    }
    return { statuses, note: `${fullFiles} whole files sent; X-Export-Remaining ends at ${remaining}` };
  },
  // 5: eight unread streams on old releases (issue: releases loaded stayed at 5 against 3 for the whole minute; two still open after 150 s).
  'unread-streams': async (server, key) => {
    const sockets: net.Socket[] = [];
    const statuses: number[] = [];
    for (const [i, release] of RELEASES.slice(0, 4)
      .flatMap((r) => [r, r])
      .entries()) {
      const socket = net.connect(Number(new URL(server.url).port), '127.0.0.1');
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.write(
        `GET /v1/export?metric=ggr&release=${release}&period=1990-01-01:2100-12-31 HTTP/1.1\r\nHost: x\r\nx-api-key: ${key}\r\nAccept: ${i % 2 ? 'text/csv' : 'application/x-ndjson'}\r\n\r\n`,
      );
      const head = await new Promise<string>((resolve) => socket.once('data', (chunk) => resolve(String(chunk))));
      statuses.push(Number(/^HTTP\/1\.1 (\d+)/.exec(head)?.[1] ?? 0));
      socket.pause();
      sockets.push(socket);
    }
    const loaded: string[] = [];
    for (const at of [10, 40, 70, 100]) {
      while (performance.now() - started < at * 1000) await sleep(200);
      loaded.push(`${at} s: ${await metric(server, 'dqs_releases_loaded')}`);
    }
    for (const socket of sockets) socket.destroy();
    return { statuses, note: `releases loaded at ${loaded.join(', ')} (RELEASES_IN_MEMORY 3)` };
  },
  // 6: vintage thrash, 18 requests rotating four old releases, each new to the cache (issue: 16 loads in 67 s; the victim was not starved, max 168 ms).
  'vintage-thrash': async (server, key) => {
    const statuses: number[] = [];
    const t0 = performance.now();
    for (let i = 0; i < 18; i++)
      statuses.push((await get(server, `/v1/financials?metric=ggr&release=${RELEASES[i % 4]}&limit=${5 + i}&country=France`, key)).status);
    const loads = await metric(server, 'dqs_release_load_seconds_count');
    return { statuses, note: `${loads ?? '?'} loads in ${((performance.now() - t0) / 1000).toFixed(0)} s` };
  },
};
let started = performance.now();

const pct = (values: readonly number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
};
const mix = (m: Map<number, number>) =>
  [...m]
    .sort(([a], [b]) => a - b)
    .map(([s, c]) => `${c}×${s}`)
    .join(' ');

await publishReleases();
console.error(`server: ${serverRoot}`);
const rows = ['| attack | victim p95 | victim max | victim statuses | attacker statuses | RSS peak | |', '|---|---|---|---|---|---|---|'];
for (const [name, attack] of Object.entries(ATTACKS)) {
  if (args.only && !args.only.split(',').includes(name)) continue;
  console.error(`${name}…`);
  started = performance.now();
  const o = await run(name, attack);
  const fiveXX = [...o.attacker].filter(([s]) => s >= 500 && s !== 503).reduce((n, [, c]) => n + c, 0);
  const row = `| ${name} | ${pct(o.victim, 95).toFixed(0)} ms | ${Math.max(...o.victim).toFixed(0)} ms | ${mix(o.victimStatuses)} | ${mix(o.attacker)}${fiveXX ? ` (**${fiveXX} 5xx**)` : ''} | ${o.rssPeakMb} MB | ${o.note} |`;
  console.error(row);
  rows.push(row);
}
console.log(rows.join('\n'));
await agent.close();
