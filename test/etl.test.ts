import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { generateRelease, MAX_SCALE } from '../etl/generate.ts';
import { CANADIAN_PROVINCES, REGIONS, US_STATES } from '../etl/geo-data.ts';
import { quoteIdent, quoteLiteral } from '../src/duckdb/sql-text.ts';
import { DATASETS, INTEGER_DIMENSIONS } from '../src/registry.ts';
import { MANIFEST_FILE, type Manifest, sha256File } from '../src/releases/manifest.ts';
import { tempDir } from './helpers/service.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const RELEASE = '2026-11';
const DATA_YEAR = 2026;
const SEED = 3;
const SCALE = 0.01;

const INTEGER_TYPES = new Set(['TINYINT', 'SMALLINT', 'INTEGER', 'BIGINT', 'UTINYINT', 'USMALLINT', 'UINTEGER', 'UBIGINT', 'HUGEINT']);

/** Category → products, as the generator's PRODUCTS table defines them. */
const PRODUCTS: Record<string, readonly string[]> = {
  Betting: ['Sport Betting', 'Horse Racing', 'Greyhound Racing', 'Other Betting'],
  Gaming: ['Casino Slots', 'Casino Tables', 'Poker', 'Bingo', 'Gaming Machines', 'Skill Games'],
  Lottery: ['Draw Based', 'Instants', 'Numbers', 'Keno'],
};

const sorted = <T>(values: Iterable<T>) => [...values].sort();

/**
 * Content digests of every dataset's rows, in file order, as the generator at main wrote them for
 * SEED before scales above 1 existed (computed with that code and pinned): the sample that README
 * examples and comparisons rely on must not move.
 */
const MAIN_DIGESTS = {
  [SCALE]: '58b7acc313edb0f71247eb76e8e47eac962a53f33bcdc03f5252bce2bbf3d62e',
  1: 'e0a3d12b4243e43ca2a1fa7371a69ade066dac8afe7ebd6aa234a0f07851866f',
};
const PROVINCE = "state LIKE '% Province ___'";

/** sha256 over each dataset's name and rows as JSON lines, in file order; `withoutProvinces` skips the rows added above scale 1. */
async function rowsDigest(connection: DuckDBConnection, dir: string, withoutProvinces = false): Promise<string> {
  const hash = crypto.createHash('sha256');
  for (const def of DATASETS) {
    const where = withoutProvinces && def.dimensions.includes('state') ? `WHERE NOT (${PROVINCE})` : '';
    const result = await connection.stream(`SELECT * FROM read_parquet(${quoteLiteral(path.join(dir, `${def.name}.parquet`))}) ${where}`);
    hash.update(`${def.name}\n`);
    for await (const rows of result.yieldRowsJs()) for (const row of rows) hash.update(`${JSON.stringify(row)}\n`);
  }
  return hash.digest('hex');
}

// ---------------------------------------------------------------------------
// Shared state: one release generated once, read through an in-memory DuckDB.

const state = {
  root: '',
  dir: '',
  manifest: undefined as Manifest | undefined,
  instance: undefined as DuckDBInstance | undefined,
  connection: undefined as DuckDBConnection | undefined,
};

const file = (dataset: string) => quoteLiteral(path.join(state.dir, `${dataset}.parquet`));
const src = (dataset: string) => `read_parquet(${file(dataset)})`;

async function rows(sql: string): Promise<Record<string, unknown>[]> {
  const reader = await state.connection!.runAndReadAll(sql);
  return reader.getRowObjectsJS() as Record<string, unknown>[];
}
async function scalar(sql: string): Promise<unknown> {
  const [row] = await rows(sql);
  assert.ok(row, `no row from: ${sql}`);
  return Object.values(row)[0];
}
const count = async (sql: string) => Number(await scalar(sql));
async function distinct(dataset: string, column: string): Promise<string[]> {
  return (await rows(`SELECT DISTINCT "${column}" AS v FROM ${src(dataset)} ORDER BY 1`)).map((r) => String(r.v));
}

