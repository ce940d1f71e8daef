import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { DATASETS, INTEGER_DIMENSIONS, type DatasetDef } from '../src/registry.ts';
import { columnProblems, describeParquet, exampleRows, parquetSource, valueProblems, type Problem } from '../src/store/parquet-checks.ts';
import { RELEASE_ID, ReleaseError, writeManifest, type Manifest } from '../src/releases/manifest.ts';
import { datasetEntry } from './dataset-entry.ts';
import { currentRelease, syncPath, type ReleaseOnDisk, writePointer } from '../src/releases/on-disk.ts';
import { Database } from '../src/duckdb/database.ts';
import { loadRelease } from '../src/releases/load-release.ts';
import { quoteIdent, quoteLiteral } from '../src/duckdb/sql-text.ts';
import { diffReleases } from './diff.ts';

// `etl load`: checks an analyst's folder of Parquet files, then publishes it as a
// release of DATA_DIR and points DATA_DIR at it. Nothing in DATA_DIR changes until
// every check has passed.

export interface LoadOptions {
  /** The analyst's folder: `<dataset>.parquet` for some or all datasets. */
  drop: string;
  dataDir: string;
  release: string;
  /** Publish even when a dataset's row count moved more than maxRowChange. */
  force: boolean;
  minYear: number;
  maxYear: number;
  /** Largest share a dataset's row count may move against the current release, e.g. 0.25. */
  maxRowChange: number;
  onStep?: (step: string) => void;
  now?: () => Date;
}

/** A drop that must not be published; `problems` lists everything wrong with it. */
export class DropRefused extends Error {
  constructor(readonly problems: readonly Problem[]) {
    super(`refused: ${problems.length} ${problems.length === 1 ? 'problem' : 'problems'}; nothing was published\n${problems.map((p) => `  ${p.file}: ${p.message}`).join('\n')}`);
  }
}

