import { randomBytes } from 'node:crypto';
import type { ChainableCommander, Redis } from 'ioredis';
import type { Logger } from 'pino';

/**
 * A random id the first replica sets (NX) on a Redis. Every replica remembers it: when
 * it is gone or another, Redis has lost what it held (restarted without persistence,
 * or a failover to an empty replica), and each replica writes its copy back.
 */
const GENERATION = 'dqs:generation';

/** What a store shares through Redis, as its RedisCopy reads, reloads and writes it back. */
export interface CopySource {
  /** What the copy holds, for log lines: "API keys", "invites". */
  readonly what: string;
  /** What still works while Redis cannot be read, for the log line saying so. */
  readonly whileFailing: string;
  /** The counter every change bumps: a new value means reload. */
  readonly versionKey: string;
  /** Queues the reads of the whole copy; load() gets their replies, in order. */
  read(batch: ChainableCommander): void;
  load(replies: unknown[]): void;
  /**
   * Queues writes that put the copy back without undoing what Redis holds already
   * (a revocation, a claim, made since or written back by another replica first);
   * returns how many records it queued.
   */
  writeBack(batch: ChainableCommander): number;
}

/**
 * A replica's copy of state shared through Redis: reloaded when the version counter
 * changes (polled every `refreshMs`), and written back when Redis comes back without
 * its data, which the generation marker (or a version counter gone back) tells on
 * every poll and on every reconnect. A reload reads both in the same transaction as
 * the data, so an emptied Redis never replaces the copy with nothing.
 */
export class RedisCopy {
  private generation: string | null = null;
  private version: string | null = null;
  private failing = false;
  private lost = false;
  private running: Promise<void> | undefined;
  private readonly timer: NodeJS.Timeout;
  private readonly onReady = () => void this.sync();

  private constructor(
    private readonly redis: Redis,
    private readonly source: CopySource,
    private readonly log: Logger,
    private readonly onLost: () => void,
    refreshMs: number,
  ) {
    this.timer = setInterval(() => void this.sync(), refreshMs).unref();
    redis.on('ready', this.onReady);
  }

  static async open(redis: Redis, source: CopySource, options: { log: Logger; refreshMs: number; onLost: () => void }): Promise<RedisCopy> {
    const generation = results(await redis.multi().set(GENERATION, newGeneration(), 'NX').get(GENERATION).exec())[1] as string;
    const copy = new RedisCopy(redis, source, options.log, options.onLost, options.refreshMs);
    copy.generation = generation;
    try {
      await copy.reload();
    } catch (err) {
      copy.close();
      throw err;
    }
    return copy;
  }

  /** One poll (coalesced with one under way): write back if Redis lost its data, reload if the version moved. */
  private sync(): Promise<void> {
    this.running ??= this.poll().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  close(): void {
    clearInterval(this.timer);
    this.redis.off('ready', this.onReady);
  }

  private async poll(): Promise<void> {
    const { what, whileFailing, versionKey } = this.source;
    try {
      const [generation, version] = await this.redis.mget(GENERATION, versionKey);
      if (this.lostSince(generation ?? null, version ?? null)) await this.restore(generation ?? null);
      else if (version !== this.version) await this.reload();
      if (this.failing) this.log.info(`${what} refreshed from Redis again`);
      this.failing = false;
    } catch (err) {
      if (!this.failing) this.log.error({ err }, `cannot refresh ${what} from Redis: ${whileFailing}`);
      this.failing = true;
    }
  }

  private async reload(): Promise<void> {
    const batch = this.redis.multi().get(GENERATION).get(this.source.versionKey);
    this.source.read(batch);
    const [generation, version, ...replies] = results(await batch.exec());
    // Lost since the poll looked: the copy stays as it is, and the next poll writes it back.
    if (this.lostSince(generation as string | null, version as string | null)) return;
    this.source.load(replies);
    this.version = version as string | null;
  }

  /**
   * Whether Redis holds less than this copy has seen: its marker is gone or another
   * (emptied), or its version counter, which only ever grows, went back (a failover to
   * a replica that had not caught up, or an old backup restored, with the same marker).
   */
  private lostSince(generation: string | null, version: string | null): boolean {
    return generation !== this.generation || Number(version ?? 0) < Number(this.version ?? 0);
  }

  /** Writes the copy back, adopts the marker (this replica's new one, or the one another replica set first) and reloads. */
  private async restore(found: string | null): Promise<void> {
    const { what, versionKey } = this.source;
    if (!this.lost) {
      this.lost = true;
      this.onLost();
      this.log.error(
        { generation: this.generation, found },
        `Redis lost its data (${found === null ? 'its generation marker is gone' : found === this.generation ? 'its version counter went back' : 'its generation marker changed'}): writing this replica's ${what} back`,
      );
    }
    const batch = this.redis.multi();
    const records = this.source.writeBack(batch);
    // The version moves so every replica that reloaded before this write-back reloads again.
    batch.incr(versionKey).set(GENERATION, newGeneration(), 'NX').get(GENERATION);
    this.generation = results(await batch.exec()).at(-1) as string;
    // Whatever the counter holds now is this generation's: the reload below takes it.
    this.version = null;
    this.lost = false;
    this.log.warn({ records }, `wrote ${records} ${what} back to Redis`);
    await this.reload();
  }
}

const newGeneration = () => randomBytes(12).toString('hex');

/** A transaction's replies, or its first error. */
export function results(replies: [Error | null, unknown][] | null): unknown[] {
  if (!replies) throw new Error('Redis discarded the transaction');
  return replies.map(([err, reply]) => {
    if (err) throw err;
    return reply;
  });
}
