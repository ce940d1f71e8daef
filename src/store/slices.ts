/**
 * Work that grows with the data gives the event loop a turn every few milliseconds,
 * so requests keep being answered while a release loads beside the one served
 * (docs/etl.md "Switching releases"). A loop runs in slices of `SLICE` items and
 * calls `turn()` between them; only a slice that ends `BUDGET_MS` after the last
 * turn yields, so a fast machine does not pay for a yield per slice.
 */
export const SLICE = 1 << 15;
const BUDGET_MS = 4;

export class Turns {
  private last = performance.now();

  /** Resolves at once within the budget, else after the event loop's next turn. */
  turn(): Promise<void> | undefined {
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
