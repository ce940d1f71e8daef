import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { request } from 'undici';
import { generateRelease } from '../../etl/generate.ts';
import { loadDrop } from '../../etl/load.ts';
import { startServer } from '../../tools/service-process.ts';
import { cpuSeconds } from '../runner/wrk.ts';

// What heavy work costs once nobody waits for it. One heavy request, a full revisions
// diff of two 1x releases in which every row differs, three ways on a fresh server
// each: run to its end; with `Prefer: wait=0.3` (its deadline passes); and cut off by
// its client after 300 ms. For each: when it was answered or cut off, the server's CPU
// until then, and its CPU in the 3 s after, which should be near zero for the last
// two, beside what the first spent after the same point.
//   npx tsx bench/scripts/cancel.ts [--root CHECKOUT]
// --root runs another checkout's server (the code before deadlines, for comparison).

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const { values: args } = parseArgs({ options: { root: { type: 'string' } } });
const serverRoot = path.resolve(args.root ?? ROOT);
const DATA_DIR = path.join(ROOT, 'tmp', 'bench', 'cancel');
const RELEASES = [
  ['2026-01', 1],
  ['2026-02', 2],
] as const;
const CUT_MS = 300;
const AFTER_MS = 3000;

async function publishReleases(): Promise<void> {
  for (const [release, seed] of RELEASES) {
    if (fs.existsSync(path.join(DATA_DIR, release, 'manifest.json'))) continue;
    const drop = path.join(ROOT, 'tmp', 'bench', `cancel-drop-${release}`);
    console.error(`generating ${release} (seed ${seed}, scale 1) and publishing it`);
    fs.rmSync(drop, { recursive: true, force: true });
    await generateRelease({ out: drop, seed, scale: 1, release });
    await loadDrop({ drop, dataDir: DATA_DIR, release, force: true, minYear: 1990, maxYear: 2100, maxRowChange: 1 });
    fs.rmSync(drop, { recursive: true, force: true });
  }
}

const DIFF = `/v1/revisions?metric=ggr&from=${RELEASES[0][0]}&to=${RELEASES[1][0]}&limit=3`;

interface Figure {
  readonly way: string;
  readonly status: string;
  /** Milliseconds from the request to its answer, or to the client leaving. */
  readonly ms: number;
  readonly cpuUntil: number;
  readonly cpuAfter: number;
}

async function measure(way: 'to its end' | 'deadline' | 'client gone'): Promise<Figure> {
  const stateDir = fs.mkdtempSync(path.join(ROOT, 'tmp', 'bench', 'state-cancel-'));
  const server = await startServer(
    { DATA_DIR, STATE_DIR: stateDir, BENCH_DISABLE_LIMITS: 'false', QUERY_TIMEOUT_MS: '60000' },
    path.join(ROOT, 'tmp', 'bench', 'logs', `cancel-${way.replace(/ /g, '-')}.log`),
    serverRoot,
  );
  try {
    const cpu = () => cpuSeconds(fs.readFileSync(`/proc/${server.pid}/stat`, 'utf8'));
    const headers = { ...server.headers, ...(way === 'deadline' ? { prefer: 'wait=0.3' } : {}) };
    const signal = way === 'client gone' ? AbortSignal.timeout(CUT_MS) : undefined;
    const before = cpu();
    const started = performance.now();
    let status: string;
    try {
      const res = await request(`${server.url}${DIFF}`, { headers, signal });
      await res.body.arrayBuffer();
      status = String(res.statusCode);
    } catch (err) {
      if (!signal?.aborted) throw err;
      status = 'cut off';
    }
    const ms = performance.now() - started;
    const at = cpu();
    await new Promise((resolve) => setTimeout(resolve, AFTER_MS));
    return { way, status, ms, cpuUntil: at - before, cpuAfter: cpu() - at };
  } finally {
    await server.stop();
    fs.rmSync(stateDir, { recursive: true, force: true });
  }
}

await publishReleases();
const figures: Figure[] = [];
for (const way of ['to its end', 'deadline', 'client gone'] as const) {
  console.error(`  … a full diff, ${way}`);
  figures.push(await measure(way));
}
console.log(`a full ggr diff of two 1x releases (${serverRoot === ROOT ? 'this checkout' : serverRoot})`);
console.log('way           status   answered or cut off   server CPU until then   server CPU in the 3 s after');
for (const f of figures) {
  console.log(
    `${f.way.padEnd(13)} ${f.status.padEnd(8)} ${`${f.ms.toFixed(0)} ms`.padStart(19)}   ${`${f.cpuUntil.toFixed(2)} s`.padStart(21)}   ${`${f.cpuAfter.toFixed(2)} s`.padStart(27)}`,
  );
}
