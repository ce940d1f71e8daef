import path from 'node:path';
import * as v from 'valibot';
import { JsonFile } from '../state/json-file.ts';
import { DELIVERY_LOG_MS, type Delivery, type Endpoint, type Pending, type WebhookStore } from './store.ts';

// The file is written by this module only; its shape is checked loosely (a record is
// kept as written), the top level strictly, so a wrong file stops the start.
const fileSchema = v.object({
  cursor: v.optional(v.number()),
  endpoints: v.array(v.custom<Endpoint>((x) => typeof x === 'object' && x !== null)),
  pending: v.array(v.custom<Pending>((x) => typeof x === 'object' && x !== null)),
  deliveries: v.record(v.string(), v.array(v.custom<Delivery>((x) => typeof x === 'object' && x !== null))),
});

const pendingKey = (endpointId: string, seq: number) => `${endpointId} ${seq}`;

/**
 * Webhooks of a single process: held in memory and written through to
 * STATE_DIR/webhooks.json on every change (write-then-rename, as keys.json). One
 * process, so a lease is always its own.
 */
export class FileWebhookStore implements WebhookStore {
  private constructor(
    private readonly file: JsonFile,
    private cursorSeq: number | undefined,
    private readonly endpoints: Map<string, Endpoint>,
    private readonly waiting: Map<string, Pending>,
    private readonly logs: Map<string, Delivery[]>,
  ) {}

  static async open(stateDir: string): Promise<FileWebhookStore> {
    const file = new JsonFile(path.join(stateDir, 'webhooks.json'));
    const saved = await file.read(fileSchema);
    return new FileWebhookStore(
      file,
      saved?.cursor,
      new Map((saved?.endpoints ?? []).map((e) => [e.id, e])),
      new Map((saved?.pending ?? []).map((p) => [pendingKey(p.endpoint_id, p.seq), p])),
      new Map(Object.entries(saved?.deliveries ?? {})),
    );
  }

  async list(keyId?: string): Promise<Endpoint[]> {
    return [...this.endpoints.values()].filter((e) => keyId === undefined || e.key_id === keyId);
  }

  async get(id: string): Promise<Endpoint | undefined> {
    return this.endpoints.get(id);
  }

  async put(endpoint: Endpoint): Promise<void> {
    this.endpoints.set(endpoint.id, endpoint);
    await this.save();
  }

  async remove(id: string): Promise<void> {
    this.endpoints.delete(id);
    this.logs.delete(id);
    for (const [key, p] of this.waiting) if (p.endpoint_id === id) this.waiting.delete(key);
    await this.save();
  }

  async schedule(pending: Pending): Promise<void> {
    this.waiting.set(pendingKey(pending.endpoint_id, pending.seq), pending);
    await this.save();
  }

  async unschedule(endpointId: string, seq: number): Promise<void> {
    if (this.waiting.delete(pendingKey(endpointId, seq))) await this.save();
  }

  async pending(): Promise<Pending[]> {
    return [...this.waiting.values()];
  }

  async record(endpointId: string, delivery: Delivery): Promise<void> {
    const since = Date.parse(delivery.at) - DELIVERY_LOG_MS;
    const log = (this.logs.get(endpointId) ?? []).filter((d) => Date.parse(d.at) >= since);
    log.push(delivery);
    this.logs.set(endpointId, log);
    await this.save();
  }

  async deliveries(endpointId: string, now: number): Promise<Delivery[]> {
    return (this.logs.get(endpointId) ?? []).filter((d) => Date.parse(d.at) >= now - DELIVERY_LOG_MS).reverse();
  }

  async cursor(): Promise<number | undefined> {
    return this.cursorSeq;
  }

  async advance(seq: number): Promise<boolean> {
    if (this.cursorSeq !== undefined && this.cursorSeq >= seq) return false;
    this.cursorSeq = seq;
    await this.save();
    return true;
  }

  async lease(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {
    await this.save();
  }

  private save(): Promise<void> {
    return this.file.save(() => ({
      cursor: this.cursorSeq,
      endpoints: [...this.endpoints.values()],
      pending: [...this.waiting.values()],
      deliveries: Object.fromEntries(this.logs),
    }));
  }
}
