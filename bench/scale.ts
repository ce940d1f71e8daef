import fs from 'node:fs/promises';
import path from 'node:path';
import { latestRelease } from '../src/releases/on-disk.ts';
import { load, summarizeRuns, type Run } from './load.ts';
import { startServer } from './server.ts';

// How cost grows with data: one server per release (e.g. the 1x and 16x samples), all
// running at once, the same uncached 1000-row page asked of each in alternating
// blocks so the shared machine's noise falls on all of them alike. Prints p50/p99 per
// release, the ratio to the first, load time, peak RSS while loading and RSS after.
//   npx tsx bench/scale.ts DATA_DIR [DATA_DIR …]     (the first is the reference)

const ROOT = path.resolve(import.meta.dirname, '..');
const QUERY = '/v1/financials?metric=ggr&region=Europe&channel=Online&limit=1000';
const BLOCKS = 8;
const PER_BLOCK = 50;

const dataDirs = process.argv.slice(2).map((dir) => path.resolve(dir));
if (dataDirs.length === 0) throw new Error('usage: npx tsx bench/scale.ts DATA_DIR [DATA_DIR …] (the first is the reference)');
for (const dir of dataDirs) if (!(await latestRelease(dir))) throw new Error(`${dir}: no release; make one with npm run etl -- generate --out ${dir}/2026-11 --scale X`);

const memory = async (pid: number) => {
  const text = await fs.readFile(`/proc/${pid}/status`, 'utf8');
  const mb = (field: string) => Math.round(Number(new RegExp(`${field}:\\s+(\\d+)`).exec(text)![1]) / 1024);
  return { rss: mb('VmRSS'), peak: mb('VmHWM') };
};

const servers = [];
try {
  for (const [i, dir] of dataDirs.entries()) {
    process.stderr.write(`loading ${dir}…\n`);
    const started = performance.now();
    // The cache off: every request is the uncached page.
    const server = await startServer({ DATA_DIR: dir, STATE_DIR: path.join(ROOT, 'tmp', 'bench', `scale-state-${i}`), CACHE_MAX_BYTES: '0' });
    servers.push({ dir, server, loadSeconds: (performance.now() - started) / 1000, loadPeak: (await memory(server.pid)).peak, runs: [] as Run[] });
  }
  // A walk to a late page per server would differ in position; the first page is the
  // same SQL everywhere and shows how a scan's cost grows with rows.
  for (let block = 0; block < BLOCKS; block++) {
    process.stderr.write(`block ${block + 1}/${BLOCKS}\r`);
    const order = block % 2 === 0 ? servers : [...servers].reverse();
    for (const s of order) s.runs.push(await load(s.server.url, () => QUERY, s.server.headers, 1, PER_BLOCK));
  }
  process.stderr.write('\n');
  const reference = summarizeRuns(servers[0]!.runs);
  for (const s of servers) {
    const stats = summarizeRuns(s.runs);
    const { rss } = await memory(s.server.pid);
    console.log(
      `${path.relative(ROOT, s.dir).padEnd(24)} p50 ${stats.p50.toFixed(2)} ms (${(stats.p50 / reference.p50).toFixed(2)}x)  p99 ${stats.p99.toFixed(2)} ms  ` +
        `load ${s.loadSeconds.toFixed(1)} s  peak while loading ${s.loadPeak} MB  RSS after ${BLOCKS * PER_BLOCK} pages ${rss} MB`,
    );
  }
} finally {
  await Promise.all(servers.map((s) => s.server.stop()));
}
