import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import pino from 'pino';
import { ETL_MEMORY_DEFAULT } from '../src/config.ts';
import { Database } from '../src/duckdb/database.ts';
import { quoteIdent, quoteLiteral } from '../src/duckdb/sql-text.ts';
import { DATASETS, type DatasetDef, INTEGER_DIMENSIONS, RELEASE_ID } from '../src/registry.ts';
import { checkDataset } from '../src/releases/load-release.ts';
import { type Manifest, ReleaseError, writeManifest } from '../src/releases/manifest.ts';
import { currentRelease, type ReleaseOnDisk, syncPath, writePointer } from '../src/releases/on-disk.ts';
import { recordSwitch, settleLog } from '../src/releases/publication-log.ts';
import { groupKeySpace } from '../src/store/aggregation.ts';
import { columnProblems, describeParquet, exampleRows, type Problem, parquetSource, valueProblems } from '../src/store/parquet-checks.ts';
import { datasetEntry } from './dataset-entry.ts';
import { countChanges } from './diff.ts';

// `etl load`: checks an analyst's folder of Parquet files, then publishes it as a
// release of DATA_DIR and points DATA_DIR at it. Nothing in DATA_DIR changes until
// every check has passed (the files are written, in serving order, into a hidden work
// folder of DATA_DIR that is renamed into place only then, and removed otherwise).
//
// Every step streams or spills within ETL_MEMORY_LIMIT: each file is read once to be
// sorted and written, and once more, sorted, for every value check at the same time;
// the detailed messages (with the drop's row numbers) are computed only for a check
// that failed. docs/etl.md has the steps and what they cost at each scale.

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
  /** DuckDB's memory bound (ETL_MEMORY_LIMIT); past it DuckDB spills to `tempDir`. */
  memoryLimit?: string;
  /** Where DuckDB spills (ETL_TEMP_DIR); by default a folder of this process's own. */
  tempDir?: string;
  /** Called as each step starts, and with its duration when it is done. */
  onStep?: (step: string, seconds?: number) => void;
  now?: () => Date;
}

/** A drop that must not be published; `problems` lists everything wrong with it. */
export class DropRefused extends Error {
  constructor(readonly problems: readonly Problem[]) {
    super(
      `refused: ${problems.length} ${problems.length === 1 ? 'problem' : 'problems'}; nothing was published\n${problems.map((p) => `  ${p.file}: ${p.message}`).join('\n')}`,
    );
  }
}

type Step = <T>(name: string, work: () => Promise<T>) => Promise<T>;

/** Validates the drop, then publishes it; throws DropRefused (DATA_DIR untouched) when anything is wrong. */
export async function loadDrop(options: LoadOptions): Promise<Manifest> {
  const report = options.onStep ?? (() => {});
  const step: Step = async (name, work) => {
    report(name);
    const started = performance.now();
    const result = await work();
    report(name, (performance.now() - started) / 1000);
    return result;
  };
  const tempDir = options.tempDir ?? path.join(os.tmpdir(), `dqs-etl-${process.pid}`);
  const db = await Database.open({
    connections: 1,
    threads: 2,
    memoryLimit: options.memoryLimit ?? ETL_MEMORY_DEFAULT,
    tempDirectory: tempDir,
  });
  const connection = await db.connect();
  const work = path.join(options.dataDir, `.${options.release}.tmp-${process.pid}`);
  try {
    const plan = await validateDrop(connection, options, work, step);
    return await publish(connection, options, plan, work, step);
  } catch (err) {
    await fs.rm(work, { recursive: true, force: true });
    // DuckDB spills what does not fit, but each step still needs some memory of its own.
    if (err instanceof Error && /Out of Memory Error/.test(err.message)) {
      throw new Error(
        `${err.message.split('\n')[0]}: ETL_MEMORY_LIMIT (${options.memoryLimit ?? ETL_MEMORY_DEFAULT}) is too small for this step; raise it (the default is ${ETL_MEMORY_DEFAULT}), nothing was published`,
      );
    }
    throw err;
  } finally {
    connection.closeSync();
    db.close();
    await fs.rm(tempDir, { recursive: true, force: true });
  }
}

interface Plan {
  /** Datasets the drop holds, by name → its file. */
  readonly files: ReadonlyMap<string, string>;
  readonly rows: ReadonlyMap<string, number>;
  readonly current: ReleaseOnDisk | undefined;
}