async function setup() {
  state.root = await tempDir('dqs-etl-');
  state.dir = path.join(state.root, RELEASE);
  state.manifest = await generateRelease({ out: state.dir, seed: SEED, scale: SCALE, release: RELEASE });
  state.instance = await DuckDBInstance.create(':memory:');
  state.connection = await state.instance.connect();
}
async function teardown() {
  state.connection?.closeSync();
  state.instance?.closeSync();
  if (state.root) await fs.rm(state.root, { recursive: true, force: true });
}

// ---------------------------------------------------------------------------

const files = suite('etl: generated release files');
files.before(setup);
files.after(teardown);

files('writes one Parquet file per registered dataset plus manifest.json, and nothing else', async () => {
  const entries = sorted(await fs.readdir(state.dir));
  const expected = sorted([MANIFEST_FILE, 'ggr.parquet', 'turnover.parquet', 'fx.parquet', 'country.parquet', 'country_reference.parquet']);
  assert.equal(entries, expected);
  // No leftover work folder beside the release.
  assert.equal(await fs.readdir(state.root), [RELEASE]);
});

files('manifest.json on disk equals the returned manifest and names the release', async () => {
  const onDisk = JSON.parse(await fs.readFile(path.join(state.dir, MANIFEST_FILE), 'utf8'));
  assert.equal(onDisk, state.manifest);
  assert.is(onDisk.release, RELEASE);
  assert.ok(!Number.isNaN(Date.parse(onDisk.created_at)), `created_at ${onDisk.created_at} is not a timestamp`);
  assert.equal(sorted(Object.keys(onDisk.datasets)), sorted(DATASETS.map((d) => d.name)));
});

files('manifest row counts match count(*) of each file and checksums match sha256File', async () => {
  for (const def of DATASETS) {
    const entry = state.manifest!.datasets[def.name];
    assert.ok(entry, `manifest lacks ${def.name}`);
    assert.is(entry.file, `${def.name}.parquet`);
    const actual = await count(`SELECT count(*) FROM ${src(def.name)}`);
    assert.is(entry.rows, actual, `${def.name}: manifest rows ${entry.rows}, file has ${actual}`);
    assert.ok(actual > 0, `${def.name} is empty`);
    assert.is(await sha256File(path.join(state.dir, entry.file)), entry.sha256, `${def.name}: sha256 mismatch`);
  }
  // ggr and turnover hold the same row keys; scale only thins them, not fx/country/reference.
  assert.is(state.manifest!.datasets.ggr!.rows, state.manifest!.datasets.turnover!.rows);
  assert.is(state.manifest!.datasets.fx!.rows, state.manifest!.datasets.country!.rows);
});

files('each file has exactly the registry columns, dimensions then metrics, with the right types', async () => {
  for (const def of DATASETS) {
    const described = await rows(`SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM ${src(def.name)})`);
    const names = described.map((r) => String(r.column_name));
    assert.equal(names, [...def.dimensions, ...def.metrics], `${def.name} columns`);
    for (const r of described) {
      const column = String(r.column_name);
      const type = String(r.column_type);
      if (INTEGER_DIMENSIONS.has(column)) assert.ok(INTEGER_TYPES.has(type), `${def.name}.${column} is ${type}, expected an integer type`);
      else if (def.dimensions.includes(column)) assert.is(type, 'VARCHAR', `${def.name}.${column}`);
      else assert.is(type, 'DOUBLE', `${def.name}.${column}`);
    }
  }
  assert.equal(DATASETS.find((d) => d.name === 'country_reference')!.dimensions, ['region', 'country', 'country_type']);
});

files(`scale ${SCALE} writes exactly the rows the generator at main wrote for the same seed`, async () => {
  assert.is(await rowsDigest(state.connection!, state.dir), MAIN_DIGESTS[SCALE]);
});

files('no NULL in any column and every metric is finite', async () => {
  for (const def of DATASETS) {
    for (const column of [...def.dimensions, ...def.metrics]) {
      const predicate = def.metrics.includes(column) ? `"${column}" IS NULL OR NOT isfinite("${column}")` : `"${column}" IS NULL`;
      assert.is(await count(`SELECT count(*) FROM ${src(def.name)} WHERE ${predicate}`), 0, `${def.name}.${column} has nulls`);
    }
  }
});

