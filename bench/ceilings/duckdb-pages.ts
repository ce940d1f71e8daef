import pino from 'pino';
import { Database } from '../../src/duckdb/database.ts';
import { type Filters, whereClauses } from '../../src/query/filters.ts';
import { readPage } from '../../src/query/page.ts';
import { loadRelease, type ServedDataset } from '../../src/releases/load-release.ts';
import type { ReleaseOnDisk } from '../../src/releases/on-disk.ts';
import type { PageFormat } from '../../src/render/rows.ts';
import { type Run, type Stats, summarize } from '../runner/load.ts';
import type { LocalSide } from '../runner/measure.ts';

// The query ceiling: what a page costs with no HTTP at all, in this process, on the
// server's own code and pool settings (4 DuckDB connections, 1 thread): the keyset
// query plus rendering the body in the scenario's format. It is timed as a side of
// the service's own rounds (bench/runner/measure.ts), one worker per connection, so that it
// and the service meet the same stretch of this shared machine: timed once before
// the server started, it read 2,050 to 2,900 pages/s within one day.

export interface PageSpec {
  readonly dataset: string;
  readonly filters: Filters;
  readonly limit: number;
  /** The first page, or the page 90% of the way through the walk. */
  readonly page: 'first' | 'late';
  readonly format: PageFormat;
}

export interface RenderedPage {
  /** The page's rows rendered here (JSON: the `data` array; CSV, Arrow: the whole body), for checking the service's answer. */
  readonly rows: Buffer;
  readonly rids: readonly number[];
}

export interface QueryCeilings {
  /** Each spec's page as rendered here. */
  readonly pages: ReadonlyMap<string, RenderedPage>;
  /** DuckDB alone on a spec's page, timed in the service's rounds. */
  side(id: string): LocalSide;
  close(): void;
}

/** Where the late page starts: 90% of the way through the walk, as a client would reach it. */
export const LATE_SHARE = 0.9;

/** Loads `release` in this process and renders each spec's page once; its sides run until `close`. */
export async function openQueryCeilings(
  release: ReleaseOnDisk,
  specs: ReadonlyMap<string, PageSpec>,
  progress: (text: string) => void,
): Promise<QueryCeilings> {
  const db = await Database.open({ connections: 4, threads: 1 });
  const loader = await db.connect();
  const close = () => {
    loader.closeSync();
    db.close();
  };
  try {
    progress(`loading ${release.dir} in this process`);
    const loaded = await loadRelease(loader, release, pino({ level: 'silent' }));
    const pages = new Map<string, RenderedPage>();
    const runs = new Map<string, () => Promise<Buffer>>();
    for (const [id, spec] of specs) {
      progress(`DuckDB alone: ${id}`);
      const served = loaded.datasets.get(spec.dataset)!;
      const clauses = whereClauses(served, spec.filters);
      const after = spec.page === 'first' ? -1 : await lateStart(db, served, spec);
      // An envelope the size of the service's: meta and a cursor's length of text.
      const envelope = (rows: number) => ({
        meta: {
          dataset: spec.dataset,
          metric: spec.dataset,
          filters_applied: Object.fromEntries(spec.filters),
          row_count: rows,
          release: release.manifest.release,
        },
        pagination: { cursor: 'x'.repeat(40), has_more: true },
      });
      const render = async () => {
        const page = await readPage(db, served, clauses, spec.limit, after);
        return { rids: page.rids, body: served.rows.page(spec.format, page.rids, envelope(page.rids.length)) };
      };
      const { rids, body } = await render();
      pages.set(id, { rows: spec.format === 'json' ? served.rows.json.render(rids, '[', ']') : body, rids });
      runs.set(id, async () => (await render()).body);
    }
    return {
      pages,
      side: (id) => ({ local: (workers, seconds) => timedFor(runs.get(id)!, workers, seconds) }),
      close,
    };
  } catch (err) {
    close();
    throw err;
  }
}

async function lateStart(db: Database, served: ServedDataset, spec: PageSpec): Promise<number> {
  const clauses = whereClauses(served, spec.filters);
  const starts = [-1];
  for (
    let page = await readPage(db, served, clauses, spec.limit, -1);
    page.nextAfter !== undefined;
    page = await readPage(db, served, clauses, spec.limit, page.nextAfter)
  ) {
    starts.push(page.nextAfter);
  }
  return starts[Math.floor(starts.length * LATE_SHARE)]!;
}

/**
 * `run` by `workers` concurrent workers for `seconds`, as a run of a side: each
 * call's latency, the body bytes, and this process's CPU share over the run.
 */
export async function timedFor(run: () => Promise<Buffer>, workers: number, seconds: number): Promise<Run> {
  const latencies: number[] = [];
  let bytes = 0;
  const cpu = process.cpuUsage();
  const t0 = performance.now();
  const until = t0 + seconds * 1000;
  const worker = async () => {
    while (performance.now() < until) {
      const t = performance.now();
      bytes = (await run()).length;
      latencies.push(performance.now() - t);
    }
  };
  await Promise.all(Array.from({ length: workers }, worker));
  const wall = (performance.now() - t0) / 1000;
  const used = process.cpuUsage(cpu);
  return { latencies, seconds: wall, bytes, serverCpu: (used.user + used.system) / 1e6 / wall };
}

/** `total` runs of `run` by `workers` concurrent workers, after a short warm-up. */
export async function timed(run: () => Promise<unknown>, workers: number, total: number): Promise<Stats> {
  for (let i = 0; i < Math.min(20, total); i++) await run();
  const latencies: number[] = [];
  let started = 0;
  const worker = async () => {
    while (started++ < total) {
      const t = performance.now();
      await run();
      latencies.push(performance.now() - t);
    }
  };
  const cpu = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(Array.from({ length: workers }, worker));
  const wall = (performance.now() - t0) / 1000;
  // This process's CPU over wall time, DuckDB's threads included: what a request of it costs, as the service's is read from /proc.
  const used = process.cpuUsage(cpu);
  return { ...summarize(latencies, wall, 0), serverCpu: (used.user + used.system) / 1e6 / wall };
}
