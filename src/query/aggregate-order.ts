import { inSlices, sortInSlices, type Turns } from '../store/slices.ts';
import type { Having } from './options/derived.ts';

// The last steps of an aggregate: `having` keeps the groups whose values pass every
// condition, then the groups are sorted by the plan's order (ties, and the default,
// by the group tuple), before any page is cut. Each pass runs in slices
// (store/slices.ts): a result of a hundred thousand groups takes turns with the
// requests around it.

/** Every group of an aggregate as flat arrays: `width` codes and `n` values per group. */
export interface FlatGroups {
  readonly count: number;
  /** Dictionary codes of each group; -1 where a rollup row totals a dimension. */
  readonly codes: Int32Array;
  readonly width: number;
  /** The dimensions the codes are of, `width` of them. */
  readonly dimensions: readonly string[];
  /** Each group's values, one per key of the answer; NaN for null. */
  readonly values: Float64Array;
  /** By index into `values`: exact decimals to print instead of a value's double. */
  readonly exact: ReadonlyMap<number, string>;
  readonly n: number;
  /** The value keys, `n` of them. */
  readonly keys: readonly string[];
  /** Served rows in each group. */
  readonly rows: Float64Array;
}

/** A group_by dimension or a value key (or `rows`), as the plan names it. */
export interface OrderBy {
  readonly key: string;
  readonly descending: boolean;
}

/**
 * Each group's value of `key`: a value key's or `rows`. A key the answer has no column
 * for is null throughout, so `having` on it passes no group and ordering by it leaves
 * the order to the group tuple. Only a wide answer has such keys: the plan allows a
 * key for every year, and which years have columns is known once the rows are grouped.
 */
function valuesOf(flat: FlatGroups, key: string): (g: number) => number {
  const { rows, values, n } = flat;
  if (key === 'rows') return (g) => rows[g]!;
  const k = flat.keys.indexOf(key);
  return k < 0 ? () => NaN : (g) => values[g * n + k]!;
}

interface Condition {
  readonly having: Having;
  readonly value: (g: number) => number;
}

function passesAll(conditions: readonly Condition[], g: number): boolean {
  for (let i = 0; i < conditions.length; i++) if (!passes(conditions[i]!.having, conditions[i]!.value(g))) return false;
  return true;
}

/** Whether `value` passes `h`; a null (NaN) never does. */
export function passes(h: Having, value: number): boolean {
  if (Number.isNaN(value)) return false;
  switch (h.op) {
    case 'eq':
      return value === h.value;
    case 'neq':
      return value !== h.value;
    case 'gt':
      return value > h.value;
    case 'gte':
      return value >= h.value;
    case 'lt':
      return value < h.value;
    case 'lte':
      return value <= h.value;
  }
}

const compare = (a: number, b: number) => (a < b ? -1 : a > b ? 1 : 0);

/** The groups that pass every condition, sorted: nulls (NaN) last whichever the direction, so a top N never starts with unknowns. */
export async function filterAndSort(
  flat: FlatGroups,
  having: readonly Having[],
  order: OrderBy | undefined,
  turns: Turns,
): Promise<FlatGroups> {
  const { width, codes } = flat;
  const conditions = having.map((h) => ({ having: h, value: valuesOf(flat, h.key) }));
  const kept: number[] = [];
  await inSlices(
    flat.count,
    (start, end) => {
      for (let g = start; g < end; g++) if (passesAll(conditions, g)) kept.push(g);
    },
    turns,
  );
  // Rolled-up dimensions (-1) sort after every value, so a subtotal follows its groups.
  const codeKey = (code: number) => (code < 0 ? Infinity : code);
  const byTuple = (a: number, b: number) => {
    for (let i = 0; i < width; i++) {
      const d = compare(codeKey(codes[a * width + i]!), codeKey(codes[b * width + i]!));
      if (d !== 0) return d;
    }
    return 0;
  };
  let byOrder: (a: number, b: number) => number = () => 0;
  if (order) {
    const sign = order.descending ? -1 : 1;
    const dimension = flat.dimensions.indexOf(order.key);
    const value = valuesOf(flat, order.key);
    byOrder =
      dimension >= 0
        ? (a, b) => sign * compare(codeKey(codes[a * width + dimension]!), codeKey(codes[b * width + dimension]!))
        : (a, b) => {
            const x = value(a);
            const y = value(b);
            if (Number.isNaN(x) || Number.isNaN(y)) return Number.isNaN(x) ? (Number.isNaN(y) ? 0 : 1) : -1;
            return sign * compare(x, y);
          };
  }
  const sorted = await sortInSlices(kept.length, (a, b) => byOrder(kept[a]!, kept[b]!) || byTuple(kept[a]!, kept[b]!), turns);
  return permute(flat, kept, sorted, turns);
}

/** The groups `kept[order[0]]`, `kept[order[1]]`… */
async function permute(flat: FlatGroups, kept: readonly number[], order: Uint32Array, turns: Turns): Promise<FlatGroups> {
  const { width, n } = flat;
  const codes = new Int32Array(order.length * width);
  const values = new Float64Array(order.length * n);
  const rows = new Float64Array(order.length);
  const exact = new Map<number, string>();
  const moved = flat.exact.size > 0;
  await inSlices(
    order.length,
    (start, end) => {
      for (let to = start; to < end; to++) {
        const from = kept[order[to]!]!;
        codes.set(flat.codes.subarray(from * width, (from + 1) * width), to * width);
        values.set(flat.values.subarray(from * n, (from + 1) * n), to * n);
        rows[to] = flat.rows[from]!;
        if (moved)
          for (let k = 0; k < n; k++) {
            const text = flat.exact.get(from * n + k);
            if (text !== undefined) exact.set(to * n + k, text);
          }
      }
    },
    turns,
  );
  return { ...flat, count: order.length, codes, values, exact, rows };
}