files.run();

// ---------------------------------------------------------------------------

const realism = suite('etl: generated data is plausible');
realism.before(setup);
realism.after(teardown);

realism('country_reference: ~200 distinct countries, two country types, six regions', async () => {
  const countries = await count(`SELECT count(DISTINCT country) FROM ${src('country_reference')}`);
  assert.ok(countries >= 180 && countries <= 220, `expected ~200 countries, got ${countries}`);
  assert.is(countries, state.manifest!.datasets.country_reference!.rows, 'one row per country');
  assert.equal(await distinct('country_reference', 'country_type'), ['Amalgamated', 'Tracked']);
  const regions = await distinct('country_reference', 'region');
  for (const region of ['Europe', 'Asia - ME', 'Africa', 'North America', 'Latin America', 'Oceania']) {
    assert.ok(regions.includes(region), `region ${region} missing from ${regions.join(', ')}`);
  }
  assert.equal(regions, sorted(REGIONS));
  for (const country of ['United States', 'United Kingdom', 'Germany', 'Japan', 'Brazil', 'Australia', 'South Africa', 'Canada']) {
    assert.is(await count(`SELECT count(*) FROM ${src('country_reference')} WHERE country = ${quoteLiteral(country)}`), 1, country);
  }
});

realism('every country in the data sets is in country_reference, with the same region', async () => {
  for (const dataset of ['ggr', 'turnover', 'fx', 'country']) {
    const orphans = await rows(`
      SELECT DISTINCT d.country, d.region FROM ${src(dataset)} d
      ANTI JOIN ${src('country_reference')} r ON r.country = d.country AND r.region = d.region
      LIMIT 5`);
    assert.equal(orphans, [], `${dataset}: countries/regions not in country_reference`);
  }
});

realism('state is empty outside the United States and Canada, and a real state or province inside them', async () => {
  for (const dataset of ['ggr', 'turnover', 'fx', 'country']) {
    assert.is(
      await count(`SELECT count(*) FROM ${src(dataset)} WHERE country NOT IN ('United States', 'Canada') AND state <> ''`),
      0,
      `${dataset}: non-empty state outside US/Canada`,
    );
    const us = (await rows(`SELECT DISTINCT state FROM ${src(dataset)} WHERE country = 'United States' AND state <> ''`)).map((r) =>
      String(r.state),
    );
    assert.ok(us.length > 0, `${dataset}: no United States row has a state`);
    for (const s of us) assert.ok(US_STATES.includes(s), `${dataset}: "${s}" is not a US state`);
    const ca = (await rows(`SELECT DISTINCT state FROM ${src(dataset)} WHERE country = 'Canada' AND state <> ''`)).map((r) =>
      String(r.state),
    );
    for (const s of ca) assert.ok(CANADIAN_PROVINCES.includes(s), `${dataset}: "${s}" is not a Canadian province`);
    // The national row exists alongside the states.
    assert.ok(
      (await count(`SELECT count(*) FROM ${src(dataset)} WHERE country = 'United States' AND state = ''`)) > 0,
      `${dataset}: no national US row`,
    );
  }
  // fx and country are not thinned by scale, so every state is there.
  for (const dataset of ['fx', 'country']) {
    assert.ok(
      (await count(`SELECT count(*) FROM ${src(dataset)} WHERE country = 'United States' AND state = 'Nevada'`)) > 0,
      `${dataset}: no Nevada`,
    );
    assert.is(
      await count(`SELECT count(DISTINCT state) FROM ${src(dataset)} WHERE country = 'United States' AND state <> ''`),
      US_STATES.length,
    );
  }
});

