import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { request } from 'undici';
import { generateRelease } from '../etl/generate.ts';
import { latestRelease } from '../src/releases/on-disk.ts';
import { progressBar } from '../etl/progress.ts';
import { compressionLevels } from './compression.ts';
import { load, summarizeRuns, type Run, type Stats } from './load.ts';
import { startServer } from './server.ts';
import { sqlBench } from './sql.ts';

// `npm run bench`: the service as users run it (a separate process over HTTP), on
// the full-size sample release, for a 1000-row ggr page with two filters. Every
// figure is a median/p99 of a bounded number of requests, next to ceilings measured
// in the same run: a bare node:http server (its own process) sending the exact bytes
// of that page, /healthz on the same server, and DuckDB's own time.
//   --baseline DIR   also runs another checkout's server (e.g. the previous commit)
//                    on the uncached page, alternating with this one.

const ROOT = path.resolve(import.meta.dirname, '..');
const WORK = path.join(ROOT, 'tmp', 'bench');
const DATA_DIR = path.join(WORK, 'data');
const RELEASE = '2026-11';
const FILTERS = new Map([['region', ['Europe']], ['channel', ['Online']]]);
const QUERY = `/v1/financials?metric=ggr&${[...FILTERS].map(([k, [v]]) => `${k}=${encodeURIComponent(v!)}`).join('&')}&limit=1000`;
const SEQUENTIAL = 400;
const CONCURRENT = 3000;

const log = (text: string) => process.stderr.write(`${text}\n`);

async function ensureRelease() {
  if (!(await latestRelease(DATA_DIR))) {
    const bar = progressBar('generating sample');
    await generateRelease({ out: path.join(DATA_DIR, RELEASE), seed: 1, scale: 1, release: RELEASE, onProgress: bar.update }).finally(bar.stop);
  }
  return (await latestRelease(DATA_DIR))!;
}

/** The bench's server: this checkout's (or a baseline's) on the bench release. */
const serve = (env: Record<string, string>, root?: string) =>
  startServer({ DATA_DIR, STATE_DIR: path.join(WORK, root ? 'state-baseline' : 'state'), ...env }, root);

/** A cursor about 90% of the way through the benchmark query's pages. */
async function lateCursor(url: string, headers: Record<string, string>) {
  let cursor = '';
  const pages: string[] = [];
  do {
    const res = await request(`${url}${QUERY}${cursor ? `&cursor=${cursor}` : ''}`, { headers });
    const body = (await res.body.json()) as { pagination: { cursor: string } };
    cursor = body.pagination.cursor;
    if (cursor) pages.push(cursor);
  } while (cursor);
  const chosen = pages[Math.floor(pages.length * 0.9)]!;
  return { cursor: chosen, pages: pages.length + 1 };
}

/** The bare node:http ceiling, serving each of `files` (route → file[:content-encoding]). */
async function startBareServer(files: Record<string, string>) {
  const args = Object.entries(files).map(([route, file]) => `${route}=${file}`);
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, 'bare-server.ts'), ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`bare server exited with ${code}`)));
    createInterface({ input: child.stdout! }).once('line', (line) => resolve(JSON.parse(line).url));
  });
  return {
    url,
    stop: () => new Promise<void>((resolve) => {
      child.removeAllListeners('exit');
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    }),
  };
}

/** The page's bytes exactly as the service sends them, for one Accept-Encoding. */
async function pageBytes(url: string, headers: Record<string, string>): Promise<Buffer> {
  const res = await request(`${url}${QUERY}`, { headers });
  const body = Buffer.from(await res.body.arrayBuffer());
  if (res.statusCode !== 200) throw new Error(`${QUERY}: ${res.statusCode} ${body.toString().slice(0, 300)}`);
  return body;
}

/**
 * Runs `a` and `b` in turns (a, b, b, a, a, b, b, a), so neither
 * gains from running later in a warmer process or loses to a burst of other load.
 */
async function alternate(a: () => Promise<Run>, b: () => Promise<Run>): Promise<[Stats, Stats]> {
  const runs = { a: [] as Run[], b: [] as Run[] };
  for (const which of ['a', 'b', 'b', 'a', 'a', 'b', 'b', 'a'] as const) runs[which].push(await (which === 'a' ? a : b)());
  return [summarizeRuns(runs.a), summarizeRuns(runs.b)];
}

const fmt = (stats: Stats) =>
  `p50 ${stats.p50.toFixed(2).padStart(6)} ms  p99 ${stats.p99.toFixed(2).padStart(6)} ms  ${stats.rps.toFixed(0).padStart(5)} req/s`;

