import fs from 'node:fs/promises';
import path from 'node:path';
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import pino from 'pino';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Database } from '../src/duckdb/database.ts';
import { quoteLiteral } from '../src/duckdb/sql-text.ts';
import { DATASETS } from '../src/registry.ts';
import { loadRelease } from '../src/releases/load-release.ts';
import { MANIFEST_FILE, type Manifest, sha256File } from '../src/releases/manifest.ts';
import { latestRelease } from '../src/releases/on-disk.ts';
import { DatasetError } from '../src/store/dataset-error.ts';
import { FIXTURE_RELEASE, fixtureDataDir, send, startTestService, type TestService, tempDir } from './helpers/service.ts';

// The loader refuses a release it cannot serve, and says which file, which field and what to do.

const exists = (p: string) =>
  fs.stat(p).then(
    () => true,
    () => false,
  );

const created: string[] = [];
async function scratch(prefix: string): Promise<string> {
  const dir = await tempDir(prefix);
  created.push(dir);
  return dir;
}

/** A fresh DATA_DIR holding a copy of the fixture release under `id` (manifest `release` edited to match). */
async function copyRelease(dataDir: string, id = FIXTURE_RELEASE): Promise<string> {
  const source = path.join(await fixtureDataDir(), FIXTURE_RELEASE);
  const dir = path.join(dataDir, id);
  await fs.cp(source, dir, { recursive: true });
  if (id !== FIXTURE_RELEASE) {
    await editManifest(dir, (m) => {
      m.release = id;
    });
  }
  return dir;
}

