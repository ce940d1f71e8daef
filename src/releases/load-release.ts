import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { Logger } from 'pino';
import { DATASETS } from '../registry.ts';
import { RowRenderers } from '../render/rows.ts';
import { rollupBytes } from '../store/aggregate-tables.ts';
import { DatasetError } from '../store/dataset-error.ts';
import { type DatasetFile, dropTables, type LoadedDataset, loadTables, type StoredDataset } from '../store/loader.ts';
import type { Manifest } from './manifest.ts';
import type { ReleaseOnDisk } from './on-disk.ts';

/** A dataset of a loaded release: what the store holds of it, and its rows in every format. */
export interface ServedDataset extends StoredDataset {
  readonly rows: RowRenderers;
}

/** A release loaded in DuckDB, ready to serve. */
export interface LoadedRelease {
  readonly id: string;
  /** The release folder it was loaded from. */
  readonly dir: string;
  readonly manifest: Manifest;
  readonly datasets: ReadonlyMap<string, ServedDataset>;
}

/** A caller's claim on a loaded release: its tables are not dropped until it lets go. */
export interface ReleaseHandle {
  readonly release: LoadedRelease;
  /** Ends the claim; later calls do nothing. */
  letGo(): void;
}

/**
 * Loads every dataset of a release (src/store/loader.ts) and builds the renderers of
 * its rows, after checking them (serve). A release that fails, or is stopped by
 * `signal` (loadTables), leaves no tables behind.
 */
export async function loadRelease(
  connection: DuckDBConnection,
  release: ReleaseOnDisk,
  log: Logger,
  signal?: AbortSignal,
): Promise<LoadedRelease> {
  const { dir, manifest } = release;
  const id = manifest.release;
  const files = datasetFiles(release);
  const stored = await loadTables(connection, id, files, log, signal);
  try {
    const datasets = new Map<string, ServedDataset>();
    for (const { def, file } of files) {
      signal?.throwIfAborted();
      datasets.set(def.name, await serve(stored.get(def.name)!, file));
    }
    return { id, dir, manifest, datasets };
  } catch (err) {
    await dropTables(connection, id).catch((dropErr: Error) =>
      log.error({ err: dropErr, release: id }, "cannot drop the failed load's tables"),
    );
    throw err;
  }
}

/**
 * Loads one dataset's file as loadRelease does (its tables, column store, rollups and
 * renderers, and their checks) under release id `id`, then drops it: `etl load`'s
 * rehearsal. Rejects as loadRelease would.
 */
export async function checkDataset(connection: DuckDBConnection, id: string, file: DatasetFile, log: Logger): Promise<void> {
  try {
    await serve((await loadTables(connection, id, [file], log)).get(file.def.name)!, file.file);
  } finally {
    await dropTables(connection, id);
  }
}

const datasetFiles = ({ dir, manifest }: ReleaseOnDisk): DatasetFile[] =>
  DATASETS.map((def) => {
    const entry = manifest.datasets[def.name]!;
    return { def, file: path.join(dir, entry.file), rows: entry.rows };
  });

/**
 * A loaded dataset with its rows' renderers, after checking them: a sample of rows
 * rendered from the store must be byte for byte what DuckDB's to_json makes of the
 * same rows.
 */
async function serve({ dataset, samples }: LoadedDataset, file: string): Promise<ServedDataset> {
  const rows = await RowRenderers.create(dataset.store, dataset.def.kind);
  for (const [rid, expected] of samples) {
    const rendered = rows.json.render([rid], '', '').toString();
    if (rendered !== expected) {
      throw new DatasetError(
        `${file}: row ${rid} renders as ${rendered} but DuckDB's to_json gives ${expected}; the serving store has a bug, so keep serving the previous release and report this file`,
      );
    }
  }
  return { ...dataset, rows };
}

/** Drops a release's tables; the caller makes sure no request can still read them. */
export const dropRelease = (connection: DuckDBConnection, id: string) => dropTables(connection, id);

/** What a loaded release holds in memory, in bytes, by part (the /metrics gauge dqs_release_memory_bytes). */
export function releaseMemory(release: LoadedRelease): { columns: number; rollups: number; renderers: number } {
  const parts = { columns: 0, rollups: 0, renderers: 0 };
  for (const dataset of release.datasets.values()) {
    parts.columns += dataset.store.bytes;
    parts.rollups += rollupBytes(dataset.aggregates);
    parts.renderers += dataset.rows.bytes;
  }
  return parts;
}

/**
 * Returns an unloaded release's memory to the system now, not at the next collection
 * V8 happens to run: its columns are typed arrays whose memory is freed only by a
 * collection, and an idle server allocates nothing that would start one. One full
 * collection per unload, once this call stack has let go of the release; `gc` exists
 * when node runs with --expose-gc (package.json config.nodeFlags), else the memory
 * returns at V8's next collection.
 */
export function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc) setImmediate(gc);
}
