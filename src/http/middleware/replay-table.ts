import { LRUCache } from 'lru-cache';
import type { Releases } from '../../releases/releases.ts';
import type { CacheableAnswer } from '../respond/cacheable.ts';

/** What a repeated request is answered from: its first 200 and the headers its handler set. */
export interface Recorded {
  readonly epoch: number;
  readonly answer: CacheableAnswer;
  readonly etag: string;
  /** What the handler set; request ids, limit headers and Content-Length are set anew each time. */
  readonly headers: readonly (readonly [string, string | string[]])[];
  /** The route pattern the request matched, for the request metrics' label. */
  readonly route: string;
}

/** What a record costs beside its request text and headers (the object, the LRU's entry). */
const RECORD_OVERHEAD = 200;

const recordBytes = (request: string, record: Recorded) =>
  RECORD_OVERHEAD +
  request.length +
  record.answer.cacheKey.length +
  record.route.length +
  record.headers.reduce((sum, [name, value]) => sum + name.length + String(value).length, 0);

/** The raw request a record is found by: a cacheable 200 depends on nothing else while the epoch holds. */
export const requestText = (url: string, accept: string, acceptEncoding: string) => `${url}\n${accept}\n${acceptEncoding}`;

/**
 * The records of repeated requests (src/http/middleware/replay.ts explains when one is
 * made and replayed). Bounded in bytes (REPLAY_MAX_BYTES).
 *
 * Records belong to an epoch that moves whenever a release is switched in, withdrawn
 * or removed, and the table is emptied then: an answer from a replaced release is
 * never replayed for a URL without `release=` or a cursor. An answer read from a named
 * release is replayed only while that release is published.
 */
export class ReplayTable {
  private readonly records: LRUCache<string, Recorded>;
  private current = 0;

  constructor(
    private readonly releases: Releases,
    maxBytes: number,
  ) {
    this.records = new LRUCache<string, Recorded>({
      maxSize: Math.max(1, maxBytes),
      sizeCalculation: (record, request) => recordBytes(request, record),
    });
    releases.onChange(() => {
      this.current++;
      this.records.clear();
    });
  }

  get epoch(): number {
    return this.current;
  }

  /** The record of `request` if it may be replayed now. */
  find(request: string): Recorded | undefined {
    const record = this.records.get(request);
    if (record?.epoch !== this.current) return undefined;
    const { release } = record.answer;
    return release === undefined || this.releases.isPublished(release) ? record : undefined;
  }

  /** Keeps a record made by a request that began in epoch `began`; one from an earlier epoch is dropped. */
  record(request: string, began: number, record: Omit<Recorded, 'epoch'>): void {
    if (began === this.current) this.records.set(request, { ...record, epoch: began });
  }
}
