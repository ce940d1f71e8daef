/**
 * Exports each key has streaming now, at most `perKey` (EXPORTS_OPEN_PER_KEY): an
 * export holds the release it reads until it ends, so a key cannot pin more releases
 * in memory than that by opening streams and never reading them.
 */
export class OpenExports {
  private readonly open = new Map<string, number>();

  constructor(readonly perKey: number) {}

  /** Exports of `key` streaming now, counting nothing (GET /v1/usage). */
  openFor(key: string): number {
    return this.open.get(key) ?? 0;
  }

  /** Counts an export of `key` as open and returns what closes it (once), or undefined when the key has `perKey` open. */
  begin(key: string): (() => void) | undefined {
    const count = this.open.get(key) ?? 0;
    if (count >= this.perKey) return undefined;
    this.open.set(key, count + 1);
    let closed = false;
    return () => {
      if (closed) return;
      closed = true;
      const left = this.open.get(key)! - 1;
      if (left > 0) this.open.set(key, left);
      else this.open.delete(key);
    };
  }
}