realism('categories are Betting, Gaming, Lottery and every product sits under its own category only', async () => {
  for (const dataset of ['ggr', 'turnover']) {
    assert.equal(await distinct(dataset, 'category'), ['Betting', 'Gaming', 'Lottery']);
    const pairs = await rows(`SELECT DISTINCT category, product FROM ${src(dataset)} ORDER BY 1, 2`);
    const actual = pairs.map((r) => `${String(r.category)}/${String(r.product)}`);
    const expected = Object.entries(PRODUCTS)
      .flatMap(([c, ps]) => ps.map((p) => `${c}/${p}`))
      .sort();
    assert.equal(actual, expected, `${dataset}: category/product pairs`);
  }
  const spot: Array<[string, string]> = [
    ['Sport Betting', 'Betting'],
    ['Casino Slots', 'Gaming'],
    ['Draw Based', 'Lottery'],
  ];
  for (const [product, category] of spot) {
    assert.equal(
      (await rows(`SELECT DISTINCT category FROM ${src('ggr')} WHERE product = ${quoteLiteral(product)}`)).map((r) => r.category),
      [category],
      product,
    );
  }
});

realism('channels are Online/Land, sub-channels Onshore/Offshore, and Land is never Offshore', async () => {
  for (const dataset of ['ggr', 'turnover']) {
    assert.equal(await distinct(dataset, 'channel'), ['Land', 'Online']);
    assert.equal(await distinct(dataset, 'sub_channel'), ['Offshore', 'Onshore']);
    assert.is(await count(`SELECT count(*) FROM ${src(dataset)} WHERE channel = 'Land' AND sub_channel = 'Offshore'`), 0);
    const combos = (await rows(`SELECT DISTINCT channel || '/' || sub_channel AS c FROM ${src(dataset)} ORDER BY 1`)).map((r) => r.c);
    assert.equal(combos, ['Land/Onshore', 'Online/Offshore', 'Online/Onshore']);
  }
});

realism('ggr is reported in USD, EUR and local currencies', async () => {
  const fx = await distinct('ggr', 'fx');
  for (const code of ['USD', 'EUR', 'GBP', 'JPY']) assert.ok(fx.includes(code), `fx ${code} missing`);
  assert.ok(fx.length > 20, `only ${fx.length} currencies`);
  for (const code of fx) assert.match(code, /^[A-Z]{3}$/);
  // Every currency row of a country is USD, EUR or that country's own currency (as fx.parquet states it).
  const foreign = await rows(`
    SELECT DISTINCT g.country, g.fx FROM ${src('ggr')} g
    JOIN (SELECT DISTINCT country, fx_local_currency FROM ${src('fx')}) l USING (country)
    WHERE g.fx NOT IN ('USD', 'EUR', l.fx_local_currency) LIMIT 5`);
  assert.equal(foreign, []);
});

realism('years span 2000..2030 in every yearly dataset', async () => {
  for (const dataset of ['ggr', 'turnover', 'fx', 'country']) {
    const [r] = await rows(`SELECT min(year) AS lo, max(year) AS hi, count(DISTINCT year) AS n FROM ${src(dataset)}`);
    assert.equal([Number(r!.lo), Number(r!.hi), Number(r!.n)], [2000, 2030, 31], dataset);
  }
});

realism('temporal is Current up to the release year and Forecast after; calculation is Reported/Calculated/Estimated', async () => {
  for (const dataset of ['ggr', 'turnover', 'fx', 'country']) {
    assert.equal(await distinct(dataset, 'temporal'), ['Current', 'Forecast'], dataset);
    const wrong = await count(`SELECT count(*) FROM ${src(dataset)}
      WHERE (year <= ${DATA_YEAR} AND temporal <> 'Current') OR (year > ${DATA_YEAR} AND temporal <> 'Forecast')`);
    assert.is(wrong, 0, `${dataset}: rows whose temporal disagrees with year vs ${DATA_YEAR}`);
    for (const c of await distinct(dataset, 'calculation')) {
      assert.ok(['Reported', 'Calculated', 'Estimated'].includes(c), `${dataset}: calculation "${c}"`);
    }
    // Forecast years are never Reported.
    assert.is(await count(`SELECT count(*) FROM ${src(dataset)} WHERE temporal = 'Forecast' AND calculation = 'Reported'`), 0, dataset);
  }
});

