import path from 'node:path';
import { latestRelease } from '../../src/releases/on-disk.ts';
import { memoryBreakdown, processMemory, startServer } from '../../tools/service-process.ts';
import { load } from '../runner/load.ts';

// Resident memory of `npm start` on a release, as an operator sees it: the peak while
// loading (VmHWM), RSS after 30 s idle and after serving pages, and what it is made
// of: code mapped from files (node, DuckDB's library), V8's heap, the release's
// columns, rollups and renderers (dqs_release_memory_bytes), the other external
// memory of the JS side (buffers), DuckDB's own accounting (dqs_duckdb_memory_bytes),
// and the rest (allocators' free lists, thread stacks). Several starts, since one is
// not enough on a shared machine.
//   npx tsx bench/scripts/memory.ts [DATA_DIR] [STARTS]   (default tmp/bench/data, made by npm run bench; 3)

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const DATA_DIR = path.resolve(process.argv[2] ?? path.join(ROOT, 'tmp', 'bench', 'data'));
const STARTS = Number(process.argv[3] ?? 3);
const IDLE_SECONDS = 30;
const PAGES = 300;
const QUERY = '/v1/financials?metric=ggr&region=Europe&channel=Online&limit=1000';

if (!(await latestRelease(DATA_DIR))) throw new Error(`${DATA_DIR}: no release; run npm run bench once, or pass a DATA_DIR holding one`);
const stateDir = path.join(ROOT, 'tmp', 'bench', 'memory-state');
for (let start = 1; start <= STARTS; start++) {
  const server = await startServer({ DATA_DIR, STATE_DIR: stateDir }, path.join(ROOT, 'tmp', 'bench', 'logs', 'memory.log'));
  try {
    await new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1000));
    const idle = processMemory(server.pid);
    const parts = await memoryBreakdown(server);
    await load(server.url, [{ path: QUERY, headers: server.headers, status: 200 }], 1, PAGES);
    const served = processMemory(server.pid);
    console.log(
      `start ${start}: peak while loading ${idle.peak} MB; idle ${IDLE_SECONDS} s ${idle.rss} MB (${parts}); after ${PAGES} pages ${served.rss} MB`,
    );
  } finally {
    await server.stop();
  }
}
