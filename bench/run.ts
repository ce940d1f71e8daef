import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { request } from 'undici';
import { generateRelease } from '../etl/generate.ts';
import { latestRelease } from '../src/data/releases.ts';
import { progressBar } from '../etl/progress.ts';
import { load, summarizeRuns, type Run, type Stats } from './load.ts';
import { sqlBench } from './sql.ts';

// `npm run bench`: the service as users run it (a separate process over HTTP), on
// the full-size sample release, for an uncached 1000-row ggr page with two filters.
// Every figure is a median/p99 of a bounded number of requests, next to a ceiling
// measured in the same run (/healthz on the same server) and DuckDB's own time.

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

/** Starts `npm start`'s entry point with extra settings; resolves once it serves. */
async function startServer(env: Record<string, string>) {
  const stateDir = path.join(WORK, 'state');
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    // Thousands of requests on one key: limits are lifted (a bench-only setting).
    env: { ...process.env, DATA_DIR, STATE_DIR: stateDir, PORT: '0', ADMIN_PORT: '0', BENCH_DISABLE_LIMITS: 'true', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let url = '';
  let adminUrl = '';
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const entry = JSON.parse(line);
      if (entry.msg === 'listening') ({ url, adminUrl } = entry);
      if (entry.msg === 'ready') resolve();
    });
  });
  const token = (await fs.readFile(path.join(stateDir, 'admin-token'), 'utf8')).trim();
  const created = await request(`${adminUrl}/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ client: 'bench' }),
  });
  const { key } = (await created.body.json()) as { key: string };
  return {
    url,
    headers: { 'x-api-key': key },
    stop: () => new Promise<void>((resolve) => {
      child.removeAllListeners('exit');
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    }),
  };
}

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

const fmt = (stats: Stats) =>
  `p50 ${stats.p50.toFixed(2).padStart(6)} ms  p99 ${stats.p99.toFixed(2).padStart(6)} ms  ${stats.rps.toFixed(0).padStart(5)} req/s`;

async function main() {
  await fs.mkdir(WORK, { recursive: true });
  const release = await ensureRelease();
  const rows: string[] = [];
  const report = (name: string, stats: Stats, extra = '') => {
    const line = `${name.padEnd(58)} ${fmt(stats)}${extra}`;
    rows.push(line);
    log(line);
  };

  let late = { cursor: '', pages: 0 };
  // The defaults first, then one knob turned at a time.
  const configs = [
    { DUCKDB_CONNECTIONS: '4', DUCKDB_THREADS: '1' },
    { DUCKDB_CONNECTIONS: '1', DUCKDB_THREADS: '1' },
    { DUCKDB_CONNECTIONS: '4', DUCKDB_THREADS: '2' },
  ];
  for (const env of configs) {
    const tag = `[${env.DUCKDB_CONNECTIONS} conn, ${env.DUCKDB_THREADS} thr]`;
    log(`\nserver with ${tag}: loading ${release.dir}…`);
    const server = await startServer(env);
    try {
      if (!late.cursor) late = await lateCursor(server.url, server.headers);
      const ceiling = summarizeRuns([await load(server.url, () => '/healthz', {}, 16, CONCURRENT)]);
      report(`${tag} ceiling: GET /healthz, 16 connections`, ceiling);
      const pages = { first: () => QUERY, late: () => `${QUERY}&cursor=${late.cursor}` };
      for (const [connections, total] of [[1, SEQUENTIAL], [16, CONCURRENT]] as const) {
        // First and late pages alternate (first, late, late, first) so that neither
        // gains from running later in a warmer process.
        const runs = { first: [] as Run[], late: [] as Run[] };
        for (const which of ['first', 'late', 'late', 'first'] as const) {
          runs[which].push(await load(server.url, pages[which], server.headers, connections, total / 2));
        }
        const first = summarizeRuns(runs.first);
        const who = connections === 1 ? '1 client' : `${connections} connections`;
        report(`${tag} first page, ${who}`, first, `  (${(first.bytes / 1024).toFixed(0)} kB, ${((first.rps / ceiling.rps) * 100).toFixed(0)}% of ceiling)`);
        report(`${tag} late page (${Math.floor(late.pages * 0.9)}/${late.pages}), ${who}`, summarizeRuns(runs.late));
      }
    } finally {
      await server.stop();
    }
  }

  log('\nDuckDB alone, same SQL, in this process (no HTTP):');
  for (const [name, stats] of await sqlBench(release, FILTERS, 1)) report(`duckdb ${name}`, stats);

  const out = path.join(WORK, 'results.txt');
  await fs.writeFile(out, `${new Date().toISOString()} ${QUERY}\n${rows.join('\n')}\n`);
  log(`\nwritten to ${path.relative(ROOT, out)}`);
}

await main();
