import path from 'node:path';
import pino from 'pino';
import { Database } from '../../src/duckdb/database.ts';
import { whereClauses } from '../../src/query/filters.ts';
import { readPage } from '../../src/query/page.ts';
import { loadRelease } from '../../src/releases/load-release.ts';
import { latestRelease } from '../../src/releases/on-disk.ts';
import { FORMATS as ALL_FORMATS, PAGE_FORMATS } from '../../src/render/formats.ts';
import { startServer } from '../../tools/service-process.ts';
import { load, type Run, type Stats, summarize, summarizeRuns } from '../runner/load.ts';

// `npx tsx bench/scripts/formats.ts [DATA_DIR]`: what each output format costs the server for
// an uncached 1000-row ggr page (the HTTP bench's page): in this process, the keyset
// query plus rendering, and rendering alone; then over HTTP from one client to the
// service in its own process with the cache off (send to last byte, loopback), so
// writing each body to the socket counts too. Formats run in turns, round after
// round, so none gains from running later in a warmer process or loses to a burst of load.
// Targets: Arrow no more than JSON; CSV within 1.2x of JSON.

const ROUNDS = 8;
const PER_ROUND = 100;
const FILTERS = new Map([
  ['region', ['Europe']],
  ['channel', ['Online']],
]);
const dataDir = path.resolve(process.argv[2] ?? path.join(import.meta.dirname, '..', '..', 'tmp', 'bench', 'data'));

const release = await latestRelease(dataDir);
if (!release) throw new Error(`${dataDir} holds no release: run \`npm run bench\` once (it generates one) or pass a DATA_DIR`);
process.stderr.write(`loading ${release.dir}…\n`);
const db = await Database.open({ connections: 1, threads: 1 });
const loader = await db.connect();
const ggr = (await loadRelease(loader, release, pino({ level: 'silent' }))).datasets.get('ggr')!;
const clauses = whereClauses(ggr, FILTERS)!;
const envelope = (rows: number) => ({
  meta: { dataset: 'ggr', metric: 'ggr', filters_applied: Object.fromEntries(FILTERS), row_count: rows },
  pagination: { cursor: 'x', has_more: true },
});
const firstPage = await readPage(db, ggr, clauses, 1000, -1);

const FORMATS = PAGE_FORMATS.map((name) => ({ ...ALL_FORMATS[name], name }));
type PageFormat = (typeof FORMATS)[number];
const uncached = (format: PageFormat) => async () => {
  const page = await readPage(db, ggr, clauses, 1000, -1);
  return ggr.rows.page(format.name, page.rids, envelope(page.rids.length));
};
const renderOnly = (format: PageFormat) => async () => ggr.rows.page(format.name, firstPage.rids, envelope(firstPage.rids.length));

async function compare(label: string, make: (format: PageFormat) => () => Promise<Buffer>): Promise<void> {
  const latencies = new Map(FORMATS.map((f) => [f.name, [] as number[]]));
  const bytes = new Map<string, number>();
  for (const format of FORMATS) for (let i = 0; i < PER_ROUND; i++) bytes.set(format.name, (await make(format)()).length);
  for (let round = 0; round < ROUNDS; round++) {
    // Rotate the order each round.
    for (let k = 0; k < FORMATS.length; k++) {
      const format = FORMATS[(round + k) % FORMATS.length]!;
      const run = make(format);
      for (let i = 0; i < PER_ROUND; i++) {
        const t = performance.now();
        await run();
        latencies.get(format.name)!.push(performance.now() - t);
      }
    }
  }
  const stats = new Map<string, Stats>(
    [...latencies].map(([name, l]) => [name, summarize(l, l.reduce((a, b) => a + b, 0) / 1000, bytes.get(name)!)]),
  );
  report(`${label} (${ROUNDS * PER_ROUND} runs each)`, stats);
}

function report(label: string, stats: Map<string, Stats>): void {
  const json = stats.get('json')!;
  process.stdout.write(`\n${label}:\n`);
  for (const [name, s] of stats) {
    process.stdout.write(
      `  ${name.padEnd(6)} p50 ${s.p50.toFixed(3).padStart(7)} ms  p99 ${s.p99.toFixed(3).padStart(7)} ms  ${String(s.bytes).padStart(7)} bytes  ${(s.p50 / json.p50).toFixed(2)}x JSON\n`,
    );
  }
}

async function overHttp(): Promise<void> {
  const work = path.join(import.meta.dirname, '..', '..', 'tmp', 'bench');
  const server = await startServer(
    { DATA_DIR: dataDir, STATE_DIR: path.join(work, 'state-formats'), CACHE_MAX_BYTES: '0' },
    path.join(work, 'logs', 'formats.log'),
  );
  try {
    const query = `/v1/financials?metric=ggr&${[...FILTERS].map(([k, [value]]) => `${k}=${encodeURIComponent(value!)}`).join('&')}&limit=1000`;
    const runs = new Map(FORMATS.map((f) => [f.name, [] as Run[]]));
    for (let round = 0; round < ROUNDS; round++) {
      for (let k = 0; k < FORMATS.length; k++) {
        const format = FORMATS[(round + k) % FORMATS.length]!;
        runs
          .get(format.name)!
          .push(
            await load(
              server.url,
              [{ path: query, headers: { ...server.headers, accept: format.mediaType }, status: 200 }],
              1,
              PER_ROUND / 2,
            ),
          );
      }
    }
    report(
      `uncached 1000-row page over HTTP, 1 client, cache off (${(ROUNDS * PER_ROUND) / 2} requests each)`,
      new Map([...runs].map(([name, r]) => [name, summarizeRuns(r)])),
    );
  } finally {
    await server.stop();
  }
}

await compare('uncached 1000-row page: keyset query + render', uncached);
await compare('render alone, the same 1000 rows', renderOnly);
loader.closeSync();
db.close();
await overHttp();
