import { LRUCache } from 'lru-cache';
import type { ResponseCache } from './store.ts';

/** In-process, bounded in bytes: the least recently used bodies go first. */
export class LruResponseCache implements ResponseCache {
  private readonly entries: LRUCache<string, Buffer>;

  constructor(private readonly maxBytes: number) {
    this.entries = new LRUCache({ maxSize: maxBytes, sizeCalculation: (body, key) => body.length + key.length });
  }

  get(key: string): Buffer | undefined {
    return this.entries.get(key);
  }

  set(key: string, body: Buffer): void {
    this.entries.set(key, body);
  }

  keeps(key: string, bytes: number): boolean {
    // lru-cache refuses an entry larger than its whole bound (maxEntrySize defaults to maxSize).
    return bytes + key.length <= this.maxBytes;
  }

  clear(): void {
    this.entries.clear();
  }

  get bytes(): number {
    return this.entries.calculatedSize;
  }
}
