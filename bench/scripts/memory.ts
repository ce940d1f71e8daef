import path from 'node:path';
import { latestRelease } from '../../src/releases/on-disk.ts';
import { load } from '../runner/load.ts';
import { processMemory, startServer } from '../runner/server.ts';

// Resident memory of `npm start` on a release, as an operator sees it: the peak while
// loading (VmHWM) and RSS once ready, idle and then after serving pages (by then
// the load's garbage has been collected). Several starts, since one is not enough
// on a shared machine.
//   npx tsx bench/scripts/memory.ts [DATA_DIR] [STARTS]   (default tmp/bench/data, made by npm run bench; 3)

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const DATA_DIR = path.resolve(process.argv[2] ?? path.join(ROOT, 'tmp', 'bench', 'data'));
const STARTS = Number(process.argv[3] ?? 3);
const PAGES = 300;
const QUERY = '/v1/financials?metric=ggr&region=Europe&channel=Online&limit=1000';

if (!(await latestRelease(DATA_DIR))) throw new Error(`${DATA_DIR}: no release; run npm run bench once, or pass a DATA_DIR holding one`);
const stateDir = path.join(ROOT, 'tmp', 'bench', 'memory-state');
for (let start = 1; start <= STARTS; start++) {
  const server = await startServer({ DATA_DIR, STATE_DIR: stateDir }, path.join(ROOT, 'tmp', 'bench', 'logs', 'memory.log'));
  try {
    await new Promise((resolve) => setTimeout(resolve, 5000));
    const idle = processMemory(server.pid);
    await load(server.url, [{ path: QUERY, headers: server.headers, status: 200 }], 1, PAGES);
    const served = processMemory(server.pid);
    console.log(`start ${start}: peak while loading ${idle.peak} MB; ready and idle 5 s ${idle.rss} MB; after ${PAGES} pages ${served.rss} MB (peak ${served.peak} MB)`);
  } finally {
    await server.stop();
  }
}
