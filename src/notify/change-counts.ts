import path from 'node:path';
import type { Database } from '../duckdb/database.ts';
import { CHANGES, revisionsQuery } from '../query/revisions.ts';
import { DATASETS } from '../registry.ts';
import { type Manifest, readManifest } from '../releases/manifest.ts';

// The rows added, removed and changed per dataset between two releases, as a release
// event carries them (release-event.ts). A published release's files never change, so
// a pair's counts never do: each is resolved once per process and kept.
//
// Most pairs cost nothing: `etl load` wrote into the new release's manifest its counts
// against the release it replaced (`changes`), and a rollback's withdrawal is that
// pair read the other way (added and removed swapped). A pair no manifest holds (a roll
// forward past a withdrawn release, or a DATA_DIR published before the counts were
// written) is counted once, in DuckDB's turn for heavy work, by the FULL JOIN that
// /v1/revisions pages through. A pair one of whose folders `etl prune` removed, and
// no manifest holds, has no counts (null).

export interface ChangeCounts {
  readonly added: number;
  readonly removed: number;
  readonly changed: number;
}

/** Per dataset name, every dataset of the registry. */
export type DatasetChanges = Readonly<Record<string, ChangeCounts>>;

const swapped = (counts: DatasetChanges): DatasetChanges =>
  Object.fromEntries(Object.entries(counts).map(([name, c]) => [name, { added: c.removed, removed: c.added, changed: c.changed }]));

export class ReleaseChangeCounts {
  private readonly manifests = new Map<string, Promise<Manifest | undefined>>();
  private readonly pairs = new Map<string, Promise<DatasetChanges | null>>();

  constructor(private readonly options: { readonly dataDir: string; readonly db: Database }) {}

  /**
   * The changes from release `from` to release `to`; from null (the first release
   * published), every row of `to` added. Null when neither a manifest holds them nor
   * both folders are still in DATA_DIR to count them.
   */
  between(from: string | null, to: string): Promise<DatasetChanges | null> {
    const key = `${from}>${to}`;
    let counts = this.pairs.get(key);
    if (!counts) {
      counts = this.resolve(from, to);
      this.pairs.set(key, counts);
      // A count that failed (DuckDB out of memory, say) is tried again by the next caller.
      counts.catch(() => this.pairs.delete(key));
    }
    return counts;
  }

  private manifest(id: string): Promise<Manifest | undefined> {
    let manifest = this.manifests.get(id);
    if (!manifest) {
      // A folder `etl prune` removed has no manifest to read.
      manifest = readManifest(path.join(this.options.dataDir, id)).catch(() => undefined);
      this.manifests.set(id, manifest);
    }
    return manifest;
  }

  private async resolve(from: string | null, to: string): Promise<DatasetChanges | null> {
    const after = await this.manifest(to);
    if (from === null) {
      if (!after) return null;
      return Object.fromEntries(
        Object.entries(after.datasets).map(([name, entry]) => [name, { added: entry.rows, removed: 0, changed: 0 }]),
      );
    }
    if (after?.changes?.against === from) return after.changes.datasets;
    const before = await this.manifest(from);
    if (before?.changes?.against === to) return swapped(before.changes.datasets);
    if (!before || !after) return null;
    return this.count(before, after);
  }

  /** One FULL JOIN per dataset, counted by kind of change; only the counts cross into JavaScript. */
  private count(before: Manifest, after: Manifest): Promise<DatasetChanges> {
    const file = (manifest: Manifest, dataset: string) =>
      path.join(this.options.dataDir, manifest.release, manifest.datasets[dataset]!.file);
    return this.options.db.exclusive(async (connection) => {
      const counts: Record<string, ChangeCounts> = {};
      for (const def of DATASETS) {
        if (!before.datasets[def.name] || !after.datasets[def.name]) continue;
        const { sql, params } = revisionsQuery({ def, from: file(before, def.name), to: file(after, def.name), filters: new Map() });
        const rows = (await connection.runAndReadAll(`SELECT change, count(*) FROM (${sql}) GROUP BY change`, params)).getRows();
        const by = new Map(rows.map(([change, n]) => [Number(change), Number(n)]));
        const [added, removed, changed] = CHANGES.map((_, i) => by.get(i) ?? 0) as [number, number, number];
        counts[def.name] = { added, removed, changed };
      }
      return counts;
    });
  }
}
