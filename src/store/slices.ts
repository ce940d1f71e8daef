/**
 * Work that grows with the data gives the event loop a turn every few milliseconds,
 * so requests keep being answered while a release loads beside the one served
 * (docs/etl.md "Switching releases"). A loop runs in slices of `SLICE` items and
 * calls `turn()` between them; only a slice that ends `BUDGET_MS` after the last
 * turn yields, so a fast machine does not pay for a yield per slice. Work that can be
 * cancelled (a request's) makes its Turns with the request's signal: the next turn
 * after it aborts throws its reason, so the work stops within a slice.
 */
export const SLICE = 1 << 12;
const BUDGET_MS = 4;

export class Turns {
  private last = performance.now();

  constructor(private readonly signal?: AbortSignal) {}

  /** Resolves at once within the budget, else after the event loop's next turn; throws once the signal has aborted. */
  turn(): Promise<void> | undefined {
    this.signal?.throwIfAborted();
    const now = performance.now();
    if (now - this.last < BUDGET_MS) return undefined;
    return new Promise<void>((resolve) =>
      setImmediate(() => {
        this.last = performance.now();
        resolve();
      }),
    );
  }
}

/** Runs `work` over [0, count) in slices, taking turns with the event loop between them. */
export async function inSlices(count: number, work: (start: number, end: number) => void, turns = new Turns()): Promise<void> {
  for (let start = 0; start < count; start += SLICE) {
    await turns.turn();
    work(start, Math.min(count, start + SLICE));
  }
}

/**
 * The indexes [0, count) in the order `compare` sorts them, stably: a bottom-up merge
 * sort whose passes run in slices, so sorting a large result takes turns with the
 * event loop as the loops above do (Array.prototype.sort cannot be paused).
 */
export async function sortInSlices(count: number, compare: (a: number, b: number) => number, turns = new Turns()): Promise<Uint32Array> {
  let from = new Uint32Array(count);
  let to = new Uint32Array(count);
  await inSlices(
    count,
    (start, end) => {
      for (let i = start; i < end; i++) from[i] = i;
    },
    turns,
  );
  for (let width = 1; width < count; width *= 2) {
    // Merges runs [lo, mid) and [mid, hi) of `from` into `to`, one output position at a time, so a slice may end mid-merge.
    let mid = 0;
    let hi = 0;
    let i = 0;
    let j = 0;
    await inSlices(
      count,
      (start, end) => {
        for (let k = start; k < end; k++) {
          if (k === hi) {
            mid = Math.min(k + width, count);
            hi = Math.min(k + 2 * width, count);
            i = k;
            j = mid;
          }
          to[k] = i < mid && (j >= hi || compare(from[i]!, from[j]!) <= 0) ? from[i++]! : from[j++]!;
        }
      },
      turns,
    );
    [from, to] = [to, from];
  }
  return from;
}