async function validateDrop(connection: DuckDBConnection, options: LoadOptions, work: string, step: Step): Promise<Plan> {
  const problems: Problem[] = [];
  const drop = path.resolve(options.drop);
  if (!RELEASE_ID.test(options.release))
    problems.push({ file: drop, message: `release id "${options.release}" is not like 2026-11; pass --release YYYY-MM` });
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
    else
      problems.push({
        file: path.join(drop, entry),
        message: `is not a dataset file; name each file after its dataset (${DATASETS.map((d) => `${d.name}.parquet`).join(', ')})`,
      });
  }
  if (files.size === 0)
    problems.push({ file: drop, message: `holds none of ${DATASETS.map((d) => `${d.name}.parquet`).join(', ')}; nothing to publish` });

  const current = await currentRelease(options.dataDir);
  for (const def of DATASETS) {
    if (!files.has(def.name) && !current)
      problems.push({
        file: path.join(drop, `${def.name}.parquet`),
        message: `is missing and DATA_DIR has no current release to carry it over from; the first release needs every dataset`,
      });
  }

  // Per file: columns and types first; the rest only for files whose columns passed,
  // written in serving order first, then checked all at once (the file's own rows are
  // read again only where a check failed, for the message's row numbers).
  await fs.mkdir(work, { recursive: true });
  const rows = new Map<string, number>();
  const readable = new Set<string>();
  for (const [name, file] of files) {
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
    const normalized = path.join(work, `${name}.parquet`);
    await step(`writing ${name}.parquet in serving order`, () => writeNormalized(connection, def, file, normalized));
    const found = await step(`checking ${name}.parquet`, () => checkNormalized(connection, def, file, normalized, options));
    problems.push(...found.problems);
    rows.set(name, found.rows);
    // Null or NaN values do not hide the checks below: one run reports them all.
    readable.add(name);
  }

  const referenceFile =
    files.get('country_reference') ?? (current && path.join(current.dir, current.manifest.datasets.country_reference!.file));
  if (referenceFile && (readable.has('country_reference') || !files.has('country_reference'))) {
    await step('checking countries and regions against country_reference', async () => {
      for (const name of readable) {
        const def = DATASETS.find((d) => d.name === name)!;
        if (def.kind === 'financial')
          problems.push(...(await referenceProblems(connection, files.get(name)!, path.join(work, `${name}.parquet`), referenceFile)));
      }
    });
  }

  if (current) {
    for (const [name, count] of rows) {
      const before = current.manifest.datasets[name]?.rows;
      if (!before) continue;
      const moved = Math.abs(count - before) / before;
      if (moved > options.maxRowChange && !options.force) {
        problems.push({
          file: files.get(name)!,
          message: `has ${count} rows against ${before} in the current release ${current.manifest.release} (${(moved * 100).toFixed(1)}% moved, more than the ${options.maxRowChange * 100}% allowed); check the export, then pass --force if the change is real`,
        });
      }
    }
  }
  if (problems.length > 0) throw new DropRefused(problems);
  return { files, rows, current };
}

/**
 * The drop's file as the release holds it: registry column order, INTEGER years,
 * DOUBLE metrics, rows in serving order, zstd. DuckDB sorts within ETL_MEMORY_LIMIT,
 * spilling past it.
 */
async function writeNormalized(connection: DuckDBConnection, def: DatasetDef, file: string, out: string): Promise<void> {
  const columns = [
    ...def.dimensions.map((d) => (INTEGER_DIMENSIONS.has(d) ? `${quoteIdent(d)}::INTEGER AS ${quoteIdent(d)}` : quoteIdent(d))),
    ...def.metrics.map((m) => `${quoteIdent(m)}::DOUBLE AS ${quoteIdent(m)}`),
  ];
  await connection.run(
    `COPY (SELECT ${columns.join(', ')} FROM read_parquet(${quoteLiteral(file)}) ORDER BY ${def.dimensions.map(quoteIdent).join(', ')}) TO ${quoteLiteral(out)} (FORMAT parquet, COMPRESSION zstd)`,
  );
}

/**
 * Every value check of one file in one pass over its normalized copy (sorted, so two
 * rows with the same dimension values are neighbours): the row count, nulls and
 * non-finite metrics, years out of range, repeated dimension values. A check that
 * fails is run again on the drop's own file for its message, which quotes the drop's
 * row numbers.
 */
