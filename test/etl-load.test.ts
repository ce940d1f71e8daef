import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { diffReleases } from '../etl/diff.ts';
import { DropRefused, type LoadOptions, loadDrop } from '../etl/load.ts';
import { listReleases, rollback } from '../etl/releases.ts';
import { quoteLiteral } from '../src/duckdb/sql-text.ts';
import { readManifest } from '../src/releases/manifest.ts';
import { readPointer } from '../src/releases/on-disk.ts';
import { startTestService, tempDir, walkPages } from './helpers/service.ts';

// A drop as an analyst's tool might write it: plain DuckDB COPY, columns in another
// order than the registry's, integer widths other than INTEGER, names with commas,
// apostrophes and accents, years outside the sample's 2000–2030.

const ROOT = path.resolve(import.meta.dirname, '..');
const run = promisify(execFile);

const GEO = `(VALUES ('Europe', 'France', ''), ('Africa', 'Côte d''Ivoire', ''), ('Asia - ME', 'Korea, Republic of', ''),
  ('North America', 'United States', 'O''Brien County'), ('North America', 'United States', '')) AS g(region, country, state)`;
const YEARS = '(VALUES (1995), (2035)) AS y(year)';
const TEMPORAL = "(VALUES ('Current'), ('Forecast')) AS t(temporal)";

/** Each dataset's SELECT; every one has 20 rows except the reference. */
const DATASET_SQL: Record<string, string> = {
  country_reference: `SELECT DISTINCT country, 'Tracked' AS country_type, region FROM ${GEO}`,
  ggr: `SELECT (year * 100 + length(country) + length(state) + (temporal = 'Forecast')::INT * 0.5) AS ggr, 'Reported' AS calculation, temporal,
          'USD' AS fx, 'Onshore' AS sub_channel, 'Online' AS channel, 'Sport Betting' AS product, 'Betting' AS category, state, country, region, year::SMALLINT AS year
        FROM ${GEO}, ${YEARS}, ${TEMPORAL}`,
  turnover: `SELECT year::BIGINT AS year, region, country, state, 'Betting' AS category, 'Sport Betting' AS product, 'Online' AS channel, 'Onshore' AS sub_channel,
          'USD' AS fx, temporal, 'Reported' AS calculation, (year * 1000 + length(country))::FLOAT AS turnover
        FROM ${GEO}, ${YEARS}, ${TEMPORAL}`,
  fx: `SELECT fx_current_usd, fx_constant_usd, fx_current_eur, fx_constant_eur, calculation, temporal, fx_local_currency, state, country, region, year::USMALLINT AS year
        FROM (SELECT *, 'XOF' AS fx_local_currency, 'Reported' AS calculation, 600.25 AS fx_current_usd, 601::INTEGER AS fx_constant_usd, 655.957::DECIMAL(9,3) AS fx_current_eur, 656.5 AS fx_constant_eur
              FROM ${GEO}, ${YEARS}, ${TEMPORAL})`,
  country: `SELECT year::INTEGER AS year, region, country, state, temporal, 'Estimated' AS calculation, 1.5e9 AS gdp_local_currency, 2.5e6 AS gdp_usd,
          (1000 + year)::BIGINT AS adult_population, -0.25 AS inflation
        FROM ${GEO}, ${YEARS}, ${TEMPORAL}`,
};

let instance: DuckDBInstance;
let connection: DuckDBConnection;
const created: string[] = [];

async function writeDrop(only = Object.keys(DATASET_SQL)): Promise<string> {
  const dir = await tempDir('dqs-drop-');
  created.push(dir);
  for (const name of only)
    await connection.run(`COPY (${DATASET_SQL[name]}) TO ${quoteLiteral(path.join(dir, `${name}.parquet`))} (FORMAT parquet)`);
  return dir;
}

