/**
 * When each key was last used, at a cost a request can afford: noting a use is one
 * Map set in memory; the notes are written out once per `flushMs` (and on close), so
 * the stored "last used" lags by at most that interval and costs one write per
 * interval, not one per request.
 */
export class UseLog {
  private pending = new Map<string, number>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly write: (uses: ReadonlyMap<string, number>) => Promise<void>,
    flushMs: number,
  ) {
    this.timer = setInterval(() => void this.flush().catch(() => {}), flushMs).unref();
  }

  note(id: string, at: number): void {
    if ((this.pending.get(id) ?? 0) < at) this.pending.set(id, at);
  }

  /** The newest use not written yet, if any. */
  unwritten(id: string): number | undefined {
    return this.pending.get(id);
  }

  async flush(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    try {
      await this.write(batch);
    } catch (err) {
      // Kept for the next flush; a newer note wins over the one that failed.
      for (const [id, at] of batch) this.note(id, at);
      throw err;
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush().catch(() => {});
  }
}

/** The later of a stored ISO time and an unwritten use, as ISO; null when neither. */
export function latest(stored: string | null | undefined, unwritten: number | undefined): string | null {
  const at = Math.max(stored ? Date.parse(stored) : 0, unwritten ?? 0);
  return at > 0 ? new Date(at).toISOString() : null;
}
