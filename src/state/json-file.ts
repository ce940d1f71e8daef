import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';

/**
 * A JSON file in STATE_DIR rewritten whole on every change, one write at a time:
 * each write goes to its own temporary file and is renamed over the old one, so a
 * crash never leaves half a file, and two overlapping saves can neither share a
 * temporary file nor let an older snapshot land after a newer one.
 */
export class JsonFile {
  private queue: Promise<unknown> = Promise.resolve();

  constructor(readonly file: string) {}

  /** Writes what `snapshot` returns when this write's turn comes (the newest state). */
  save(snapshot: () => unknown): Promise<void> {
    const write = this.queue.then(async () => {
      const tmp = `${this.file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
      try {
        await fs.writeFile(tmp, JSON.stringify(snapshot(), null, 2) + '\n', { mode: 0o600 });
        await fs.rename(tmp, this.file);
      } catch (err) {
        await fs.rm(tmp, { force: true, recursive: true }).catch(() => {});
        throw err;
      }
    });
    this.queue = write.catch(() => {});
    return write;
  }
}
