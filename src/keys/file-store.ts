import path from 'node:path';
import * as v from 'valibot';
import { JsonFile } from '../state/json-file.ts';
import { hashKey, issueKey, looksLikeKey } from './key-format.ts';
import { activeRecord, type KeyRecord, type KeyStore } from './store.ts';
import { latest, UseLog } from './use-log.ts';

const fileSchema = v.object({
  keys: v.array(
    v.object({
      id: v.string(),
      prefix: v.string(),
      hash: v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/)),
      client: v.string(),
      created_at: v.string(),
      revoked_at: v.nullable(v.string()),
      invite_id: v.optional(v.string()),
      last_used_at: v.optional(v.nullable(v.string())),
    }),
  ),
});

/**
 * Keys of a single process, held in memory (a lookup per request costs one SHA-256
 * and a Map get) and written through to STATE_DIR/keys.json on every change, by
 * write-then-rename so a crash never leaves half a file; saves run one at a time.
 */
export class FileKeyStore implements KeyStore {
  private readonly uses: UseLog;

  private constructor(
    private readonly file: JsonFile,
    private readonly byHash: Map<string, KeyRecord>,
    flushMs: number,
  ) {
    this.uses = new UseLog(async (uses) => {
      for (const record of this.byHash.values()) {
        if (uses.has(record.id))
          this.byHash.set(record.hash, { ...record, last_used_at: latest(record.last_used_at, uses.get(record.id)) });
      }
      await this.save();
    }, flushMs);
  }

  static async open(stateDir: string, options: { flushMs?: number } = {}): Promise<FileKeyStore> {
    const file = new JsonFile(path.join(stateDir, 'keys.json'));
    const records: KeyRecord[] = (await file.read(fileSchema))?.keys ?? [];
    return new FileKeyStore(file, new Map(records.map((r) => [r.hash, r])), options.flushMs ?? 60_000);
  }

  async verify(key: string): Promise<KeyRecord | undefined> {
    return this.known(key);
  }

  async known(key: string): Promise<KeyRecord | undefined> {
    return activeRecord(this.byHash.get(hashKey(key)));
  }

  async create(client: string, origin?: { inviteId: string }): Promise<{ key: string; record: KeyRecord }> {
    const { key, record } = issueKey(client, origin);
    this.byHash.set(record.hash, record);
    try {
      await this.save();
    } catch (err) {
      // The key is not returned, so it must not work either; a later save may have
      // written it already, so write again without it (best effort: this one failed).
      this.byHash.delete(record.hash);
      await this.save().catch(() => {});
      throw err;
    }
    return { key, record };
  }

  async list(): Promise<KeyRecord[]> {
    return [...this.byHash.values()].map((r) => ({ ...r, last_used_at: latest(r.last_used_at, this.uses.unwritten(r.id)) }));
  }

  recordUse(id: string, at: number): void {
    this.uses.note(id, at);
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

  async close(): Promise<void> {
    await this.uses.close();
  }

  private save(): Promise<void> {
    return this.file.save(() => ({ keys: [...this.byHash.values()] }));
  }
}