/** Validates the drop, then publishes it; throws DropRefused (DATA_DIR untouched) when anything is wrong. */
export async function loadDrop(options: LoadOptions): Promise<Manifest> {
  const step = options.onStep ?? (() => {});
  const instance = await DuckDBInstance.create(':memory:', { threads: '2' });
  const connection = await instance.connect();
  try {
    const plan = await validateDrop(connection, options, step);
    return await publish(connection, options, plan, step);
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

interface Plan {
  /** Datasets the drop holds, by name → its file. */
  readonly files: ReadonlyMap<string, string>;
  readonly rows: ReadonlyMap<string, number>;
  readonly current: ReleaseOnDisk | undefined;
}

async function validateDrop(connection: DuckDBConnection, options: LoadOptions, step: (s: string) => void): Promise<Plan> {
  const problems: Problem[] = [];
  const drop = path.resolve(options.drop);
  if (!RELEASE_ID.test(options.release)) problems.push({ file: drop, message: `release id "${options.release}" is not like 2026-11; pass --release YYYY-MM` });
  const target = path.join(options.dataDir, options.release);
  if (await exists(target)) {
    problems.push({
      file: target,
      message: `release ${options.release} is already published; pass another --release (releases are never changed in place, so servers and cursors can rely on them). If an earlier load stopped before switching to it, serve it with \`npm run etl -- rollback ${options.release}\``,
    });
  }

  const entries = await fs.readdir(drop).catch((err: Error) => {
    throw new ReleaseError(`${drop}: cannot read the folder (${err.message}); pass the folder holding the month's Parquet files`);
  });
  const files = new Map<string, string>();
  for (const entry of entries.filter((e) => e.endsWith('.parquet')).sort()) {
    const def = DATASETS.find((d) => `${d.name}.parquet` === entry);
    if (def) files.set(def.name, path.join(drop, entry));
    else problems.push({ file: path.join(drop, entry), message: `is not a dataset file; name each file after its dataset (${DATASETS.map((d) => `${d.name}.parquet`).join(', ')})` });
  }
  if (files.size === 0) problems.push({ file: drop, message: `holds none of ${DATASETS.map((d) => `${d.name}.parquet`).join(', ')}; nothing to publish` });

  const current = await currentRelease(options.dataDir);
  for (const def of DATASETS) {
    if (!files.has(def.name) && !current) problems.push({ file: path.join(drop, `${def.name}.parquet`), message: `is missing and DATA_DIR has no current release to carry it over from; the first release needs every dataset` });
  }

  // Per file: columns and types first; values only in files whose columns passed.
  const rows = new Map<string, number>();
  const readable = new Set<string>();
  let n = 0;
  for (const [name, file] of files) {
    step(`checking ${path.basename(file)} (${++n}/${files.size})`);
    const def = DATASETS.find((d) => d.name === name)!;
    let types: Map<string, string>;
    try {
      types = await describeParquet(connection, file);
    } catch (err) {
      problems.push({ file, message: (err as Error).message.slice(file.length + 2) });
      continue;
    }
    const columns = columnProblems(def, types, file);
    problems.push(...columns);
    if (columns.length > 0) continue;
    const values = await valueProblems(connection, def, file);
    problems.push(...values.problems);
    rows.set(name, values.rows);
    // Null or NaN values do not hide the checks below: one run reports them all.
    readable.add(name);
    problems.push(...(await duplicateProblems(connection, def, file)));
    if (def.dimensions.includes('year')) problems.push(...(await yearProblems(connection, file, options)));
  }

  step('checking countries and regions against country_reference');
  const referenceFile = files.get('country_reference') ?? (current && path.join(current.dir, current.manifest.datasets.country_reference!.file));
  if (referenceFile && (readable.has('country_reference') || !files.has('country_reference'))) {
    for (const name of readable) {
      const def = DATASETS.find((d) => d.name === name)!;
      if (def.kind === 'financial') problems.push(...(await referenceProblems(connection, files.get(name)!, referenceFile)));
    }
  }

  if (current) {
    for (const [name, count] of rows) {
      const before = current.manifest.datasets[name]?.rows;
      if (!before) continue;
      const moved = Math.abs(count - before) / before;
      if (moved > options.maxRowChange && !options.force) {
        problems.push({ file: files.get(name)!, message: `has ${count} rows against ${before} in the current release ${current.manifest.release} (${(moved * 100).toFixed(1)}% moved, more than the ${options.maxRowChange * 100}% allowed); check the export, then pass --force if the change is real` });
      }
    }
  }
  if (problems.length > 0) throw new DropRefused(problems);
  return { files, rows, current };
}

async function duplicateProblems(connection: DuckDBConnection, def: DatasetDef, file: string): Promise<Problem[]> {
  const dims = def.dimensions.map(quoteIdent).join(', ');
  const reader = await connection.runAndReadAll(`
    SELECT count(*) FILTER (WHERE n > 1), sum(n - 1)::BIGINT, any_value(example ORDER BY n DESC) FILTER (WHERE n > 1)
    FROM (SELECT count(*) AS n, to_json(struct_pack(${def.dimensions.map((d) => `${quoteIdent(d)} := ${quoteIdent(d)}`).join(', ')}))::VARCHAR AS example FROM ${parquetSource(file)} GROUP BY ${dims})`);
  const [groups, extra, example] = reader.getRows()[0]!;
  if (Number(groups) === 0) return [];
  const key = JSON.parse(String(example)) as Record<string, unknown>;
  const where = def.dimensions.map((d) => `${quoteIdent(d)} = ${typeof key[d] === 'number' ? key[d] : quoteLiteral(String(key[d]))}`).join(' AND ');
  const at = await exampleRows(connection, `SELECT file_row_number FROM ${parquetSource(file)} WHERE ${where}`);
  return [{
    file,
    message: `${plural(Number(extra), 'row repeats', 'rows repeat')} the dimension values of another row, in ${plural(Number(groups), 'combination', 'combinations')} (for example ${Object.entries(key).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(', ')} at ${at}); each row needs its own combination of ${def.dimensions.join(', ')}, so merge or remove the duplicates`,
  }];
}

async function yearProblems(connection: DuckDBConnection, file: string, options: LoadOptions): Promise<Problem[]> {
  const outside = `year < ${options.minYear} OR year > ${options.maxYear}`;
  const reader = await connection.runAndReadAll(`SELECT count(*), min(year), max(year) FROM ${parquetSource(file)} WHERE ${outside}`);
  const [count, min, max] = reader.getRows()[0]!;
  if (Number(count) === 0) return [];
  const at = await exampleRows(connection, `SELECT file_row_number FROM ${parquetSource(file)} WHERE ${outside}`);
  return [{ file, message: `column "year" has ${count} values outside ${options.minYear}–${options.maxYear} (from ${min} to ${max}; ${at}); fix the years, or widen the range with --min-year/--max-year if they are real` }];
}

/** Financial rows must name a country of country_reference, in the region it gives. */
async function referenceProblems(connection: DuckDBConnection, file: string, referenceFile: string): Promise<Problem[]> {
  const source = parquetSource(file);
  const reference = `read_parquet(${quoteLiteral(referenceFile)})`;
  const problems: Problem[] = [];
  const checks = [
    {
      where: `NOT EXISTS (SELECT 1 FROM ${reference} r WHERE r.country = f.country)`,
      what: (n: string, ex: string) => `column "country" has ${n} rows whose country is not in country_reference (for example ${ex}); add the country to country_reference.parquet or correct its name`,
    },
    {
      where: `EXISTS (SELECT 1 FROM ${reference} r WHERE r.country = f.country) AND NOT EXISTS (SELECT 1 FROM ${reference} r WHERE r.country = f.country AND r.region = f.region)`,
      what: (n: string, ex: string) => `column "region" has ${n} rows whose region disagrees with country_reference (for example ${ex}); use the region country_reference gives, or correct country_reference.parquet`,
    },
  ];
  for (const check of checks) {
    const sql = `SELECT file_row_number, country, region FROM ${source} f WHERE ${check.where}`;
    const reader = await connection.runAndReadAll(`SELECT count(*), (SELECT list(DISTINCT format('{} in {}', to_json(country), to_json(region))) FROM (SELECT * FROM (${sql}) LIMIT 100)) FROM (${sql})`);
    const [count, examples] = reader.getRows()[0]!;
    if (Number(count) === 0) continue;
    const names = (examples as { items: unknown[] }).items.slice(0, 3).map(String).join(', ');
    problems.push({ file, message: check.what(String(count), `${names}; ${await exampleRows(connection, `SELECT file_row_number FROM (${sql})`)}`) });
  }
  return problems;
}

/** Writes the normalized release beside its target, renames it into place, then moves the pointer. */
async function publish(connection: DuckDBConnection, options: LoadOptions, plan: Plan, step: (s: string) => void): Promise<Manifest> {
  const target = path.join(options.dataDir, options.release);
  const work = path.join(options.dataDir, `.${options.release}.tmp-${process.pid}`);
  await fs.rm(work, { recursive: true, force: true });
  await fs.mkdir(work, { recursive: true });
  try {
    const datasets: Manifest['datasets'] = {};
    for (const def of DATASETS) {
      const name = `${def.name}.parquet`;
      const out = path.join(work, name);
      const file = plan.files.get(def.name);
      if (file) {
        step(`writing ${name}`);
        // Registry column order, INTEGER years, DOUBLE metrics, serving order: the
        // same normalized file whatever tool wrote the drop.
        const columns = [
          ...def.dimensions.map((d) => (INTEGER_DIMENSIONS.has(d) ? `${quoteIdent(d)}::INTEGER AS ${quoteIdent(d)}` : quoteIdent(d))),
          ...def.metrics.map((m) => `${quoteIdent(m)}::DOUBLE AS ${quoteIdent(m)}`),
        ];
        await connection.run(`COPY (SELECT ${columns.join(', ')} FROM read_parquet(${quoteLiteral(file)}) ORDER BY ${def.dimensions.map(quoteIdent).join(', ')}) TO ${quoteLiteral(out)} (FORMAT parquet, COMPRESSION zstd)`);
        datasets[def.name] = await datasetEntry(connection, def, work, { file: name, rows: plan.rows.get(def.name)! });
      } else {
        const from = plan.current!;
        const entry = from.manifest.datasets[def.name]!;
        step(`carrying ${def.name} over from ${from.manifest.release}`);
        await fs.copyFile(path.join(from.dir, entry.file), out);
        const carried = await datasetEntry(connection, def, work, { file: name, rows: entry.rows, carried_from: entry.carried_from ?? from.manifest.release });
        if (carried.sha256 !== entry.sha256) throw new ReleaseError(`${path.join(from.dir, entry.file)}: SHA-256 is ${carried.sha256} but its manifest says ${entry.sha256}; the current release was changed after publishing, so restore it or include ${name} in the drop`);
        datasets[def.name] = carried;
      }
    }
    const now = (options.now ?? (() => new Date()))().toISOString();
    const manifest: Manifest = { release: options.release, created_at: now, published_at: now, source: path.resolve(options.drop), synthetic: false, datasets };
    if (plan.current) {
      step(`counting rows added, removed and changed against ${plan.current.manifest.release}`);
      const diff = await diffReleases(plan.current, { dir: work, manifest }, 0);
      manifest.changes = {
        against: plan.current.manifest.release,
        datasets: Object.fromEntries(Object.entries(diff.datasets).map(([name, d]) => [name, { added: d.added, removed: d.removed, changed: d.changed }])),
      };
    }
    await writeManifest(work, manifest);
    step('loading it as a server will (the server\'s own loader and checks)');
    await serverLoadCheck({ dir: work, manifest }, options);
    // On disk before it is named: after a power loss the pointer must not name half-written files.
    for (const entry of await fs.readdir(work)) await syncPath(path.join(work, entry));
    await syncPath(work);
    await fs.rename(work, target);
    await syncPath(options.dataDir);
    await writePointer(options.dataDir, options.release);
    return manifest;
  } catch (err) {
    await fs.rm(work, { recursive: true, force: true });
    throw err;
  }
}

/**
 * Loads the normalized release exactly as a server does (src/store/loader.ts: schema
 * and value checks, the serving tables, every renderer's self-check, the rollups),
 * into a scratch DuckDB: a drop that passes here is one every server can serve.
 */
async function serverLoadCheck(release: ReleaseOnDisk, options: LoadOptions): Promise<void> {
  const db = await Database.open({ connections: 1, threads: 2, memoryLimit: '1GB', tempDirectory: path.join(os.tmpdir(), `dqs-etl-check-${process.pid}`) });
  const connection = await db.connect();
  try {
    await loadRelease(connection, release, pino({ level: 'silent' }));
  } catch (err) {
    // Whatever stops the loader would stop every server: the drop is refused with its reason,
    // named by the drop's file, not the scratch copy about to be removed.
    const message = (err as Error).message.replaceAll(release.dir, path.resolve(options.drop));
    throw new DropRefused([{ file: path.resolve(options.drop), message: `a server could not load it: ${message}` }]);
  } finally {
    connection.closeSync();
    db.close();
  }
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
const exists = (p: string) => fs.stat(p).then(() => true, () => false);