realism('ggr is positive and turnover >= ggr for every row key', async () => {
  assert.is(await count(`SELECT count(*) FROM ${src('ggr')} WHERE NOT (ggr > 0)`), 0, 'non-positive ggr');
  assert.is(await count(`SELECT count(*) FROM ${src('turnover')} WHERE NOT (turnover > 0)`), 0, 'non-positive turnover');
  const keys = DATASETS.find((d) => d.name === 'ggr')!
    .dimensions.map((d) => `"${d}"`)
    .join(', ');
  const duplicates = await count(`SELECT count(*) FROM (SELECT ${keys} FROM ${src('ggr')} GROUP BY ALL HAVING count(*) > 1)`);
  assert.is(duplicates, 0, 'ggr row keys are not unique');
  const [r] = await rows(`
    SELECT count(*) AS joined, count(*) FILTER (WHERE t.turnover < g.ggr) AS below
    FROM ${src('ggr')} g JOIN ${src('turnover')} t USING (${keys})`);
  assert.is(Number(r!.joined), state.manifest!.datasets.ggr!.rows, 'every ggr row has a turnover row with the same key');
  assert.is(Number(r!.below), 0, 'rows with turnover < ggr');
});

realism.run();

// ---------------------------------------------------------------------------

const GROWN_SCALE = 1.05;
const SCALE_1_ROWS = 938_742;
const grown = suite(`etl: scale ${GROWN_SCALE} adds provinces and keeps every scale-1 row`);
grown.before(async () => {
  state.root = await tempDir('dqs-etl-grown-');
  state.dir = path.join(state.root, RELEASE);
  state.manifest = await generateRelease({ out: state.dir, seed: SEED, scale: GROWN_SCALE, release: RELEASE });
  state.instance = await DuckDBInstance.create(':memory:');
  state.connection = await state.instance.connect();
});
grown.after(teardown);

grown('about scale times the scale-1 market rows; fx and country grow with the markets; the reference stays whole', async () => {
  const { datasets } = state.manifest!;
  const ratio = datasets.ggr!.rows / SCALE_1_ROWS;
  assert.ok(Math.abs(ratio - GROWN_SCALE) < 0.01, `ggr has ${datasets.ggr!.rows} rows, ${ratio.toFixed(3)} times scale 1`);
  assert.is(datasets.turnover!.rows, datasets.ggr!.rows);
  assert.ok(datasets.fx!.rows > 8_339, `fx has ${datasets.fx!.rows} rows`);
  assert.is(datasets.country!.rows, datasets.fx!.rows);
  assert.is(datasets.country_reference!.rows, 205);
});

grown('without the added provinces, every dataset holds exactly the scale-1 rows of main, in the same order', async () => {
  assert.is(await rowsDigest(state.connection!, state.dir, true), MAIN_DIGESTS[1]);
});

grown('rows stay unique, and the added markets are provinces of tracked countries without states', async () => {
  for (const def of DATASETS.filter((d) => d.kind === 'financial')) {
    const keys = def.dimensions.map(quoteIdent).join(', ');
    assert.is(
      await count(`SELECT count(*) FROM (SELECT ${keys} FROM ${src(def.name)} GROUP BY ALL HAVING count(*) > 1)`),
      0,
      `${def.name}: duplicate keys`,
    );
  }
  const provinces = await rows(`
    SELECT DISTINCT d.country, d.state, r.country_type FROM ${src('ggr')} d JOIN ${src('country_reference')} r USING (country, region)
    WHERE ${PROVINCE} ORDER BY ALL`);
  assert.ok(provinces.length >= 5, `only ${provinces.length} provinces`);
  for (const p of provinces) {
    assert.match(String(p.state), new RegExp(`^${String(p.country)} Province \\d{3}$`));
    assert.is(p.country_type, 'Tracked', String(p.state));
    assert.not.ok(['United States', 'Canada'].includes(String(p.country)), String(p.state));
  }
  // Provinces are states of countries already in country_reference, with the same region.
  for (const dataset of ['ggr', 'turnover', 'fx', 'country']) {
    const orphans = await rows(`SELECT DISTINCT d.country, d.region FROM ${src(dataset)} d
      ANTI JOIN ${src('country_reference')} r ON r.country = d.country AND r.region = d.region`);
    assert.equal(orphans, [], `${dataset}: countries/regions not in country_reference`);
  }
  // Every market is in every yearly dataset, and provinces are Calculated history like US states.
  for (const dataset of ['turnover', 'fx', 'country']) {
    const geo = (name: string) => `SELECT DISTINCT country, region, state FROM ${src(name)}`;
    assert.is(await count(`SELECT count(*) FROM ((${geo('ggr')}) EXCEPT (${geo(dataset)}))`), 0, `${dataset} lacks ggr markets`);
    assert.is(await count(`SELECT count(*) FROM ((${geo(dataset)}) EXCEPT (${geo('ggr')}))`), 0, `${dataset} has markets ggr lacks`);
  }
  assert.equal(
    await rows(`SELECT DISTINCT calculation FROM ${src('country')} WHERE ${PROVINCE} AND temporal = 'Current' AND year < ${DATA_YEAR}`),
    [{ calculation: 'Calculated' }],
  );
});

