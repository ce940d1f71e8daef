import fs from 'node:fs/promises';
import path from 'node:path';
import { type Manifest, readManifest } from './manifest.ts';
import { listReleaseDirs, POINTER_FILE } from './on-disk.ts';
import { LOG_FILE, type Publication, readPublicationLog, withdrawnReleases } from './publication-log.ts';

/**
 * The releases a client may ask for by `release=`: every release folder in DATA_DIR
 * up to the current one that the publication log does not call withdrawn. A release
 * newer than the current one, or one a rollback withdrew and no switch served since,
 * is not served; one removed by `etl prune` is gone.
 *
 * Read again at every poll of the release switcher, never per request; a manifest
 * is read once (a published release's files never change).
 */
export class PublishedReleases {
  private manifests = new Map<string, { dir: string; manifest: Manifest }>();
  /** Newest first. */
  private ids: string[] = [];
  /** Every release folder, the withdrawn ones newer than the current one included. */
  private onDisk = new Set<string>();
  private readonly listeners: Array<() => void> = [];
  private log: readonly Publication[] = [];
  /** What the log was read from: read again only when the log, the pointer or the folders changed. */
  private logRead = '';

  constructor(private readonly dataDir: string) {}

  /** Lists DATA_DIR again, with `current` the release being served; tells listeners when the set changed. */
  async refresh(current: string): Promise<void> {
    const read = new Map<string, { dir: string; manifest: Manifest }>();
    const dirs = await listReleaseDirs(this.dataDir);
    this.onDisk = new Set(dirs.map((dir) => path.basename(dir)));
    const stamps = await Promise.all(
      [LOG_FILE, POINTER_FILE].map((file) =>
        fs.stat(path.join(this.dataDir, file)).then(
          (s) => `${s.mtimeMs}:${s.size}`,
          () => '-',
        ),
      ),
    );
    const logRead = `${stamps.join(' ')} ${[...this.onDisk].join()}`;
    if (logRead !== this.logRead) {
      this.log = await readPublicationLog(this.dataDir);
      this.logRead = logRead;
    }
    const withdrawn = withdrawnReleases(this.log);
    for (const dir of dirs) {
      const id = path.basename(dir);
      if (id > current || withdrawn.has(id)) continue;
      // A folder whose manifest cannot be read is no release (etl list and the switcher say why).
      const manifest = this.manifests.get(id)?.manifest ?? (await readManifest(dir).catch(() => undefined));
      if (manifest) read.set(id, { dir, manifest });
    }
    const ids = [...read.keys()].sort().reverse();
    const changed = ids.join() !== this.ids.join();
    this.manifests = read;
    this.ids = ids;
    if (changed) for (const listener of this.listeners) listener();
  }

  has(id: string): boolean {
    return this.manifests.has(id);
  }

  /** Whether release `id`'s folder is still in DATA_DIR, published or withdrawn by a rollback. */
  kept(id: string): boolean {
    return this.onDisk.has(id);
  }

  /** The folder and manifest of published release `id`. */
  get(id: string): { dir: string; manifest: Manifest } | undefined {
    return this.manifests.get(id);
  }

  /** Published release ids, newest first. */
  list(): readonly string[] {
    return this.ids;
  }

  /** The release published before `id`, if any. */
  previous(id: string): string | undefined {
    const at = this.ids.indexOf(id);
    return at < 0 ? undefined : this.ids[at + 1];
  }

  /** The publication log as it stands (publication-log.ts), read at the last poll. */
  publications(): readonly Publication[] {
    return this.log;
  }

  /** Calls `listener` when a release is published, withdrawn or removed. */
  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }
}
