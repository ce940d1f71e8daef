/**
 * Finished response bodies (one content-coding each), keyed by everything the
 * bytes depend on: the release, the normalized request and the coding. Entries
 * never go stale within a release, so there is no TTL: the owner clears the
 * cache when the served release changes.
 */
export interface ResponseCache {
  get(key: string): Buffer | undefined;
  /** May keep nothing: an entry larger than the bound, or a cache that is off. */
  set(key: string, body: Buffer): void;
  /**
   * Whether set would keep an entry of this many bytes under this key: a body no cache
   * would keep is sent as rendered, not copied into an entry first.
   */
  keeps(key: string, bytes: number): boolean;
  clear(): void;
  /** Bytes held now (bodies and keys); never more than the configured bound. */
  readonly bytes: number;
}