grown.run();

// ---------------------------------------------------------------------------

const determinism = suite('etl: determinism');
let detRoot = '';
determinism.before(async () => {
  detRoot = await tempDir('dqs-etl-det-');
});
determinism.after(async () => {
  if (detRoot) await fs.rm(detRoot, { recursive: true, force: true });
});

determinism('the same seed and scale give byte-identical files; another seed gives different data', async () => {
  const generate = (name: string, seed: number) => generateRelease({ out: path.join(detRoot, name), seed, scale: SCALE, release: RELEASE });
  const a = await generate('a', SEED);
  const b = await generate('b', SEED);
  await generate('c', SEED + 1);
  const ggr = (name: string) => sha256File(path.join(detRoot, name, 'ggr.parquet'));
  assert.is(await ggr('a'), await ggr('b'), 'same seed: ggr.parquet differs');
  for (const def of DATASETS) {
    assert.equal(a.datasets[def.name], b.datasets[def.name], `same seed: ${def.name} entry differs`);
  }
  assert.is.not(await ggr('a'), await ggr('c'), 'different seed: ggr.parquet identical');

  // Different bytes are not enough: the values themselves differ.
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    const sum = async (name: string) => {
      const reader = await connection.runAndReadAll(
        `SELECT sum(ggr) FROM read_parquet(${quoteLiteral(path.join(detRoot, name, 'ggr.parquet'))})`,
      );
      return Number(reader.getRows()[0]![0]);
    };
    assert.is(await sum('a'), await sum('b'));
    assert.is.not(await sum('a'), await sum('c'));
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
});

determinism('generateRelease rejects a bad scale or release id before writing anything', async () => {
  const cases: Array<{ scale: number; release: string; message: RegExp }> = [
    { scale: 0, release: RELEASE, message: /--scale/ },
    { scale: MAX_SCALE + 0.5, release: RELEASE, message: /--scale/ },
    { scale: Number.POSITIVE_INFINITY, release: RELEASE, message: /--scale/ },
    { scale: Number.NaN, release: RELEASE, message: /--scale/ },
    { scale: 0.01, release: '2026-13', message: /--release/ },
    { scale: 0.01, release: 'latest', message: /--release/ },
  ];
  for (const c of cases) {
    const out = path.join(detRoot, `bad-${c.release}-${c.scale}`);
    try {
      await generateRelease({ out, seed: 1, scale: c.scale, release: c.release });
      assert.unreachable(`scale ${c.scale} release ${c.release} was accepted`);
    } catch (err) {
      assert.instance(err, Error);
      assert.match((err as Error).message, c.message);
    }
    assert.not.ok(
      await fs.stat(out).then(
        () => true,
        () => false,
      ),
      `${out} was created`,
    );
  }
});

determinism.run();

// ---------------------------------------------------------------------------

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

function runCli(args: string[]): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    execFile(
      'npx',
      ['tsx', 'etl/cli.ts', ...args],
      { cwd: ROOT, timeout: 60_000, env: { ...process.env, NO_COLOR: '1' } },
      (err, stdout, stderr) => {
        if (err && typeof err.code !== 'number') {
          reject(new Error(`etl ${args.join(' ')}: ${err.message}\n${stderr}`));
          return;
        }
        resolve({ code: err ? (err.code as number) : 0, stdout, stderr });
      },
    );
  });
}

