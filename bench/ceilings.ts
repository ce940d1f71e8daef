import pino from 'pino';
import { Database } from '../src/duckdb/database.ts';
import { FORMATS, type Format } from '../src/http/formats.ts';
import { whereClauses, type Filters } from '../src/query/filters.ts';
import { readPage } from '../src/query/page.ts';
import type { ReleaseOnDisk } from '../src/releases/on-disk.ts';
import { loadRelease, type ServedDataset } from '../src/store/loader.ts';
import { summarize, type Stats } from './load.ts';

// The query ceiling: what a page costs with no HTTP at all, in this process, on the
// server's own code and pool settings (4 DuckDB connections, 1 thread): the keyset
// query plus rendering the body in the scenario's format. One worker for the
// single-client figure, 16 concurrent workers for the 16-connection one.

export interface PageSpec {
  readonly dataset: string;
  readonly filters: Filters;
  readonly limit: number;
  /** The first page, or the page 90% of the way through the walk. */
  readonly page: 'first' | 'late';
  readonly format: Format['name'];
}

export interface QueryCeiling {
  readonly one: Stats;
  readonly sixteen: Stats;
  /** The page's rows rendered here (JSON: the `data` array; CSV, Arrow: the whole body), for checking the service's answer. */
  readonly rows: Buffer;
  readonly rids: readonly number[];
}

/** Where the late page starts: 90% of the way through the walk, as a client would reach it. */
export const LATE_SHARE = 0.9;

export async function queryCeilings(
  release: ReleaseOnDisk,
  specs: ReadonlyMap<string, PageSpec>,
  counts: { one: number; sixteen: number },
  progress: (text: string) => void,
): Promise<Map<string, QueryCeiling>> {
  const db = await Database.open({ connections: 4, threads: 1 });
  const loader = await db.connect();
  try {
    progress(`loading ${release.dir} in this process`);
    const loaded = await loadRelease(loader, release, pino({ level: 'silent' }));
    const results = new Map<string, QueryCeiling>();
    for (const [id, spec] of specs) {
      progress(`DuckDB alone: ${id}`);
      const served = loaded.datasets.get(spec.dataset)!;
      const clauses = whereClauses(served, spec.filters);
      const after = spec.page === 'first' ? -1 : await lateStart(db, served, spec);
      const format = FORMATS.find((f) => f.name === spec.format)!;
      // An envelope the size of the service's: meta and a cursor's length of text.
      const envelope = (rows: number) => ({
        meta: { dataset: spec.dataset, metric: spec.dataset, filters_applied: Object.fromEntries(spec.filters), row_count: rows, release: release.manifest.release },
        pagination: { cursor: 'x'.repeat(40), has_more: true },
      });
      const run = async () => {
        const page = await readPage(db, served, clauses, spec.limit, after);
        return { rids: page.rids, body: format.render(served, page.rids, envelope(page.rids.length)) };
      };
      const { rids, body } = await run();
      const rows = format.name === 'json' ? served.json.render(rids, '[', ']') : body;
      results.set(id, { one: await timed(run, 1, counts.one), sixteen: await timed(run, 16, counts.sixteen), rows, rids });
    }
    return results;
  } finally {
    loader.closeSync();
    db.close();
  }
}

async function lateStart(db: Database, served: ServedDataset, spec: PageSpec): Promise<number> {
  const clauses = whereClauses(served, spec.filters);
  const starts = [-1];
  for (let page = await readPage(db, served, clauses, spec.limit, -1); page.nextAfter !== undefined; page = await readPage(db, served, clauses, spec.limit, page.nextAfter)) {
    starts.push(page.nextAfter);
  }
  return starts[Math.floor(starts.length * LATE_SHARE)]!;
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
  const t0 = performance.now();
  await Promise.all(Array.from({ length: workers }, worker));
  return summarize(latencies, (performance.now() - t0) / 1000, 0);
}
