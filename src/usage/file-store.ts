import path from 'node:path';
import * as v from 'valibot';
import type { Clock } from '../clock.ts';
import { JsonFile } from '../state/json-file.ts';
import type { UsageBatch } from './counts.ts';
import { MemoryUsageStore } from './memory-store.ts';

const tally = v.record(v.string(), v.number());
const fileSchema = v.object({
  days: v.record(
    v.string(),
    v.record(
      v.string(),
      v.object({
        requests: v.number(),
        by_status: tally,
        by_endpoint: tally,
        refused: tally,
        exports: v.number(),
        bytes_sent: v.number(),
        heavy_ms: v.number(),
      }),
    ),
  ),
  last_refused: v.record(
    v.string(),
    v.object({ at: v.string(), limit: v.string(), path: v.string(), request_id: v.string(), retry_after: v.nullable(v.number()) }),
  ),
});

/**
 * A single process's usage, held in memory and written whole to STATE_DIR/usage.json
 * after each flush's batch (JsonFile: write-then-rename, one save at a time).
 */
export class FileUsageStore extends MemoryUsageStore {
  private constructor(
    private readonly file: JsonFile,
    clock: Clock,
  ) {
    super(clock);
  }

  static async open(stateDir: string, clock: Clock): Promise<FileUsageStore> {
    const file = new JsonFile(path.join(stateDir, 'usage.json'));
    const store = new FileUsageStore(file, clock);
    const saved = await file.read(fileSchema);
    for (const [date, keys] of Object.entries(saved?.days ?? {})) store.byDate.set(date, new Map(Object.entries(keys)));
    for (const [id, refusal] of Object.entries(saved?.last_refused ?? {})) store.refusals.set(id, refusal);
    store.prune();
    return store;
  }

  override async add(batch: UsageBatch): Promise<void> {
    await super.add(batch);
    await this.file.save(() => ({
      days: Object.fromEntries([...this.byDate].map(([date, keys]) => [date, Object.fromEntries(keys)])),
      last_refused: Object.fromEntries(this.refusals),
    }));
  }
}