async function readManifestJson(dir: string): Promise<Manifest> {
  return JSON.parse(await fs.readFile(path.join(dir, MANIFEST_FILE), 'utf8')) as Manifest;
}
async function editManifest(dir: string, edit: (m: Manifest) => void): Promise<void> {
  const manifest = await readManifestJson(dir);
  edit(manifest);
  await fs.writeFile(path.join(dir, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
}

/** Rewrites `<dataset>.parquet` through DuckDB with `select` (reading FROM src) and re-seals its checksum. */
async function rewriteParquet(dir: string, dataset: string, select: (src: string) => string): Promise<void> {
  const target = path.join(dir, `${dataset}.parquet`);
  const tmp = path.join(dir, `${dataset}.rewritten.parquet`);
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    await connection.run(`COPY (${select(`read_parquet(${quoteLiteral(target)})`)}) TO ${quoteLiteral(tmp)} (FORMAT parquet)`);
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
  await fs.rename(tmp, target);
  const sha256 = await sha256File(target);
  await editManifest(dir, (m) => {
    m.datasets[dataset]!.sha256 = sha256;
  });
}

interface BrokenCase {
  name: string;
  /** Breaks the release in `dir`; returns the path the message must name. */
  breakIt(dir: string): Promise<string>;
  /** The field (or column) the message must name. */
  field: RegExp;
  /** The fix the message must suggest. */
  fix: RegExp;
}

const manifestPath = (dir: string) => path.join(dir, MANIFEST_FILE);
const parquetPath = (dir: string, dataset: string) => path.join(dir, `${dataset}.parquet`);

const CASES: BrokenCase[] = [
  {
    name: 'a Parquet file changed after publishing (one byte appended)',
    async breakIt(dir) {
      await fs.appendFile(parquetPath(dir, 'fx'), Buffer.from([0]));
      return parquetPath(dir, 'fx');
    },
    field: /datasets\.fx\.sha256/,
    fix: /restore it or regenerate/,
  },
  ...['ggr', 'country_reference'].map(
    (dataset): BrokenCase => ({
      name: `manifest without the ${dataset} entry`,
      async breakIt(dir) {
        await editManifest(dir, (m) => void delete m.datasets[dataset]);
        return manifestPath(dir);
      },
      field: new RegExp(`"datasets\\.${dataset}"`),
      // The fix is the list of datasets a release must hold.
      fix: new RegExp(DATASETS.map((d) => d.name).join(', ')),
    }),
  ),
  {
    name: 'manifest row count disagreeing with the file',
    async breakIt(dir) {
      await editManifest(dir, (m) => {
        m.datasets.turnover!.rows += 1;
      });
      return parquetPath(dir, 'turnover');
    },
    field: /has \d+ rows but the manifest says \d+/,
    fix: /regenerate/,
  },
  {
    name: 'a Parquet file missing a column',
    async breakIt(dir) {
      await rewriteParquet(dir, 'ggr', (src) => `SELECT * EXCLUDE (channel) FROM ${src}`);
      return parquetPath(dir, 'ggr');
    },
    field: /column "channel" is missing/,
    fix: /needs year, region, country, state, category, product, channel, sub_channel, fx, temporal, calculation, ggr/,
  },
  {
    name: 'a metric with a NULL',
    async breakIt(dir) {
      await rewriteParquet(
        dir,
        'ggr',
        (src) => `SELECT * REPLACE (CASE WHEN row_number() OVER () = 7 THEN NULL ELSE ggr END AS ggr) FROM ${src}`,
      );
      return parquetPath(dir, 'ggr');
    },
    field: /column "ggr" has 1 null/,
    fix: /every row needs one/,
  },
  {
    name: 'a metric with a non-finite value',
    async breakIt(dir) {
      await rewriteParquet(
        dir,
        'country',
        (src) => `SELECT * REPLACE (CASE WHEN row_number() OVER () <= 2 THEN 'NaN'::DOUBLE ELSE inflation END AS inflation) FROM ${src}`,
      );
      return parquetPath(dir, 'country');
    },
    field: /column "inflation" has 2 null or non-finite/,
    fix: /every row needs one/,
  },
  {
    name: 'a dimension with a NULL',
    async breakIt(dir) {
      await rewriteParquet(
        dir,
        'fx',
        (src) =>
          `SELECT * REPLACE (CASE WHEN row_number() OVER () = 1 THEN NULL ELSE fx_local_currency END AS fx_local_currency) FROM ${src}`,
      );
      return parquetPath(dir, 'fx');
    },
    field: /column "fx_local_currency" has 1 null/,
    fix: /use '' for a dimension/,
  },
  {
    name: 'rows that repeat every dimension value of another row',
    async breakIt(dir) {
      // Row 5 three times (the metric differs, the key does not): 2 rows repeat it.
      await rewriteParquet(
        dir,
        'ggr',
        (src) =>
          `SELECT * FROM ${src} UNION ALL SELECT r.* REPLACE (r.ggr + k AS ggr) FROM (SELECT * FROM ${src} LIMIT 1 OFFSET 5) AS r, range(1, 3) AS t(k)`,
      );
      await editManifest(dir, (m) => {
        m.datasets.ggr!.rows += 2;
      });
      return parquetPath(dir, 'ggr');
    },
    field:
      /2 rows repeat the dimension values of another row \(for example year=\d{4}, region="[^"]+", country="[^"]+", state="[^"]*", category=.* appears 3 times\)/,
    fix: /each row needs its own combination of year, region, .*calculation, so merge or remove the duplicates/,
  },
  {
    name: 'year written as text',
    async breakIt(dir) {
      await rewriteParquet(dir, 'turnover', (src) => `SELECT * REPLACE (year::VARCHAR AS year) FROM ${src}`);
      return parquetPath(dir, 'turnover');
    },
    field: /column "year" has type VARCHAR/,
    fix: /write it as an integer/,
  },
];

const broken = suite('loader: broken releases are refused');
broken.after(async () => {
  await Promise.all(created.splice(0).map((dir) => fs.rm(dir, { recursive: true, force: true })));
});

for (const c of CASES) {
  broken(`${c.name}: ready rejects naming the file, the field and the fix`, async () => {
    const dataDir = await scratch('dqs-loader-data-');
    const stateDir = await scratch('dqs-loader-state-');
    const dir = await copyRelease(dataDir);
    const file = await c.breakIt(dir);
    let service: TestService | undefined;
    let error: unknown;
    try {
      // startTestService awaits `ready` and closes the service itself when loading fails.
      service = await startTestService({ dataDir, stateDir });
    } catch (err) {
      error = err;
    } finally {
      await service?.stop();
    }
    assert.ok(error, 'the broken release was served');
    assert.instance(error, DatasetError);
    const message = (error as Error).message;
    assert.ok(message.startsWith(`${file}:`), `message does not start with the file ${file}: ${message}`);
    assert.match(message, c.field);
    assert.match(message, c.fix);
    // The release on disk is left as it was found (nothing regenerated over it).
    assert.equal((await fs.readdir(dataDir)).sort(), [FIXTURE_RELEASE]);
  });
}

broken('the sha256 message names the manifest field and both digests', async () => {
  const dataDir = await scratch('dqs-loader-data-');
  const stateDir = await scratch('dqs-loader-state-');
  const dir = await copyRelease(dataDir);
  const target = parquetPath(dir, 'ggr');
  const listed = (await readManifestJson(dir)).datasets.ggr!.sha256;
  await fs.appendFile(target, 'x');
  const actual = await sha256File(target);
  const error = await startTestService({ dataDir, stateDir }).then(
    async (service) => {
      await service.stop();
      return undefined;
    },
    (err: unknown) => err,
  );
  assert.instance(error, DatasetError);
  const message = (error as Error).message;
  assert.ok(message.includes(target), message);
  assert.ok(message.includes('sha256'), message);
  assert.ok(message.includes(actual), `message lacks the actual digest: ${message}`);
  assert.ok(message.includes(listed), `message lacks the manifest digest: ${message}`);
});

broken.run();

// ---------------------------------------------------------------------------

const serving = suite('loader: serving a release');
serving.after(async () => {
  await Promise.all(created.splice(0).map((dir) => fs.rm(dir, { recursive: true, force: true })));
});

serving('a normal start: /healthz answers 200 with status ok and the release id', async () => {
  const stateDir = await scratch('dqs-loader-state-');
  const service = await startTestService({ stateDir });
  try {
    const res = await send(`${service.url}/healthz`);
    assert.is(res.status, 200);
    assert.equal(res.json, { status: 'ok', release: FIXTURE_RELEASE, retained: [] });
    assert.is(await service.running.ready, FIXTURE_RELEASE);
    const loaded = service.running.services.releases.current()!;
    const manifest = await readManifestJson(path.join(service.dataDir, FIXTURE_RELEASE));
    for (const def of DATASETS) {
      assert.is(loaded.datasets.get(def.name)?.store.rowCount, manifest.datasets[def.name]!.rows, def.name);
    }
  } finally {
    await service.stop();
  }
});

serving('with two releases in DATA_DIR the newest is served', async () => {
  const dataDir = await scratch('dqs-loader-data-');
  const stateDir = await scratch('dqs-loader-state-');
  await copyRelease(dataDir, '2026-10');
  await copyRelease(dataDir, '2026-11');
  // Folders that are not releases are ignored.
  await fs.mkdir(path.join(dataDir, 'notes'));
  await fs.mkdir(path.join(dataDir, '2026-12')); // no manifest: not a release
  const service = await startTestService({ dataDir, stateDir });
  try {
    const res = await send(`${service.url}/healthz`);
    assert.is(res.status, 200);
    assert.equal(res.json, { status: 'ok', release: '2026-11', retained: [] });
    assert.is(await service.running.ready, '2026-11');
  } finally {
    await service.stop();
  }
  assert.ok(await exists(path.join(dataDir, '2026-10', MANIFEST_FILE)));
});

serving.run();

// ---------------------------------------------------------------------------

const catalog = suite('loader: what a load leaves in DuckDB');
catalog.after(async () => {
  await Promise.all(created.splice(0).map((dir) => fs.rm(dir, { recursive: true, force: true })));
});

/** Every schema, table and type in the serving catalog, as sorted text. */
async function servingCatalog(connection: DuckDBConnection): Promise<string[]> {
  const reader = await connection.runAndReadAll(`
    SELECT 'schema ' || schema_name FROM duckdb_schemas() WHERE database_name = 'serving'
    UNION ALL SELECT 'table ' || schema_name || '.' || table_name || ' ' || estimated_size FROM duckdb_tables() WHERE database_name = 'serving'
    UNION ALL SELECT 'type ' || schema_name || '.' || type_name FROM duckdb_types() WHERE database_name = 'serving'
    ORDER BY 1`);
  return reader.getRows().map(([line]) => String(line));
}

const silent = pino({ level: 'silent' });
const release = async (dataDir: string) => (await latestRelease(dataDir))!;

catalog('loading the same release twice leaves exactly what one load leaves', async () => {
  const db = await Database.open({ connections: 1, threads: 1 });
  const connection = await db.connect();
  try {
    const empty = await servingCatalog(connection);
    await loadRelease(connection, await release(await fixtureDataDir()), silent);
    const once = await servingCatalog(connection);
    assert.ok(
      once.some((line) => line.startsWith(`table r${FIXTURE_RELEASE.replace('-', '_')}.ggr `)),
      once.join('\n'),
    );
    assert.ok(
      once.some((line) => line.startsWith('type ')),
      'the ENUM types are in the catalog',
    );
    assert.ok(once.length > empty.length);
    await loadRelease(connection, await release(await fixtureDataDir()), silent);
    assert.equal(await servingCatalog(connection), once);
  } finally {
    connection.closeSync();
    db.close();
  }
});

catalog('a load that fails halfway leaves the catalog as it was, beside a loaded release and on its own', async () => {
  // The last dataset loaded is broken, so every other one was loaded before the failure.
  const dataDir = await scratch('dqs-loader-data-');
  const dir = await copyRelease(dataDir, '2026-12');
  const last = DATASETS.at(-1)!.name;
  await rewriteParquet(dir, last, (src) => `SELECT * FROM ${src} UNION ALL (SELECT * FROM ${src} LIMIT 1)`);
  await editManifest(dir, (m) => {
    m.datasets[last]!.rows += 1;
  });
  const broken = await release(dataDir);

  const db = await Database.open({ connections: 1, threads: 1 });
  const connection = await db.connect();
  try {
    const empty = await servingCatalog(connection);
    const error = await loadRelease(connection, broken, silent).then(
      () => undefined,
      (err: unknown) => err,
    );
    assert.instance(error, DatasetError);
    assert.match((error as Error).message, new RegExp(`${last}\\.parquet: 1 row repeats the dimension values of another row`));
    assert.equal(await servingCatalog(connection), empty);

    await loadRelease(connection, await release(await fixtureDataDir()), silent);
    const served = await servingCatalog(connection);
    assert.instance(
      await loadRelease(connection, broken, silent).then(
        () => undefined,
        (err: unknown) => err,
      ),
      DatasetError,
    );
    assert.equal(await servingCatalog(connection), served);
  } finally {
    connection.closeSync();
    db.close();
  }
});

catalog.run();
