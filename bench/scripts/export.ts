import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { DuckDBInstance } from '@duckdb/node-api';
import { request } from 'undici';
import { loadDrop } from '../../etl/load.ts';
import { quoteLiteral } from '../../src/duckdb/sql-text.ts';
import { DATASETS } from '../../src/registry.ts';
import { currentRelease, latestRelease } from '../../src/releases/on-disk.ts';
import { processMemory, type ServiceProcess, startServer } from '../../tools/service-process.ts';

// `npx tsx bench/scripts/export.ts DATA_DIR_1X [DATA_DIR_16X]`: what /v1/export costs. The 1x release is
// published with `etl load` into a scratch DATA_DIR (so its ggr file is the normalized
// one the whole-file export sends). Then, each answer checked before it is timed:
// - the whole ggr file, against bare node:http streaming the same file (MB/s);
// - a filtered CSV export (fx=USD), rows/s against DuckDB's own COPY (…) TO CSV of the
//   same rows in this process;
// - the server's RSS, sampled every 50 ms, during an unfiltered CSV export; with a
//   second DATA_DIR also on that release as generated (the stream path needs no etl
//   load, which takes most of an hour at 16x).

const line = (text: string) => process.stderr.write(`${text}\n`);
const ROUNDS = 5;
const DIMS = DATASETS.find((d) => d.name === 'ggr')!
  .dimensions.map((d) => `"${d}"`)
  .join(', ');

async function fetchAll(url: string, headers: Record<string, string>): Promise<{ bytes: number; ms: number; body?: Buffer }> {
  const started = performance.now();
  const res = await request(url, { headers });
  if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${(await res.body.text()).slice(0, 200)}`);
  let bytes = 0;
  for await (const chunk of res.body) bytes += (chunk as Buffer).length;
  return { bytes, ms: performance.now() - started };
}

/** Best of ROUNDS downloads, in MB/s. */
async function rate(url: string, headers: Record<string, string>, expectBytes: number): Promise<number> {
  let best = 0;
  for (let i = 0; i < ROUNDS; i++) {
    const { bytes, ms } = await fetchAll(url, headers);
    if (bytes !== expectBytes) throw new Error(`${url}: ${bytes} bytes, expected ${expectBytes}`);
    best = Math.max(best, bytes / (1 << 20) / (ms / 1000));
  }
  return best;
}

/** The server's RSS, sampled every 50 ms, before and during an unfiltered CSV export of ggr. */
async function exportMemory(server: ServiceProcess, label: string): Promise<void> {
  const before = processMemory(server.pid).rss;
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, processMemory(server.pid).rss)), 50);
  const whole = await fetchAll(`${server.url}/v1/export?metric=ggr&period=1900-01-01:2100-12-31`, {
    ...server.headers,
    accept: 'text/csv',
  });
  clearInterval(sampler);
  line(
    `  ${label}: unfiltered CSV export (${(whole.bytes / (1 << 20)).toFixed(0)} MB in ${(whole.ms / 1000).toFixed(1)} s): RSS ${before} MB before, peak ${peak} MB during: +${peak - before} MB (target ≤ 64 MB)`,
  );
}

const [dir, bigDir] = process.argv.slice(2);
if (!dir) {
  line('usage: npx tsx bench/scripts/export.ts DATA_DIR_1X [DATA_DIR_16X]');
  process.exit(2);
}
const source = (await currentRelease(path.resolve(dir))) ?? (await latestRelease(path.resolve(dir)));
if (!source) throw new Error(`${dir} holds no release: generate one with npm run etl -- generate --out ${dir}/2026-11 --scale 1`);
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'dqs-bench-export-'));
const dataDir = path.join(work, 'data');
line(`publishing ${source.dir} with etl load into ${dataDir} …`);
await loadDrop({
  drop: source.dir,
  dataDir,
  release: source.manifest.release,
  force: false,
  minYear: 1990,
  maxYear: 2100,
  maxRowChange: 0.25,
});
const file = path.join(dataDir, source.manifest.release, 'ggr.parquet');
const size = fs.statSync(file).size;

const server = await startServer(
  { DATA_DIR: dataDir, STATE_DIR: path.join(work, 'state'), EXPORT_LIMIT_PER_DAY: '1000' },
  path.join(work, 'server.log'),
);
const bare = spawn(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, '..', 'ceilings', 'bare-file-server.ts'), file], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
try {
  const bareUrl = (
    JSON.parse(await new Promise<string>((resolve) => createInterface({ input: bare.stdout! }).once('line', resolve))) as { url: string }
  ).url;
  const ours = await rate(`${server.url}/v1/export?metric=ggr`, server.headers, size);
  const ceiling = await rate(`${bareUrl}/`, {}, size);
  line(
    `  whole ggr file (${(size / (1 << 20)).toFixed(1)} MB): service ${ours.toFixed(0)} MB/s, bare node:http ${ceiling.toFixed(0)} MB/s: ${(ours / ceiling).toFixed(2)}x (target ≥ 0.8x)`,
  );

  const instance = await DuckDBInstance.create(':memory:', { threads: '1' });
  const connection = await instance.connect();
  const [[rows]] = (
    await connection.runAndReadAll(`SELECT count(*)::INTEGER FROM read_parquet(${quoteLiteral(file)}) WHERE fx = 'USD'`)
  ).getRows() as [[number]];
  let copyBest = Infinity;
  for (let i = 0; i < ROUNDS; i++) {
    const started = performance.now();
    await connection.run(
      `COPY (SELECT * FROM read_parquet(${quoteLiteral(file)}) WHERE fx = 'USD' ORDER BY ${DIMS}) TO ${quoteLiteral(path.join(work, 'copy.csv'))} (HEADER)`,
    );
    copyBest = Math.min(copyBest, performance.now() - started);
  }
  connection.closeSync();
  instance.closeSync();
  let exportBest = Infinity;
  const csvUrl = `${server.url}/v1/export?metric=ggr&fx=USD`;
  for (let i = 0; i < ROUNDS; i++)
    exportBest = Math.min(exportBest, (await fetchAll(csvUrl, { ...server.headers, accept: 'text/csv' })).ms);
  const ourRate = rows / (exportBest / 1000);
  const duckRate = rows / (copyBest / 1000);
  line(
    `  filtered CSV export (fx=USD, ${rows.toLocaleString()} rows): service ${(ourRate / 1e6).toFixed(2)} M rows/s, DuckDB COPY TO in process (1 thread) ${(duckRate / 1e6).toFixed(2)} M rows/s: ${(ourRate / duckRate).toFixed(2)}x (target ≥ 0.7x)`,
  );

  await exportMemory(server, path.basename(dir));
} finally {
  bare.kill();
  await server.stop();
}
try {
  if (bigDir) {
    line(`starting a server on ${bigDir} (a 16x release loads in one to three minutes) …`);
    const big = await startServer(
      { DATA_DIR: path.resolve(bigDir), STATE_DIR: path.join(work, 'state-big'), EXPORT_LIMIT_PER_DAY: '1000' },
      path.join(work, 'server-big.log'),
    );
    try {
      await exportMemory(big, path.basename(bigDir));
    } finally {
      await big.stop();
    }
  }
} finally {
  fs.rmSync(work, { recursive: true, force: true });
}
