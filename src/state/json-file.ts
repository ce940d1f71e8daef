import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import * as v from 'valibot';

/**
 * A JSON file in STATE_DIR rewritten whole on every change, one write at a time:
 * each write goes to its own temporary file and is renamed over the old one, so a
 * crash never leaves half a file, and two overlapping saves can neither share a
 * temporary file nor let an older snapshot land after a newer one.
 */
export class JsonFile {
  private queue: Promise<unknown> = Promise.resolve();

  constructor(readonly file: string) {}

  /** The file's content checked against `schema`; undefined when there is no file yet. */
  async read<S extends v.GenericSchema>(schema: S): Promise<v.InferOutput<S> | undefined> {
    let text: string;
    try {
      text = await fs.readFile(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
    const result = v.safeParse(schema, JSON.parse(text));
    if (!result.success)
      throw new Error(
        `${this.file}: field "${v.getDotPath(result.issues[0]) ?? '(root)'}": ${result.issues[0].message}; restore the file from a backup`,
      );
    return result.output;
  }

  /** Writes what `snapshot` returns when this write's turn comes (the newest state). */
  save(snapshot: () => unknown): Promise<void> {
    const write = this.queue.then(async () => {
      const tmp = `${this.file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
      try {
        await fs.writeFile(tmp, `${JSON.stringify(snapshot(), null, 2)}\n`, { mode: 0o600 });
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