const cli = suite('etl: CLI');
let cliRoot = '';
cli.before(async () => {
  cliRoot = await tempDir('dqs-etl-cli-');
});
cli.after(async () => {
  if (cliRoot) await fs.rm(cliRoot, { recursive: true, force: true });
});

cli('generate writes a release named after its folder and prints a line per dataset', async () => {
  const out = path.join(cliRoot, '2026-05');
  const result = await runCli(['generate', '--out', out, '--seed', '2', '--scale', '0.01']);
  assert.is(result.code, 0, `exit ${result.code}: ${result.stderr}`);
  const manifest = JSON.parse(await fs.readFile(path.join(out, MANIFEST_FILE), 'utf8')) as Manifest;
  assert.is(manifest.release, '2026-05');
  for (const def of DATASETS) {
    const entry = manifest.datasets[def.name];
    assert.ok(entry, `manifest lacks ${def.name}`);
    assert.is(await sha256File(path.join(out, entry.file)), entry.sha256);
    const line = new RegExp(`^${def.name}\\s+${entry.rows} rows\\s+${entry.file.replaceAll('.', '\\.')}$`, 'm');
    assert.match(result.stdout, line, `no stdout line for ${def.name}:\n${result.stdout}`);
  }
  assert.ok(result.stdout.includes(out), 'stdout names the output folder');
  assert.match(result.stderr, /ggr\+turnover .*\d+\/\d+ rows/, 'no progress on stderr');
  assert.match(result.stderr, /writing \d+ rows to ggr\.parquet and turnover\.parquet/, 'the final write is not announced');
  assert.equal(sorted(await fs.readdir(cliRoot)), ['2026-05']);
});

cli('invalid --scale and --seed exit non-zero naming the option', async () => {
  const cases: Array<{ args: string[]; option: string }> = [
    { args: ['--scale', '0'], option: '--scale' },
    { args: ['--scale', String(MAX_SCALE + 1)], option: '--scale' },
    { args: ['--scale', 'half'], option: '--scale' },
    { args: ['--seed', 'abc'], option: '--seed' },
    { args: ['--seed', '-1'], option: '--seed' },
  ];
  for (const c of cases) {
    const out = path.join(cliRoot, 'bad', '2026-07');
    const result = await runCli(['generate', '--out', out, ...c.args]);
    assert.is.not(result.code, 0, `${c.args.join(' ')} exited 0`);
    assert.ok(result.stderr.includes(c.option), `${c.args.join(' ')}: stderr does not name ${c.option}: ${result.stderr}`);
    assert.not.ok(
      await fs.stat(out).then(
        () => true,
        () => false,
      ),
      `${c.args.join(' ')}: ${out} was created`,
    );
  }
});

cli('generating into a non-empty folder fails, names the folder and leaves it untouched', async () => {
  const out = path.join(cliRoot, '2026-06');
  await fs.mkdir(out);
  await fs.writeFile(path.join(out, 'keep.txt'), 'precious\n');
  const before = sorted(await fs.readdir(cliRoot));
  const result = await runCli(['generate', '--out', out, '--seed', '2', '--scale', '0.01']);
  assert.is.not(result.code, 0);
  assert.ok(result.stderr.includes(out), `stderr does not name ${out}: ${result.stderr}`);
  assert.equal(await fs.readdir(out), ['keep.txt']);
  assert.is(await fs.readFile(path.join(out, 'keep.txt'), 'utf8'), 'precious\n');
  assert.equal(sorted(await fs.readdir(cliRoot)), before, 'a work folder was left beside the target');
});

cli('generating onto an existing file fails, names it and leaves it untouched', async () => {
  const out = path.join(cliRoot, '2026-08');
  await fs.writeFile(out, 'precious\n');
  const before = sorted(await fs.readdir(cliRoot));
  const result = await runCli(['generate', '--out', out, '--seed', '2', '--scale', '0.01']);
  assert.is.not(result.code, 0);
  assert.ok(result.stderr.includes(`${out} already exists and is not a folder`), `stderr: ${result.stderr}`);
  assert.is(await fs.readFile(out, 'utf8'), 'precious\n');
  assert.equal(sorted(await fs.readdir(cliRoot)), before, 'a work folder was left beside the target');
});

cli.run();
