import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { DuckDBInstance } from '@duckdb/node-api';
import { tableFromIPC } from 'apache-arrow';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { fixtureDataDir, startTestService, type TestService, tempDir, walkPages } from './helpers/service.ts';
import { requiring } from './helpers/skip.ts';

// README.md's shell examples, run as a newcomer runs them after `npm start`: every
// ```sh block from "Try it" on, in order, in one bash session from a copy of the
// repository's root (links to its files, with a downloads/ of its own), against a real server whose DATA_DIR starts with one release (the second-
// release walkthrough publishes the next one). Only the addresses change: the README's
// 127.0.0.1:3000 and ADMIN_PORT 3001 become the test server's. Every request must
// answer 2xx but the two the README shows failing on purpose, and what the examples
// saved (CSV, Arrow, Parquet, the CLI's walks) must hold the rows and totals of the
// JSON answers.

const ROOT = path.resolve(import.meta.dirname, '..');
const run = promisify(execFile);
/** What the examples write, kept out of the scratch root: a reader's own downloads and data stay untouched. */
const WRITTEN = new Set(['downloads', 'datasets', 'tmp', '.git']);
/** Requests the README makes to show an error; every other must succeed. */
const FAILING_ON_PURPOSE = [/product=Poker/, /metric=inflation$/];

let service: TestService;
let dataDir: string;
let stateDir: string;
let root: string;
const downloads = (file: string) => path.join(root, 'downloads', file);

/** The README's ```sh blocks from its first use of $BASE on: the ones that talk to a running server. */
async function shellBlocks(): Promise<string[]> {
  const readme = await fs.readFile(path.join(ROOT, 'README.md'), 'utf8');
  const blocks = [...readme.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
  return blocks.slice(blocks.findIndex((b) => b.includes('export BASE=')));
}

const shell = suite('README: the shell examples, run as written against a real server');
shell.before(async () => {
  dataDir = await tempDir('dqs-readme-sh-data-');
  // The sample `npm start` generates on a fresh clone (etl/first-run.ts): seed 1, full scale.
  await fs.cp(await fixtureDataDir({ seed: 1, scale: 1 }), dataDir, { recursive: true });
  stateDir = await tempDir('dqs-readme-sh-state-');
  service = await startTestService({ dataDir, stateDir });
  root = await tempDir('dqs-readme-sh-root-');
  for (const entry of await fs.readdir(ROOT)) if (!WRITTEN.has(entry)) await fs.symlink(path.join(ROOT, entry), path.join(root, entry));
});
shell.after(async () => {
  await service.stop();
  await fs.rm(dataDir, { recursive: true, force: true });
  await fs.rm(stateDir, { recursive: true, force: true });
  await fs.rm(root, { recursive: true, force: true });
});

const missing = ['/usr/bin/curl', '/bin/bash'].find((file) => !existsSync(file));
const withShell = requiring(shell, missing && `no ${missing} (apt-get install curl bash)`, 'README shell examples');

withShell('every example answers as the README says, and what it saved holds the JSON answers’ rows and totals', async () => {
  const adminPort = new URL(service.adminUrl).port;
  const script = (await shellBlocks())
    .join('\n')
    .replace('export BASE=http://127.0.0.1:3000', `export BASE=${service.url}`)
    .replace('export ADMIN_PORT=3001', `export ADMIN_PORT=${adminPort}`);
  // Each request's status on stderr, beside what the README prints on stdout.
  // python3 is Debian's, with python3-pandas, as the README asks, whatever python3 comes first on PATH here.
  const prelude = `set -e\ncurl() { command curl -w '%{stderr}HTTP %{http_code} %{url_effective}\\n' "$@"; }\npython3() { /usr/bin/python3 "$@"; }\n`;
  const { stdout, stderr } = await run('/bin/bash', ['-c', prelude + script], {
    cwd: root,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, LANG: 'C.UTF-8', DATA_DIR: dataDir, STATE_DIR: stateDir },
    timeout: 540_000,
    maxBuffer: 256 << 20,
  }).catch((err: { stdout?: string; stderr?: string; message: string }) => {
    throw new Error(
      `the README's shell examples failed: ${err.message}\nstdout: ${(err.stdout ?? '').slice(-3000)}\nstderr: ${(err.stderr ?? '').slice(-3000)}`,
    );
  });
  const statuses = [...stderr.matchAll(/^HTTP (\d{3}) (\S+)$/gm)].map((m) => ({ status: Number(m[1]), url: m[2]! }));
  assert.ok(statuses.length > 30, `${statuses.length} requests seen`);
  for (const { status, url } of statuses) {
    const onPurpose = FAILING_ON_PURPOSE.some((p) => p.test(url));
    assert.ok(onPurpose ? status >= 400 && status < 500 : status >= 200 && status < 300, `${status} ${url}`);
  }
  assert.ok(stdout.includes('(current)'), 'the second release is listed as current');
  // The Python and R clients, installed from the server under downloads/, printed their frames' headers.
  assert.is(stdout.match(/^ +region +year +ggr_sum +rows$/gm)?.length, 2, 'a pandas and an R frame of region, year, ggr_sum, rows');

  // The query CLI's walks saved every page: as many rows as the JSON pages hold.
  const releases = (await service.get('/v1/releases')).json.releases.map((r: any) => r.id);
  assert.is(releases.length, 2, 'the walkthrough published a second release');
  const [next, first] = releases;
  const revised = (await walkPages(service, `/v1/revisions?metric=ggr&country=France&from=${first}&to=${next}`, 1000)).flatMap(
    (p) => p.data,
  );
  const revisedCsv = (await fs.readFile(downloads('revised.csv'), 'utf8')).trimEnd().split('\r\n');
  assert.is(revisedCsv.length - 1, revised.length, 'downloads/revised.csv');
  const france = (await walkPages(service, '/v1/financials?metric=ggr&country=France', 1000)).flatMap((p) => p.data);
  const outCsv = (await fs.readFile(downloads('out.csv'), 'utf8')).trimEnd().split('\r\n');
  assert.is(outCsv.length - 1, france.length, 'downloads/out.csv');
  const yen = (await walkPages(service, '/v1/financials?metric=fx&fx_local_currency=JPY', 1000)).flatMap((p) => p.data);
  assert.is(tableFromIPC(await fs.readFile(downloads('fx.arrows'))).numRows, yen.length, 'downloads/fx.arrows');

  // The exports' totals per currency are the aggregate's exact sums.
  const totals = (await service.get('/v1/aggregate?metric=ggr&country=France&group_by=fx,state')).json.data;
  const want = new Map<string, number>();
  for (const g of totals) want.set(g.dimensions.fx, (want.get(g.dimensions.fx) ?? 0) + g.values.ggr_sum);
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    for (const file of ['ggr-france.csv', 'france.parquet']) {
      const source = `'${downloads(file)}'`;
      const rows = (
        await connection.runAndReadAll(
          `SELECT fx, count(*)::INTEGER AS n, sum(ggr::VARCHAR::DECIMAL(38, 2))::DOUBLE AS ggr FROM ${source} GROUP BY fx`,
        )
      ).getRowObjectsJS() as { fx: string; n: number; ggr: number }[];
      assert.is(
        rows.reduce((n, r) => n + r.n, 0),
        france.length,
        `${file}: every row of France`,
      );
      for (const row of rows) assert.is(row.ggr, want.get(row.fx), `${file}: ${row.fx} total`);
    }
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
});

shell.run();
