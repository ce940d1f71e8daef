import fs from 'node:fs/promises';
import path from 'node:path';
import { MANIFEST_FILE } from '../src/releases/manifest.ts';
import type { ReleaseOnDisk } from '../src/releases/on-disk.ts';

/**
 * Publishes `source` in `dataDir` once under each id: its Parquet files hard-linked
 * (copied where `dataDir` is on another file system), its manifest naming the id.
 * Releases to switch between, or to load beside each other, without generating any;
 * the caller writes the pointer.
 */
export async function releaseCopies(source: ReleaseOnDisk, dataDir: string, ids: readonly string[]): Promise<void> {
  for (const id of ids) {
    const dir = path.join(dataDir, id);
    await fs.mkdir(dir, { recursive: true });
    for (const entry of await fs.readdir(source.dir)) {
      if (!entry.endsWith('.parquet')) continue;
      const [from, to] = [path.join(source.dir, entry), path.join(dir, entry)];
      await fs.link(from, to).catch((err: NodeJS.ErrnoException) => (err.code === 'EXDEV' ? fs.copyFile(from, to) : Promise.reject(err)));
    }
    await fs.writeFile(path.join(dir, MANIFEST_FILE), JSON.stringify({ ...source.manifest, release: id }));
  }
}
