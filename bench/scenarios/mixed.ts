import path from 'node:path';
import { mulberry32 } from '../../etl/generate.ts';
import { Database } from '../../src/duckdb/database.ts';
import { quoteIdent, quoteLiteral } from '../../src/duckdb/sql-text.ts';
import { DATASETS } from '../../src/registry.ts';
import type { ReleaseOnDisk } from '../../src/releases/on-disk.ts';
import type { Captured } from '../ceilings/bare.ts';
import type { Scenario } from './suite.ts';

// The mixed workload: a list of requests drawn from a seeded distribution, the same
// list on every run with the same seed and release. Each draw is one of
//   70%  a small filtered page: dataset ggr 45%, turnover 35%, fx 10%, country 10%;
//        1–3 filters on distinct dimensions among year, region, country, category,
//        product and channel (those the dataset has), each one value drawn uniformly
//        from the release's values; limit 10 (40%), 100 (40%) or 1000 (20%)
//    3%  a full walk: ggr or turnover, one year and one region, limit 1000, every
//        page in order following the cursors (about 5 pages)
//   27%  a repeat of a request drawn uniformly from those already in the list,
//        which the response cache answers when the server has one
// until the list holds its size: of the requests, about 62% are small pages, 13%
// walk pages and 25% repeats. The 1- and 16-connection runs get lists of their own
// (drawn one after the other), so the second does not find the first's answers cached.

const SMALL_DIMENSIONS = ['year', 'region', 'country', 'category', 'product', 'channel'];
const DATASET_WEIGHTS: Array<[string, number]> = [
  ['ggr', 0.45],
  ['turnover', 0.35],
  ['fx', 0.1],
  ['country', 0.1],
];
const LIMIT_WEIGHTS: Array<[number, number]> = [
  [10, 0.4],
  [100, 0.4],
  [1000, 0.2],
];
const MAX_WALK_PAGES = 20;

/** The values each dataset's filterable dimensions hold in this release. */
async function releaseValues(release: ReleaseOnDisk): Promise<Map<string, Map<string, string[]>>> {
  const db = await Database.open({ connections: 1, threads: 1 });
  const connection = await db.connect();
  try {
    const values = new Map<string, Map<string, string[]>>();
    for (const [name] of DATASET_WEIGHTS) {
      const def = DATASETS.find((d) => d.name === name)!;
      const file = quoteLiteral(path.join(release.dir, release.manifest.datasets[name]!.file));
      const dims = new Map<string, string[]>();
      for (const dim of SMALL_DIMENSIONS.filter((d) => def.dimensions.includes(d))) {
        const rows = (
          await connection.runAndReadAll(`SELECT DISTINCT ${quoteIdent(dim)}::VARCHAR FROM read_parquet(${file}) ORDER BY 1`)
        ).getRows();
        dims.set(
          dim,
          rows.map(([v]) => String(v)),
        );
      }
      values.set(name, dims);
    }
    return values;
  } finally {
    connection.closeSync();
    db.close();
  }
}

type Fetch = (path: string) => Promise<Captured>;

/**
 * Draws the workload's two lists (`sizes.one` and `sizes.sixteen` requests) and
 * captures every answer with `fetch` (a server with the cache off, so each is
 * computed), following cursors for walks. Each path is fetched once.
 */
export async function mixedWorkload(
  release: ReleaseOnDisk,
  seed: number,
  sizes: { one: number; sixteen: number },
  fetch: Fetch,
): Promise<{ one: Scenario; sixteen: Scenario }> {
  const values = await releaseValues(release);
  const rand = mulberry32(seed);
  const pick = <T>(items: readonly T[]) => items[Math.floor(rand() * items.length)]!;
  const weighted = <T>(items: ReadonlyArray<[T, number]>) => {
    let r = rand();
    for (const [item, weight] of items) {
      r -= weight;
      if (r < 0) return item;
    }
    return items.at(-1)![0];
  };
  const answers = new Map<string, Captured>();
  const get = async (p: string) => answers.get(p) ?? answers.set(p, await fetch(p)).get(p)!;
  const query = (params: Array<[string, string]>) => `/v1/financials?${params.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&')}`;

  const draw = async (size: number, title: string): Promise<Scenario> => {
    const paths: string[] = [];
    while (paths.length < size) {
      const kind = rand();
      if (kind < 0.7 || paths.length === 0) {
        const dataset = weighted(DATASET_WEIGHTS);
        const dims = [...values.get(dataset)!];
        const chosen: Array<[string, string]> = [];
        for (let n = 1 + Math.floor(rand() * 3); n > 0 && dims.length > 0; n--) {
          const [dim, held] = dims.splice(Math.floor(rand() * dims.length), 1)[0]!;
          chosen.push([dim, pick(held)]);
        }
        const p = query([['metric', dataset], ...chosen, ['limit', String(weighted(LIMIT_WEIGHTS))]]);
        await get(p);
        paths.push(p);
      } else if (kind < 0.73) {
        const dataset = rand() < 0.5 ? 'ggr' : 'turnover';
        const first = query([
          ['metric', dataset],
          ['year', pick(values.get(dataset)!.get('year')!)],
          ['region', pick(values.get(dataset)!.get('region')!)],
          ['limit', '1000'],
        ]);
        let p: string | undefined = first;
        for (let page = 0; p && page < MAX_WALK_PAGES && paths.length < size; page++) {
          const cursor: string = (JSON.parse((await get(p)).body.toString()) as { pagination: { cursor: string } }).pagination.cursor;
          paths.push(p);
          p = cursor ? `${first}&cursor=${cursor}` : undefined;
        }
      } else {
        paths.push(pick(paths));
      }
    }
    const list = paths.map((p) => answers.get(p)!);
    return {
      id: 'mixed',
      title,
      requests: paths.map((p, i) => ({ path: p, headers: {}, status: 200, body: list[i]!.body })),
      answers: list,
    };
  };
  const one = await draw(sizes.one, `mixed workload (${sizes.one} requests, seed ${seed})`);
  const sixteen = await draw(sizes.sixteen, `mixed workload (${sizes.sixteen} requests, seed ${seed})`);
  return { one, sixteen };
}
