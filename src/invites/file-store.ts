import path from 'node:path';
import * as v from 'valibot';
import { JsonFile } from '../state/json-file.ts';
import { hashToken, type InviteRecord, type InviteStore, inviteStatus, issueInvite, type Spend } from './store.ts';

const time = v.nullable(v.string());
const fileSchema = v.object({
  invites: v.array(
    v.object({
      id: v.string(),
      hash: v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/)),
      client: v.string(),
      created_at: v.string(),
      expires_at: v.string(),
      replaces: v.nullable(v.string()),
      claimed_at: time,
      key_id: time,
      revoked_at: time,
    }),
  ),
});

/**
 * Invites of a single process in STATE_DIR/invites.json. A claim checks and marks
 * the record in one synchronous step before anything is awaited, so racing claims
 * in this process cannot both pass; replicas share invites through Redis instead.
 */
export class FileInviteStore implements InviteStore {
  private constructor(
    private readonly file: JsonFile,
    private readonly byHash: Map<string, InviteRecord>,
  ) {}

  static async open(stateDir: string): Promise<FileInviteStore> {
    const file = new JsonFile(path.join(stateDir, 'invites.json'));
    const records: InviteRecord[] = (await file.read(fileSchema))?.invites ?? [];
    return new FileInviteStore(file, new Map(records.map((r) => [r.hash, r])));
  }

  async create(input: { client: string; expiresAt: number; replaces: string | null }, now: number) {
    const issued = issueInvite(input, now);
    await this.change(issued.record);
    return issued;
  }

  async find(token: string): Promise<InviteRecord | undefined> {
    return this.byHash.get(hashToken(token));
  }

  async spend(token: string, now: number): Promise<Spend> {
    const found = this.byHash.get(hashToken(token));
    if (!found) return { ok: false, status: 'unknown' };
    const status = inviteStatus(found, now);
    if (status !== 'open') return { ok: false, status };
    const record = { ...found, claimed_at: new Date(now).toISOString() };
    await this.change(record, found);
    return { ok: true, record };
  }

  async settle(record: InviteRecord, keyId: string): Promise<void> {
    await this.change({ ...record, key_id: keyId });
  }

  async release(record: InviteRecord): Promise<void> {
    await this.change({ ...record, claimed_at: null, key_id: null });
  }

  async list(): Promise<InviteRecord[]> {
    return [...this.byHash.values()];
  }

  async revoke(id: string, now: number): Promise<InviteRecord | undefined> {
    const found = [...this.byHash.values()].find((r) => r.id === id);
    if (!found || found.claimed_at !== null || found.revoked_at !== null) return found;
    const revoked = { ...found, revoked_at: new Date(now).toISOString() };
    await this.change(revoked, found);
    return revoked;
  }

  async close(): Promise<void> {}

  /** Applies a change at once (in memory) and writes it; undoes it when the write fails. */
  private async change(next: InviteRecord, previous?: InviteRecord): Promise<void> {
    this.byHash.set(next.hash, next);
    try {
      await this.file.save(() => ({ invites: [...this.byHash.values()] }));
    } catch (err) {
      if (previous) this.byHash.set(previous.hash, previous);
      else this.byHash.delete(next.hash);
      throw err;
    }
  }
}
