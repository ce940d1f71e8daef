import path from 'node:path';
import { processMemory, type ServiceProcess, startServer } from '../../tools/service-process.ts';
import { capture, PAGE, withKey } from '../scenarios/suite.ts';
import { load, type Run, type Stats, spread, summarizeRuns } from './load.ts';

// How cost grows with data: one server per release scale (cache off), loaded one after
// another, each timed while it loads and read for its peak memory (VmHWM) once ready;
// then the same uncached 1000-row page asked of each from one client in alternating
// blocks, so the shared machine's noise falls on all of them alike; then each one's
// steady RSS. A walk to a late page would differ in position between releases; the
// first page is the same SQL everywhere and shows how a scan's cost grows with rows.

export interface SweepEntry {
  readonly scale: number;
  readonly dataDir: string;
  readonly rows: number;
  readonly loadSeconds: number;
  readonly loadPeakMB: number;
  readonly steadyRssMB: number;
  readonly page: Stats;
  /** Spread of p50 between the first and second half of the blocks. */
  readonly noise: number;
}

export interface Sweep {
  readonly entries: SweepEntry[];
  /** Still running, for scenarios on a scale's release; the caller stops them. */
  readonly servers: ReadonlyMap<number, ServiceProcess>;
}

export async function sweep(
  releases: ReadonlyArray<{ scale: number; dataDir: string; rows: number }>,
  work: string,
  blocks: { count: number; size: number },
  progress: (text: string, step?: boolean) => void,
): Promise<Sweep> {
  const servers = new Map<number, ServiceProcess>();
  const loaded: Array<{ scale: number; dataDir: string; rows: number; loadSeconds: number; loadPeakMB: number; runs: Run[] }> = [];
  try {
    for (const release of releases) {
      progress(`scale sweep: loading the ${release.scale}x release (${release.rows.toLocaleString('en')} ggr rows)`);
      const started = performance.now();
      const server = await startServer(
        {
          DATA_DIR: release.dataDir,
          STATE_DIR: path.join(work, `state-x${release.scale}`),
          CACHE_MAX_BYTES: '0',
          AGGREGATE_KEEP_BYTES: '0',
        },
        path.join(work, 'logs', `sweep-x${release.scale}.log`),
      );
      servers.set(release.scale, server);
      loaded.push({ ...release, loadSeconds: (performance.now() - started) / 1000, loadPeakMB: processMemory(server.pid).peak, runs: [] });
    }
    const requests = new Map<number, Awaited<ReturnType<typeof withKey>>>();
    for (const { scale } of loaded) {
      const server = servers.get(scale)!;
      const answer = await capture(server.url, PAGE, server.headers, 200);
      requests.set(scale, withKey([{ path: PAGE, headers: {}, status: 200, body: answer.body }], server.headers));
    }
    // Untimed first: the first block would pay for each server's cold code.
    for (const { scale } of loaded) await load(servers.get(scale)!.url, requests.get(scale)!, 1, blocks.size);
    for (let block = 0; block < blocks.count; block++) {
      progress(`scale sweep: block ${block + 1}/${blocks.count}`, false);
      for (const entry of block % 2 === 0 ? loaded : [...loaded].reverse()) {
        entry.runs.push(await load(servers.get(entry.scale)!.url, requests.get(entry.scale)!, 1, blocks.size));
      }
    }
  } catch (err) {
    await Promise.all([...servers.values()].map((s) => s.stop()));
    throw err;
  }
  const half = Math.floor(blocks.count / 2);
  const entries = loaded.map(({ runs, ...entry }) => ({
    ...entry,
    steadyRssMB: processMemory(servers.get(entry.scale)!.pid).rss,
    page: summarizeRuns(runs),
    noise: spread(summarizeRuns(runs.slice(0, half)).p50, summarizeRuns(runs.slice(half)).p50),
  }));
  return { entries, servers };
}