async function checkNormalized(
  connection: DuckDBConnection,
  def: DatasetDef,
  file: string,
  normalized: string,
  options: LoadOptions,
): Promise<{ rows: number; problems: Problem[] }> {
  const columns = [...def.dimensions, ...def.metrics];
  const bad = (c: string) =>
    def.metrics.includes(c) ? `${quoteIdent(c)} IS NULL OR NOT isfinite(${quoteIdent(c)})` : `${quoteIdent(c)} IS NULL`;
  const key = `struct_pack(${def.dimensions.map((d) => `${quoteIdent(d)} := ${quoteIdent(d)}`).join(', ')})`;
  const year = def.dimensions.includes('year');
  const reader = await connection.runAndReadAll(`
    SELECT count(*),
           count(*) FILTER (WHERE ${columns.map(bad).join(' OR ')}),
           count(*) FILTER (WHERE repeated),
           ${year ? `count(*) FILTER (WHERE year < ${options.minYear} OR year > ${options.maxYear})` : '0'},
           ${def.dimensions.map((d) => `approx_count_distinct(${quoteIdent(d)})`).join(', ')}
    FROM (SELECT *, ${key} = lag(${key}) OVER () AS repeated FROM read_parquet(${quoteLiteral(normalized)}))`);
  const [rows, nulls, repeats, outside, ...distinct] = reader.getRows()[0]!.map(Number) as [number, number, number, number, ...number[]];
  const problems: Problem[] = [];
  if (rows === 0 || nulls > 0) problems.push(...(await valueProblems(connection, def, file)).problems);
  if (repeats > 0) problems.push(...(await duplicateProblems(connection, def, file)));
  if (outside > 0) problems.push(...(await yearProblems(connection, file, options)));
  problems.push(...keySpaceProblems(def, file, distinct));
  return { rows, problems };
}

/**
 * Each rollup the server builds numbers its groups by the product of its dimensions'
 * value counts, which must stay an exact integer: what the rehearsal of a sample
 * cannot see. Counted approximately (within a few percent), with a margin of 2 per
 * dimension.
 */
function keySpaceProblems(def: DatasetDef, file: string, distinct: readonly number[]): Problem[] {
  const problems: Problem[] = [];
  for (const keep of def.rollups ?? []) {
    const space = groupKeySpace(keep.map((d) => 2 * distinct[def.dimensions.indexOf(d)]!));
    if (Number.isSafeInteger(space)) continue;
    problems.push({
      file,
      message: `the rollup over ${keep.join(', ')} would number about ${space.toExponential(1)} groups, more than a server can key (2^53); one of these dimensions has far more distinct values than any release so far: check the export`,
    });
  }
  return problems;
}

async function duplicateProblems(connection: DuckDBConnection, def: DatasetDef, file: string): Promise<Problem[]> {
  const dims = def.dimensions.map(quoteIdent).join(', ');
  const reader = await connection.runAndReadAll(`
    SELECT count(*) FILTER (WHERE n > 1), sum(n - 1)::BIGINT, any_value(example ORDER BY n DESC) FILTER (WHERE n > 1)
    FROM (SELECT count(*) AS n, to_json(struct_pack(${def.dimensions.map((d) => `${quoteIdent(d)} := ${quoteIdent(d)}`).join(', ')}))::VARCHAR AS example FROM ${parquetSource(file)} GROUP BY ${dims})`);
  const [groups, extra, example] = reader.getRows()[0]!;
  if (Number(groups) === 0) return [];
  const key = JSON.parse(String(example)) as Record<string, unknown>;
  const where = def.dimensions
    .map((d) => `${quoteIdent(d)} = ${typeof key[d] === 'number' ? key[d] : quoteLiteral(String(key[d]))}`)
    .join(' AND ');
  const at = await exampleRows(connection, `SELECT file_row_number FROM ${parquetSource(file)} WHERE ${where}`);
  return [
    {
      file,
      message: `${plural(Number(extra), 'row repeats', 'rows repeat')} the dimension values of another row, in ${plural(Number(groups), 'combination', 'combinations')} (for example ${Object.entries(
        key,
      )
        .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
        .join(', ')} at ${at}); each row needs its own combination of ${def.dimensions.join(', ')}, so merge or remove the duplicates`,
    },
  ];
}

