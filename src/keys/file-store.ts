import fs from 'node:fs/promises';
import path from 'node:path';
import * as v from 'valibot';
import { hashKey, issueKey, looksLikeKey } from './key-format.ts';
import type { KeyRecord, KeyStore } from './store.ts';

const fileSchema = v.object({
  keys: v.array(
    v.object({
      id: v.string(),
      prefix: v.string(),
      hash: v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/)),
      client: v.string(),
      created_at: v.string(),
      revoked_at: v.nullable(v.string()),
    }),
  ),
});

/**
 * Keys of a single process, held in memory (a lookup per request costs one SHA-256
 * and a Map get) and written through to STATE_DIR/keys.json on every change, by
 * write-then-rename so a crash never leaves half a file.
 */
export class FileKeyStore implements KeyStore {
  private constructor(
    private readonly file: string,
    private readonly byHash: Map<string, KeyRecord>,
  ) {}

  static async open(stateDir: string): Promise<FileKeyStore> {
    const file = path.join(stateDir, 'keys.json');
    let records: KeyRecord[] = [];
    try {
      const result = v.safeParse(fileSchema, JSON.parse(await fs.readFile(file, 'utf8')));
      if (!result.success) throw new Error(`${file}: field "${v.getDotPath(result.issues[0]) ?? '(root)'}": ${result.issues[0].message}; restore the file from a backup`);
      records = result.output.keys;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    return new FileKeyStore(file, new Map(records.map((r) => [r.hash, r])));
  }

  async verify(key: string): Promise<KeyRecord | undefined> {
    const record = this.byHash.get(hashKey(key));
    return record && record.revoked_at === null ? record : undefined;
  }

  async create(client: string): Promise<{ key: string; record: KeyRecord }> {
    const { key, record } = issueKey(client);
    this.byHash.set(record.hash, record);
    try {
      await this.save();
    } catch (err) {
      // The key is not returned, so it must not work either.
      this.byHash.delete(record.hash);
      throw err;
    }
    return { key, record };
  }

  async list(): Promise<KeyRecord[]> {
    return [...this.byHash.values()];
  }

  async revoke(ref: string): Promise<KeyRecord | undefined> {
    const found = looksLikeKey(ref) ? this.byHash.get(hashKey(ref)) : [...this.byHash.values()].find((r) => r.id === ref);
    if (!found) return undefined;
    if (found.revoked_at !== null) return found;
    const revoked = { ...found, revoked_at: new Date().toISOString() };
    this.byHash.set(found.hash, revoked);
    await this.save();
    return revoked;
  }

  async close(): Promise<void> {}

  private async save(): Promise<void> {
    const tmp = `${this.file}.${process.pid}.tmp`;
    await fs.writeFile(tmp, JSON.stringify({ keys: [...this.byHash.values()] }, null, 2) + '\n', { mode: 0o600 });
    await fs.rename(tmp, this.file);
  }
}