/** Rewrites one file of a drop through SQL over its current rows (`src`). */
async function rewrite(drop: string, dataset: string, sql: (src: string) => string): Promise<string> {
  const file = path.join(drop, `${dataset}.parquet`);
  const tmp = `${file}.tmp`;
  await connection.run(`COPY (${sql(`read_parquet(${quoteLiteral(file)})`)}) TO ${quoteLiteral(tmp)} (FORMAT parquet)`);
  await fs.rename(tmp, file);
  return file;
}

const options = (drop: string, dataDir: string, release: string, extra: Partial<LoadOptions> = {}): LoadOptions => ({
  drop,
  dataDir,
  release,
  force: false,
  minYear: 1990,
  maxYear: 2100,
  maxRowChange: 0.25,
  ...extra,
});

/** Every file under DATA_DIR with its size and mtime: a refused load must not change one. */
async function snapshot(dataDir: string): Promise<string> {
  const entries = await fs.readdir(dataDir, { recursive: true });
  const lines = await Promise.all(
    entries.sort().map(async (e) => {
      const stat = await fs.stat(path.join(dataDir, e));
      return `${e} ${stat.size} ${stat.mtimeMs}`;
    }),
  );
  return lines.join('\n');
}

const base = { dataDir: '' };

async function setup() {
  instance = await DuckDBInstance.create(':memory:');
  connection = await instance.connect();
  base.dataDir = await tempDir('dqs-data-');
  created.push(base.dataDir);
  await loadDrop(options(await writeDrop(), base.dataDir, '2026-01'));
}
async function teardown() {
  connection.closeSync();
  instance.closeSync();
  await Promise.all(created.splice(0).map((dir) => fs.rm(dir, { recursive: true, force: true })));
}

const load = suite('etl load: a drop from another writer');
load.before(setup);
load.after(teardown);

load('publishes a normalized release and points DATA_DIR at it', async () => {
  assert.is(await readPointer(base.dataDir), '2026-01');
  const manifest = await readManifest(path.join(base.dataDir, '2026-01'));
  assert.is(manifest.synthetic, false);
  assert.ok(manifest.published_at);
  assert.equal(Object.fromEntries(Object.entries(manifest.datasets).map(([k, d]) => [k, d.rows])), {
    ggr: 20,
    turnover: 20,
    fx: 20,
    country: 20,
    country_reference: 4,
  });
  // Registry column order and widths, whatever the drop had.
  const reader = await connection.runAndReadAll(
    `SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet(${quoteLiteral(path.join(base.dataDir, '2026-01', 'ggr.parquet'))}))`,
  );
  assert.equal(
    reader.getRows().map(([n, t]) => `${n}:${t}`),
    [
      'year:INTEGER',
      'region:VARCHAR',
      'country:VARCHAR',
      'state:VARCHAR',
      'category:VARCHAR',
      'product:VARCHAR',
      'channel:VARCHAR',
      'sub_channel:VARCHAR',
      'fx:VARCHAR',
      'temporal:VARCHAR',
      'calculation:VARCHAR',
      'ggr:DOUBLE',
    ],
  );
});

load('the published release is served value for value', async () => {
  const service = await startTestService({ dataDir: base.dataDir });
  try {
    for (const [dataset, kind] of [
      ['ggr', 'financial'],
      ['turnover', 'financial'],
      ['fx', 'financial'],
      ['country', 'financial'],
      ['country_reference', 'reference'],
    ] as const) {
      const expected = (await connection.runAndReadAll(`SELECT * FROM (${DATASET_SQL[dataset]})`)).getRowObjectsJS() as Array<
        Record<string, unknown>
      >;
      const pages = await walkPages(
        service,
        kind === 'financial' ? `/v1/financials?metric=${dataset}` : `/v1/reference?dataset=${dataset}`,
        7,
      );
      const served = pages.flatMap((page) => page.data);
      const flat = served.map((row: any) => (kind === 'financial' ? { ...row.dimensions, ...row.values } : row));
      const canonical = (row: Record<string, unknown>) =>
        JSON.stringify(
          Object.keys(row)
            .sort()
            .map((k) => [k, typeof row[k] === 'bigint' ? Number(row[k]) : typeof row[k] === 'object' ? Number(String(row[k])) : row[k]]),
        );
      assert.equal(flat.map(canonical).sort(), expected.map(canonical).sort(), dataset);
    }
    const filtered = await service.get(
      `/v1/financials?metric=ggr&country=${encodeURIComponent("Côte d'Ivoire")}&year=1995&year=2035&state=${encodeURIComponent("O'Brien County")}`,
    );
    assert.is(filtered.status, 200);
    assert.is(filtered.json.meta.row_count, 0);
    const obrien = await service.get(
      `/v1/financials?metric=ggr&country=${encodeURIComponent('United States')}&state=${encodeURIComponent("O'Brien County")}&year=2035`,
    );
    assert.is(obrien.json.meta.row_count, 2);
    assert.is(obrien.json.data[0].values.ggr, 2035 * 100 + 'United States'.length + "O'Brien County".length);
  } finally {
    await service.stop();
  }
});