async function main() {
  const { values: options } = parseArgs({ options: { baseline: { type: 'string' } } });
  await fs.mkdir(WORK, { recursive: true });
  const release = await ensureRelease();
  const rows: string[] = [];
  const report = (name: string, stats: Stats, extra = '') => {
    const line = `${name.padEnd(58)} ${fmt(stats)}${extra}`;
    rows.push(line);
    log(line);
  };
  let bare = { rps: 0 };
  const vsBare = (stats: Stats, ceiling = bare) => `  ${(stats.rps / ceiling.rps).toFixed(2)}x bare`;
  const perRun = CONCURRENT / 8; // requests in each of the 8 alternating runs

  // Cached hits (the defaults: cache on) against the bare server sending the same bytes.
  log(`\nserver with the defaults (cache on): loading ${release.dir}…`);
  let server = await serve({});
  let body: { identity: Buffer; br: Buffer };
  try {
    const brHeaders = { ...server.headers, 'accept-encoding': 'br' };
    body = { identity: await pageBytes(server.url, server.headers), br: await pageBytes(server.url, brHeaders) };
    const files = { identity: path.join(WORK, 'page.json'), br: path.join(WORK, 'page.json.br') };
    await fs.writeFile(files.identity, body.identity);
    await fs.writeFile(files.br, body.br);
    const ceiling = await startBareServer({ '/identity': files.identity, '/br': `${files.br}:br` });
    try {
      for (const [coding, headers] of [['identity', server.headers], ['br', brHeaders]] as const) {
        const [bareStats, cached] = await alternate(
          () => load(ceiling.url, () => `/${coding}`, {}, 16, perRun),
          () => load(server.url, () => QUERY, headers, 16, perRun),
        );
        if (coding === 'identity') bare = bareStats;
        const kB = `(${(bareStats.bytes / 1024).toFixed(0)} kB)`;
        report(`bare node:http, same bytes, ${coding} ${kB}, 16 connections`, bareStats, vsBare(bareStats, bareStats));
        report(`cached hit (key check, headers), ${coding}, 16 connections`, cached, vsBare(cached, bareStats));
      }
    } finally {
      await ceiling.stop();
    }
  } finally {
    await server.stop();
  }

  let late = { cursor: '', pages: 0 };
  // Uncached pages (CACHE_MAX_BYTES=0): the defaults first, then one knob turned at a time.
  const configs = [
    { DUCKDB_CONNECTIONS: '4', DUCKDB_THREADS: '1' },
    { DUCKDB_CONNECTIONS: '1', DUCKDB_THREADS: '1' },
    { DUCKDB_CONNECTIONS: '4', DUCKDB_THREADS: '2' },
  ];
  for (const env of configs) {
    const tag = `[${env.DUCKDB_CONNECTIONS} conn, ${env.DUCKDB_THREADS} thr]`;
    log(`\nserver with ${tag}, cache off: loading ${release.dir}…`);
    server = await serve({ ...env, CACHE_MAX_BYTES: '0' });
    try {
      if (!late.cursor) late = await lateCursor(server.url, server.headers);
      const ceiling = summarizeRuns([await load(server.url, () => '/healthz', {}, 16, CONCURRENT)]);
      report(`${tag} ceiling: GET /healthz, 16 connections`, ceiling);
      const pages = { first: () => QUERY, late: () => `${QUERY}&cursor=${late.cursor}` };
      for (const [connections, total] of [[1, SEQUENTIAL], [16, CONCURRENT]] as const) {
        const [first, latePage] = await alternate(
          () => load(server.url, pages.first, server.headers, connections, total / 8),
          () => load(server.url, pages.late, server.headers, connections, total / 8),
        );
        const who = connections === 1 ? '1 client' : `${connections} connections`;
        const extra = connections === 16 ? `${vsBare(first)}, ${((first.rps / ceiling.rps) * 100).toFixed(0)}% of /healthz` : '';
        report(`${tag} uncached first page, ${who}`, first, extra);
        report(`${tag} uncached late page (${Math.floor(late.pages * 0.9)}/${late.pages}), ${who}`, latePage);
      }
    } finally {
      await server.stop();
    }
  }

  if (options.baseline) {
    const baselineRoot = path.resolve(options.baseline);
    log(`\nbaseline ${baselineRoot} beside this checkout, both uncached, defaults: loading ${release.dir} twice…`);
    const baseline = await serve({}, baselineRoot);
    server = await serve({ CACHE_MAX_BYTES: '0' });
    try {
      const [before, after] = await alternate(
        () => load(baseline.url, () => QUERY, baseline.headers, 16, perRun),
        () => load(server.url, () => QUERY, server.headers, 16, perRun),
      );
      report('baseline: uncached first page, 16 connections', before, vsBare(before));
      report('this checkout: uncached first page, 16 connections', after, `${vsBare(after)}, ${(after.rps / before.rps).toFixed(3)}x baseline`);
    } finally {
      await Promise.all([baseline.stop(), server.stop()]);
    }
  }

  log(`\nCompressing the page (${body.identity.length} bytes) once, median time, in this process:`);
  for (const level of compressionLevels(body.identity)) {
    const line = `${`${level.coding} ${level.level}`.padEnd(10)} ${level.ms.toFixed(2).padStart(8)} ms  ${String(level.bytes).padStart(7)} bytes  ${((level.bytes / body.identity.length) * 100).toFixed(1).padStart(4)}%`;
    rows.push(line);
    log(line);
  }

  log('\nDuckDB alone, same SQL, in this process (no HTTP):');
  for (const [name, stats] of await sqlBench(release, FILTERS, 1)) report(`duckdb ${name}`, stats);

  const out = path.join(WORK, 'results.txt');
  await fs.writeFile(out, `${new Date().toISOString()} ${QUERY}\n${rows.join('\n')}\n`);
  log(`\nwritten to ${path.relative(ROOT, out)}`);
}

await main();
