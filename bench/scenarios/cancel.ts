import fs from 'node:fs';
import path from 'node:path';
import { request } from 'undici';
import { generateRelease } from '../../etl/generate.ts';
import { loadDrop } from '../../etl/load.ts';
import { startServer } from '../../tools/service-process.ts';
import { cpuSeconds } from '../runner/wrk.ts';

// What heavy work costs once nobody waits for it (docs/performance.md "Heavy work
// stopped"). One heavy request, a full revisions diff of two 1x releases in which
// every row differs, three ways on a fresh server each: run to its end; with
// `Prefer: wait=0.3` (its deadline passes); and cut off by its client after 300 ms.
// For each: when it was answered or cut off, the server's CPU until then, and its CPU
// in the 3 s after, which should be near zero for the last two, beside what the first
// spent after the same point.

const RELEASES = [
  ['2026-01', 1],
  ['2026-02', 2],
] as const;
const CUT_MS = 300;
const AFTER_MS = 3000;
const DIFF = `/v1/revisions?metric=ggr&from=${RELEASES[0][0]}&to=${RELEASES[1][0]}&limit=3`;

export type CancelWay = 'to its end' | 'deadline' | 'client gone';

export interface CancelFigure {
  readonly way: CancelWay;
  /** The answer's status, or `cut off`. */
  readonly status: string;
  /** Milliseconds from the request to its answer, or to the client leaving. */
  readonly ms: number;
  /** Server CPU seconds from the request to that point, and in the 3 s after it. */
  readonly cpuUntil: number;
  readonly cpuAfter: number;
}

/**
 * 1x releases generated each from its own seed (so every row differs from the release
 * before) and published in order by `etl load` into `dataDir`, once: later runs reuse
 * them. `purpose` names the scenarios they serve in progress lines.
 */
export async function seededReleases(
  dataDir: string,
  releases: ReadonlyArray<readonly [string, number]>,
  purpose: string,
  progress: (text: string) => void,
): Promise<string> {
  for (const [release, seed] of releases) {
    if (fs.existsSync(path.join(dataDir, release, 'manifest.json'))) continue;
    const drop = path.join(path.dirname(dataDir), `${path.basename(dataDir)}-drop-${release}`);
    progress(`generating ${release} (seed ${seed}, scale 1) for ${purpose} (once; later runs reuse it)`);
    fs.rmSync(drop, { recursive: true, force: true });
    await generateRelease({ out: drop, seed, scale: 1, release });
    await loadDrop({ drop, dataDir, release, force: true, minYear: 1990, maxYear: 2100, maxRowChange: 1 });
    fs.rmSync(drop, { recursive: true, force: true });
  }
  return dataDir;
}

/** The two releases in `work`/cancel; their DATA_DIR. */
export const cancelReleases = (work: string, progress: (text: string) => void): Promise<string> =>
  seededReleases(path.join(work, 'cancel'), RELEASES, 'the cancellation scenarios', progress);

async function measure(way: CancelWay, dataDir: string, work: string): Promise<CancelFigure> {
  const stateDir = fs.mkdtempSync(path.join(work, 'state-cancel-'));
  const server = await startServer(
    { DATA_DIR: dataDir, STATE_DIR: stateDir, BENCH_DISABLE_LIMITS: 'false', QUERY_TIMEOUT_MS: '60000' },
    path.join(work, 'logs', `cancel-${way.replace(/ /g, '-')}.log`),
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

/** The three ways, each on a fresh server over the releases in `work`/cancel. */
export async function cancelFigures(work: string, progress: (text: string) => void): Promise<CancelFigure[]> {
  const dataDir = await cancelReleases(work, progress);
  const figures: CancelFigure[] = [];
  for (const way of ['to its end', 'deadline', 'client gone'] as const) {
    progress(`a full diff, ${way}`);
    figures.push(await measure(way, dataDir, work));
  }
  return figures;
}

export const CANCEL_HEADER = 'a full ggr diff of two 1x releases   status   answered or cut off   server CPU until then   in the 3 s after';

export function cancelRow(f: CancelFigure): string {
  return `${f.way.padEnd(36)} ${f.status.padEnd(8)} ${`${f.ms.toFixed(0)} ms`.padStart(19)}   ${`${f.cpuUntil.toFixed(2)} s`.padStart(21)}   ${`${f.cpuAfter.toFixed(2)} s`.padStart(16)}`;
}