load('a drop holding some datasets carries the others over', async () => {
  const dataDir = await tempDir('dqs-data-');
  created.push(dataDir);
  await loadDrop(options(await writeDrop(), dataDir, '2026-01'));
  const drop = await writeDrop(['ggr']);
  await rewrite(drop, 'ggr', (src) => `SELECT * REPLACE (ggr * 2 AS ggr) FROM ${src}`);
  const manifest = await loadDrop(options(drop, dataDir, '2026-02'));
  assert.is(manifest.datasets.ggr!.carried_from, undefined);
  assert.is(manifest.datasets.fx!.carried_from, '2026-01');
  assert.is(manifest.datasets.fx!.sha256, (await readManifest(path.join(dataDir, '2026-01'))).datasets.fx!.sha256);
  assert.is(await readPointer(dataDir), '2026-02');
});

// ---------------------------------------------------------------------------

interface Refusal {
  name: string;
  /** Breaks a copy of the valid drop; returns the file the message must name. */
  breakIt(drop: string): Promise<string>;
  /** What the message must say about it (column, counts, example rows). */
  says: RegExp[];
}

const REFUSALS: Refusal[] = [
  {
    name: 'a missing column',
    breakIt: (d) => rewrite(d, 'ggr', (s) => `SELECT * EXCLUDE (channel) FROM ${s}`),
    says: [/column "channel" is missing/],
  },
  {
    name: 'an extra column',
    breakIt: (d) => rewrite(d, 'fx', (s) => `SELECT *, 'x' AS note FROM ${s}`),
    says: [/column "note" is not part of the fx dataset/],
  },
  {
    name: 'a misnamed column',
    breakIt: (d) => rewrite(d, 'turnover', (s) => `SELECT * EXCLUDE (sub_channel), sub_channel AS subchannel FROM ${s}`),
    says: [/column "sub_channel" is missing.*"subchannel" instead: misnamed\?/, /column "subchannel" is not part of the turnover dataset/],
  },
  {
    name: 'a year that is not an integer',
    breakIt: (d) => rewrite(d, 'country', (s) => `SELECT * REPLACE (year::DOUBLE AS year) FROM ${s}`),
    says: [/column "year" has type DOUBLE; write it as an integer/],
  },
  {
    name: 'a metric that is not numeric',
    breakIt: (d) => rewrite(d, 'ggr', (s) => `SELECT * REPLACE (ggr::VARCHAR AS ggr) FROM ${s}`),
    says: [/column "ggr" has type VARCHAR; write it as a number/],
  },
  {
    name: 'a dimension that is not text',
    breakIt: (d) => rewrite(d, 'turnover', (s) => `SELECT * REPLACE (length(channel) AS channel) FROM ${s}`),
    says: [/column "channel" has type BIGINT; write it as VARCHAR/],
  },
  {
    name: 'nulls in a dimension',
    breakIt: (d) =>
      rewrite(
        d,
        'fx',
        (s) => `SELECT * REPLACE (CASE WHEN row_number() OVER () IN (2, 5) THEN NULL ELSE temporal END AS temporal) FROM ${s}`,
      ),
    says: [/column "temporal" has 2 null values \(rows 2, 5\)/],
  },
  {
    name: 'a NaN metric',
    breakIt: (d) =>
      rewrite(d, 'country', (s) => `SELECT * REPLACE (CASE WHEN year = 2035 THEN 'NaN'::DOUBLE ELSE inflation END AS inflation) FROM ${s}`),
    says: [/column "inflation" has 10 null or non-finite values \(rows \d+, \d+, \d+ and 7 more\)/],
  },
  {
    name: 'an infinite metric',
    breakIt: (d) =>
      rewrite(
        d,
        'ggr',
        (s) =>
          `SELECT * REPLACE (CASE WHEN country = 'France' AND year = 1995 AND temporal = 'Current' THEN 'inf'::DOUBLE ELSE ggr END AS ggr) FROM ${s}`,
      ),
    says: [/column "ggr" has 1 null or non-finite values \(row \d+\)/],
  },
  {
    name: 'two rows with the same dimension values',
    breakIt: (d) =>
      rewrite(
        d,
        'turnover',
        (s) =>
          `SELECT * FROM ${s} UNION ALL (SELECT * REPLACE (turnover + 1 AS turnover) FROM ${s} WHERE country = 'Korea, Republic of' AND year = 1995 AND temporal = 'Forecast')`,
      ),
    says: [
      /1 row repeats the dimension values of another row, in 1 combination \(for example year=1995, region="Asia - ME", country="Korea, Republic of".* at rows \d+, 21\)/,
    ],
  },
  {
    name: 'a country absent from country_reference',
    breakIt: (d) =>
      rewrite(d, 'ggr', (s) => `SELECT * REPLACE (CASE WHEN country = 'France' THEN 'Atlantis' ELSE country END AS country) FROM ${s}`),
    says: [/column "country" has 4 rows whose country is not in country_reference \(for example "Atlantis" in "Europe"; rows/],
  },
  {
    name: 'a region that disagrees with country_reference',
    breakIt: (d) =>
      rewrite(d, 'fx', (s) => `SELECT * REPLACE (CASE WHEN country = 'Côte d''Ivoire' THEN 'Europe' ELSE region END AS region) FROM ${s}`),
    says: [/column "region" has 4 rows whose region disagrees with country_reference \(for example "Côte d'Ivoire" in "Europe"/],
  },
  {
    name: 'a year outside the configured range',
    breakIt: (d) => rewrite(d, 'country', (s) => `SELECT * REPLACE (CASE WHEN year = 1995 THEN 1989 ELSE year END AS year) FROM ${s}`),
    says: [/column "year" has 10 values outside 1990–2100 \(from 1989 to 1989; rows/],
  },
  {
    name: 'an empty file',
    breakIt: (d) => rewrite(d, 'fx', (s) => `SELECT * FROM ${s} WHERE false`),
    says: [/has no rows/, /has 0 rows against 20 in the current release 2026-01/],
  },
  {
    name: 'a corrupt file (truncated)',
    async breakIt(d) {
      const file = path.join(d, 'ggr.parquet');
      const bytes = await fs.readFile(file);
      await fs.writeFile(file, bytes.subarray(0, bytes.length - 40));
      return file;
    },
    says: [/cannot read as Parquet/],
  },
  {
    name: 'a file that is not Parquet',
    async breakIt(d) {
      const file = path.join(d, 'country_reference.parquet');
      await fs.writeFile(file, 'region,country,country_type\nEurope,France,Tracked\n');
      return file;
    },
    says: [/cannot read as Parquet/],
  },
  {
    name: 'a row count that moved more than the allowed share',
    breakIt: (d) => rewrite(d, 'turnover', (s) => `SELECT * FROM ${s} WHERE year = 1995`),
    says: [
      /has 10 rows against 20 in the current release 2026-01 \(50\.0% moved, more than the 25% allowed\); check the export, then pass --force/,
    ],
  },
  {
    name: 'a file named after no dataset',
    async breakIt(d) {
      await fs.copyFile(path.join(d, 'ggr.parquet'), path.join(d, 'gross_gaming_revenue.parquet'));
      return path.join(d, 'gross_gaming_revenue.parquet');
    },
    says: [/is not a dataset file/],
  },
];

const refused = suite('etl load: refused drops change nothing');
refused.before(setup);
for (const c of REFUSALS) {
  refused(`refuses ${c.name}, naming the file and what to fix`, async () => {
    const drop = await writeDrop();
    const file = await c.breakIt(drop);
    const before = await snapshot(base.dataDir);
    const error = await loadDrop(options(drop, base.dataDir, '2026-02')).then(
      () => undefined,
      (err: unknown) => err,
    );
    assert.instance(error, DropRefused);
    const problems = (error as DropRefused).problems.map((p) => `${p.file}: ${p.message}`);
    for (const says of c.says)
      assert.ok(
        problems.some((p) => p.startsWith(`${file}: `) && says.test(p)),
        `no problem on ${file} matching ${says}:\n${problems.join('\n')}`,
      );
    assert.is(await snapshot(base.dataDir), before, 'DATA_DIR changed');
  });
}

refused('reports every problem of every file at once', async () => {
  const drop = await writeDrop();
  await REFUSALS[0]!.breakIt(drop);
  await REFUSALS[7]!.breakIt(drop);
  await REFUSALS[11]!.breakIt(drop);
  const error = (await loadDrop(options(drop, base.dataDir, '2026-02')).catch((err: unknown) => err)) as DropRefused;
  assert.is(error.problems.length, 3, error.message);
});

refused('a NaN in a file does not hide its duplicates or unknown countries', async () => {
  const drop = await writeDrop();
  const file = await rewrite(
    drop,
    'ggr',
    (s) =>
      `SELECT * REPLACE (CASE WHEN country = 'France' THEN 'Atlantis' ELSE country END AS country, 'NaN'::DOUBLE AS ggr) FROM ${s} UNION ALL (SELECT * FROM ${s} WHERE country = 'Korea, Republic of' LIMIT 1)`,
  );
  const error = (await loadDrop(options(drop, base.dataDir, '2026-02')).catch((err: unknown) => err)) as DropRefused;
  const messages = error.problems.filter((p) => p.file === file).map((p) => p.message);
  assert.is(messages.length, 3, messages.join('\n'));
  assert.match(messages.join('\n'), /null or non-finite[\s\S]*repeats the dimension values[\s\S]*not in country_reference/);
});

refused('--force publishes a drop whose row count moved', async () => {
  const dataDir = await tempDir('dqs-data-');
  created.push(dataDir);
  await loadDrop(options(await writeDrop(), dataDir, '2026-01'));
  const drop = await writeDrop(['turnover']);
  await REFUSALS.find((r) => r.name.startsWith('a row count'))!.breakIt(drop);
  await loadDrop(options(drop, dataDir, '2026-02', { force: true }));
  assert.is((await readManifest(path.join(dataDir, '2026-02'))).datasets.turnover!.rows, 10);
});

refused('the CLI exits non-zero with the problems on stderr', async () => {
  const drop = await writeDrop();
  await REFUSALS[0]!.breakIt(drop);
  const before = await snapshot(base.dataDir);
  const result = await run('node', ['--import', 'tsx', 'etl/cli.ts', 'load', drop, '--release', '2026-03', '--data-dir', base.dataDir], {
    cwd: ROOT,
  }).then(
    () => ({ code: 0, stderr: '' }),
    (err: { code: number; stderr: string }) => err,
  );
  assert.is(result.code, 2);
  assert.match(result.stderr, /refused: 1 problem; nothing was published/);
  assert.match(result.stderr, /ggr\.parquet: column "channel" is missing/);
  assert.is(await snapshot(base.dataDir), before);
});
refused.after(teardown);

// ---------------------------------------------------------------------------

const manage = suite('etl list, rollback and diff');
manage.before(setup);
manage.after(teardown);

manage('diff counts known added, removed and changed rows and lists the largest changes', async () => {
  const dataDir = await tempDir('dqs-data-');
  created.push(dataDir);
  await loadDrop(options(await writeDrop(), dataDir, '2026-01'));
  const drop = await writeDrop(['ggr']);
  // 1 row removed (France 1995 Current), 1 added (the same as 2001), 2 changed (+1000 and -5 on Korea 2035).
  await rewrite(
    drop,
    'ggr',
    (s) => `
    SELECT * REPLACE (CASE WHEN country = 'Korea, Republic of' AND year = 2035 THEN ggr + (CASE WHEN temporal = 'Current' THEN 1000 ELSE -5 END) ELSE ggr END AS ggr)
    FROM ${s} WHERE NOT (country = 'France' AND year = 1995 AND temporal = 'Current')
    UNION ALL SELECT * REPLACE (2001::SMALLINT AS year) FROM ${s} WHERE country = 'France' AND year = 1995 AND temporal = 'Current'`,
  );
  await loadDrop(options(drop, dataDir, '2026-02'));
  const open = async (id: string) => ({ dir: path.join(dataDir, id), manifest: await readManifest(path.join(dataDir, id)) });
  const diff = await diffReleases(await open('2026-01'), await open('2026-02'), 2);
  const ggr = diff.datasets.ggr!;
  assert.equal(
    { rows_a: ggr.rows_a, rows_b: ggr.rows_b, added: ggr.added, removed: ggr.removed, changed: ggr.changed },
    { rows_a: 20, rows_b: 20, added: 1, removed: 1, changed: 2 },
  );
  assert.equal(
    ggr.largest_changes.map((c) => [c.key.country, c.key.temporal, c.change]),
    [
      ['Korea, Republic of', 'Current', 1000],
      ['Korea, Republic of', 'Forecast', -5],
    ],
  );
  for (const name of ['turnover', 'fx', 'country', 'country_reference']) {
    const d = diff.datasets[name]!;
    assert.equal([d.added, d.removed, d.changed], [0, 0, 0], name);
  }
  const cli = await run('node', ['--import', 'tsx', 'etl/cli.ts', 'diff', '2026-01', '2026-02', '--json', '--data-dir', dataDir], {
    cwd: ROOT,
  });
  assert.equal(JSON.parse(cli.stdout).datasets.ggr.changed, 2);
});

manage('list marks the current release; rollback moves the pointer back and forward', async () => {
  const dataDir = await tempDir('dqs-data-');
  created.push(dataDir);
  await loadDrop(options(await writeDrop(), dataDir, '2026-01'));
  await loadDrop(options(await writeDrop(['ggr']), dataDir, '2026-02'));
  assert.equal(
    (await listReleases(dataDir)).map((r) => [r.manifest.release, r.current]),
    [
      ['2026-01', false],
      ['2026-02', true],
    ],
  );
  assert.equal(await rollback(dataDir), ['2026-02', '2026-01']);
  assert.is(await readPointer(dataDir), '2026-01');
  assert.equal(
    (await listReleases(dataDir)).map((r) => r.current),
    [true, false],
  );
  assert.equal(await rollback(dataDir, '2026-02'), ['2026-01', '2026-02']);
  const error = await rollback(dataDir, '2025-12').catch((err: Error) => err);
  assert.match((error as Error).message, /no such release/);
  assert.is(await readPointer(dataDir), '2026-02');
});

manage('rollback refuses a release whose files changed after publishing', async () => {
  const dataDir = await tempDir('dqs-data-');
  created.push(dataDir);
  await loadDrop(options(await writeDrop(), dataDir, '2026-01'));
  await loadDrop(options(await writeDrop(['ggr']), dataDir, '2026-02'));
  await fs.appendFile(path.join(dataDir, '2026-01', 'fx.parquet'), 'x');
  const error = await rollback(dataDir).catch((err: Error) => err);
  assert.match((error as Error).message, /fx\.parquet: SHA-256/);
  assert.is(await readPointer(dataDir), '2026-02');
});

load.run();
refused.run();
manage.run();