async function yearProblems(connection: DuckDBConnection, file: string, options: LoadOptions): Promise<Problem[]> {
  const outside = `year < ${options.minYear} OR year > ${options.maxYear}`;
  const reader = await connection.runAndReadAll(`SELECT count(*), min(year), max(year) FROM ${parquetSource(file)} WHERE ${outside}`);
  const [count, min, max] = reader.getRows()[0]!;
  if (Number(count) === 0) return [];
  const at = await exampleRows(connection, `SELECT file_row_number FROM ${parquetSource(file)} WHERE ${outside}`);
  return [
    {
      file,
      message: `column "year" has ${count} values outside ${options.minYear}–${options.maxYear} (from ${min} to ${max}; ${at}); fix the years, or widen the range with --min-year/--max-year if they are real`,
    },
  ];
}

/**
 * Financial rows must name a country of country_reference, in the region it gives:
 * checked on the file's distinct (country, region) pairs, and, where one fails, on
 * its rows for the message.
 */
async function referenceProblems(
  connection: DuckDBConnection,
  file: string,
  normalized: string,
  referenceFile: string,
): Promise<Problem[]> {
  const reference = `read_parquet(${quoteLiteral(referenceFile)})`;
  const checks = [
    {
      where: `NOT EXISTS (SELECT 1 FROM ${reference} r WHERE r.country = f.country)`,
      what: (n: string, ex: string) =>
        `column "country" has ${n} rows whose country is not in country_reference (for example ${ex}); add the country to country_reference.parquet or correct its name`,
    },
    {
      where: `EXISTS (SELECT 1 FROM ${reference} r WHERE r.country = f.country) AND NOT EXISTS (SELECT 1 FROM ${reference} r WHERE r.country = f.country AND r.region = f.region)`,
      what: (n: string, ex: string) =>
        `column "region" has ${n} rows whose region disagrees with country_reference (for example ${ex}); use the region country_reference gives, or correct country_reference.parquet`,
    },
  ];
  const pairs = `(SELECT DISTINCT country, region FROM read_parquet(${quoteLiteral(normalized)}))`;
  const problems: Problem[] = [];
  for (const check of checks) {
    const failing = (await connection.runAndReadAll(`SELECT count(*) FROM ${pairs} f WHERE ${check.where}`)).getRows()[0]![0];
    if (Number(failing) === 0) continue;
    const sql = `SELECT file_row_number, country, region FROM ${parquetSource(file)} f WHERE ${check.where}`;
    const reader = await connection.runAndReadAll(
      `SELECT count(*), (SELECT list(DISTINCT format('{} in {}', to_json(country), to_json(region))) FROM (SELECT * FROM (${sql}) LIMIT 100)) FROM (${sql})`,
    );
    const [count, examples] = reader.getRows()[0]!;
    const names = (examples as { items: unknown[] }).items.slice(0, 3).map(String).join(', ');
    problems.push({
      file,
      message: check.what(String(count), `${names}; ${await exampleRows(connection, `SELECT file_row_number FROM (${sql})`)}`),
    });
  }
  return problems;
}

/**
 * Whether the drop is `etl generate`'s invented data: its manifest.json says
 * `"synthetic": true`. A publisher's drop has no manifest (or one without the flag), and
 * is not; a manifest that is not JSON is refused rather than guessed at, since an analyst
 * would take invented figures marked `false` as real ones.
 */
async function dropIsSynthetic(drop: string): Promise<boolean> {
  const file = path.join(drop, 'manifest.json');
  const text = await fs.readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  if (text === undefined) return false;
  try {
    return (JSON.parse(text) as { synthetic?: unknown }).synthetic === true;
  } catch (err) {
    throw new ReleaseError(`${file}: not JSON (${(err as Error).message}); fix it, or remove it if the drop is not etl generate's output`);
  }
}

/** Completes the work folder (carried-over files, the manifest), checks it as a server would, then renames it into place and moves the pointer. */
async function publish(connection: DuckDBConnection, options: LoadOptions, plan: Plan, work: string, step: Step): Promise<Manifest> {
  const target = path.join(options.dataDir, options.release);
  const datasets: Manifest['datasets'] = {};
  await step('writing the manifest (checksums, years)', async () => {
    for (const def of DATASETS) {
      const name = `${def.name}.parquet`;
      if (plan.files.has(def.name)) {
        datasets[def.name] = await datasetEntry(connection, def, work, { file: name, rows: plan.rows.get(def.name)! });
        continue;
      }
      const from = plan.current!;
      const entry = from.manifest.datasets[def.name]!;
      await fs.copyFile(path.join(from.dir, entry.file), path.join(work, name));
      const carried = await datasetEntry(connection, def, work, {
        file: name,
        rows: entry.rows,
        carried_from: entry.carried_from ?? from.manifest.release,
      });
      if (carried.sha256 !== entry.sha256)
        throw new ReleaseError(
          `${path.join(from.dir, entry.file)}: SHA-256 is ${carried.sha256} but its manifest says ${entry.sha256}; the current release was changed after publishing, so restore it or include ${name} in the drop`,
        );
      datasets[def.name] = carried;
    }
  });
  const now = (options.now ?? (() => new Date()))().toISOString();
  const manifest: Manifest = {
    release: options.release,
    created_at: now,
    published_at: now,
    source: path.resolve(options.drop),
    synthetic: await dropIsSynthetic(options.drop),
    datasets,
  };
  if (plan.current) {
    const against = plan.current;
    manifest.changes = await step(`counting rows added, removed and changed against ${against.manifest.release}`, async () => {
      const counts: NonNullable<Manifest['changes']>['datasets'] = {};
      for (const def of DATASETS) {
        const file = (release: ReleaseOnDisk) => path.join(release.dir, release.manifest.datasets[def.name]!.file);
        counts[def.name] = await countChanges(connection, def, file(against), file({ dir: work, manifest }));
      }
      return { against: against.manifest.release, datasets: counts };
    });
  }
  await writeManifest(work, manifest);
  await step("loading a sample of each dataset as a server will (the server's own loader and checks)", () =>
    serverLoadCheck(connection, { dir: work, manifest }, options),
  );
  await step('publishing (synced to disk, renamed into place, the pointer moved)', async () => {
    // On disk before it is named: after a power loss the pointer must not name half-written files.
    for (const entry of await fs.readdir(work)) await syncPath(path.join(work, entry));
    await syncPath(work);
    // The log as it stands before the switch (settled the first time from the manifests), its line after it.
    const before = await settleLog(options.dataDir);
    await fs.rename(work, target);
    await syncPath(options.dataDir);
    await writePointer(options.dataDir, options.release);
    await recordSwitch(options.dataDir, before, options.release, (options.now ?? (() => new Date()))());
  });
  return manifest;
}

/** Rows of each dataset the rehearsal loads: as many as the server's own self-check renders, and more. */
const SAMPLE_ROWS = 4096;

/**
 * Loads a sample of each dataset's rows with the server's own loader
 * (src/releases/load-release.ts: the store's checks, the serving tables, the column
 * store, every renderer's self-check, the rollups), one dataset at a time. What a
 * server can fail on beyond the checks above is a bug in the serving code meeting
 * these values (a sample finds it as the server's own check of 1,000 rows would) or a
 * rollup's key space (checked above from the whole file): a drop that passes here is
 * one every server can serve, and the rehearsal costs seconds, not the minute and the
 * gigabyte of loading the whole release at 16x.
 */
async function serverLoadCheck(connection: DuckDBConnection, release: ReleaseOnDisk, options: LoadOptions): Promise<void> {
  const samples = path.join(release.dir, '.samples');
  await fs.mkdir(samples, { recursive: true });
  try {
    for (const def of DATASETS) {
      const sample = path.join(samples, `${def.name}.parquet`);
      const source = path.join(release.dir, release.manifest.datasets[def.name]!.file);
      await connection.run(
        `COPY (SELECT * FROM read_parquet(${quoteLiteral(source)}) USING SAMPLE ${SAMPLE_ROWS} ROWS (reservoir, 7)) TO ${quoteLiteral(sample)} (FORMAT parquet)`,
      );
      const rows = Number((await connection.runAndReadAll(`SELECT count(*) FROM read_parquet(${quoteLiteral(sample)})`)).getRows()[0]![0]);
      await checkDataset(connection, release.manifest.release, { def, file: sample, rows }, pino({ level: 'silent' }));
    }
  } catch (err) {
    // Whatever stops the loader would stop every server: the drop is refused with its reason,
    // named by the drop's file, not the work copy about to be removed.
    const message = (err as Error).message
      .replaceAll(samples, path.resolve(options.drop))
      .replaceAll(release.dir, path.resolve(options.drop));
    throw new DropRefused([{ file: path.resolve(options.drop), message: `a server could not load it: ${message}` }]);
  } finally {
    await fs.rm(samples, { recursive: true, force: true });
  }
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
const exists = (p: string) =>
  fs.stat(p).then(
    () => true,
    () => false,
  );
