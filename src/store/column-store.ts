// A served dataset as columns in `rid` order, the one representation every output
// format reads: dimensions as small integer codes into a dictionary of distinct
// values (Arrow's dictionary encoding), metrics as doubles.
//
// Adjacent dimensions that determine each other or rarely combine (country fixes
// region, product fixes category, ...) are stored fused: one code per row names the
// combination, and a small table per dimension maps a combination back to that
// dimension's own code. A JSON page then copies one fragment per combination
// instead of one per dimension, and the fused codes take fewer bytes than separate ones.

import { inSlices, SLICE, Turns } from './slices.ts';

export type CodeArray = Uint8Array | Uint16Array | Uint32Array;

/** The smallest unsigned array that holds codes 0..count-1. */
export function codeArray(count: number, length: number): CodeArray {
  if (count <= 0x100) return new Uint8Array(length);
  if (count <= 0x10000) return new Uint16Array(length);
  return new Uint32Array(length);
}

export interface Dictionary {
  /** Distinct values in code order (sorted, as the serving order sorts them). */
  readonly values: readonly (string | number)[];
  /** Each value as DuckDB's to_json writes it, so output keeps DuckDB's escaping. */
  readonly json: readonly string[];
}

export interface DimensionColumn {
  readonly name: string;
  readonly dictionary: Dictionary;
  /** Index of the segment holding this dimension. */
  readonly segment: number;
  /** This dimension's dictionary code for each combination of its segment. */
  readonly codeOfCombination: CodeArray;
}

/** One or more adjacent dimensions stored as a single combination code per row. */
export interface Segment {
  /** Indexes into `dimensions`, adjacent and in order. */
  readonly dimensions: readonly number[];
  readonly combinations: number;
  /** Combination code of each row, by `rid`. */
  readonly codes: CodeArray;
}

export interface MetricColumn {
  readonly name: string;
  readonly values: Float64Array;
  /** The most decimals its values were written with (src/store/decimals.ts); null: summed as doubles. */
  readonly scale: number | null;
}

/** One dimension as the loader reads it: a code per row into its dictionary. */
export interface DimensionInput {
  readonly name: string;
  readonly dictionary: Dictionary;
  readonly codes: CodeArray;
}

export class ColumnStore {
  private constructor(
    readonly rowCount: number,
    readonly dimensions: readonly DimensionColumn[],
    readonly segments: readonly Segment[],
    readonly metrics: readonly MetricColumn[],
  ) {}

  /**
   * Fuses adjacent dimensions, the pair with the fewest combinations first, while
   * a fused segment has at most `maxCombinations` (1 keeps every dimension apart).
   * Every pass over the rows takes `turns` with the event loop (src/store/slices.ts).
   */
  static async build(
    rowCount: number,
    dimensions: readonly DimensionInput[],
    metrics: readonly MetricColumn[],
    maxCombinations: number,
    turns = new Turns(),
  ): Promise<ColumnStore> {
    const parts = await fuse(
      dimensions.map(
        (d, i): Part => ({
          first: i,
          codes: d.codes,
          combinations: d.dictionary.values.length,
          members: [identity(d.dictionary.values.length)],
        }),
      ),
      rowCount,
      maxCombinations,
      turns,
    );
    const segments = parts.map(
      (p): Segment => ({ dimensions: p.members.map((_, k) => p.first + k), combinations: p.combinations, codes: p.codes }),
    );
    const columns = parts.flatMap((p, s) =>
      p.members.map((member, k): DimensionColumn => ({ ...pick(dimensions[p.first + k]!), segment: s, codeOfCombination: member })),
    );
    return new ColumnStore(rowCount, columns, segments, metrics);
  }

  /** Dictionary code of dimension `dimension` (an index) in row `rid`. */
  code(dimension: number, rid: number): number {
    const column = this.dimensions[dimension]!;
    return column.codeOfCombination[this.segments[column.segment]!.codes[rid]!]!;
  }

  /** Bytes the columns take per row, fused codes and metrics (dictionaries are per value, not per row). */
  get bytesPerRow(): number {
    return [...this.segments.map((s) => s.codes), ...this.metrics.map((m) => m.values)].reduce((sum, a) => sum + a.BYTES_PER_ELEMENT, 0);
  }

  /** Bytes of the columns (codes, each combination's codes, metrics), what the store holds beside its dictionaries. */
  get bytes(): number {
    const arrays = [
      ...this.segments.map((s) => s.codes),
      ...this.dimensions.map((d) => d.codeOfCombination),
      ...this.metrics.map((m) => m.values),
    ];
    return arrays.reduce((sum, a) => sum + a.byteLength, 0);
  }
}

const pick = ({ name, dictionary }: DimensionInput) => ({ name, dictionary });

function identity(count: number): CodeArray {
  const codes = codeArray(count, count);
  for (let i = 0; i < count; i++) codes[i] = i;
  return codes;
}

interface Part {
  readonly first: number;
  readonly codes: CodeArray;
  readonly combinations: number;
  /** For each dimension of the part: its code in each combination. */
  readonly members: readonly CodeArray[];
}

// Combination keys index a dense table below this size; a Map above it. One table
// serves every pair of a dataset: a fresh one per pair was garbage enough to raise
// the process's resident memory after a load.
const DENSE_KEYS = 1 << 20;

async function fuse(parts: Part[], rows: number, max: number, turns: Turns): Promise<Part[]> {
  const dense = new Int32Array(DENSE_KEYS);
  const combine = (a: Part, b: Part, build: boolean) => combinePair(a, b, rows, max, build, dense, turns);
  // Combination counts of adjacent pairs, cached by the pair's left part (a merge replaces both parts).
  const counts = new Map<Part, number>();
  for (;;) {
    for (let i = 0; i + 1 < parts.length; i++) {
      if (!counts.has(parts[i]!)) counts.set(parts[i]!, (await combine(parts[i]!, parts[i + 1]!, false))?.combinations ?? Infinity);
    }
    let best = -1;
    for (let i = 0; i + 1 < parts.length; i++) {
      const count = counts.get(parts[i]!)!;
      if (count <= max && (best < 0 || count < counts.get(parts[best]!)!)) best = i;
    }
    if (best < 0) return parts;
    counts.delete(parts[best]!);
    if (best > 0) counts.delete(parts[best - 1]!);
    parts.splice(best, 2, (await combine(parts[best]!, parts[best + 1]!, true))!);
  }
}

/**
 * `a` and `b` as one part, or null when they have more than `max` combinations.
 * Without `build` only the count is wanted: the result has no codes of its own.
 */
async function combinePair(
  a: Part,
  b: Part,
  rows: number,
  max: number,
  build: boolean,
  table: Int32Array,
  turns: Turns,
): Promise<Part | null> {
  const keys = a.combinations * b.combinations;
  const dense = keys <= table.length ? table.fill(-1, 0, keys) : null;
  const sparse = dense ? null : new Map<number, number>();
  // At most `max` combinations, so codes this wide always fit; narrowed below if fewer.
  const codes = build ? codeArray(max, rows) : null;
  const left: number[] = [];
  const right: number[] = [];
  for (let start = 0; start < rows; start += SLICE) {
    await turns.turn();
    const end = Math.min(rows, start + SLICE);
    for (let rid = start; rid < end; rid++) {
      const x = a.codes[rid]!;
      const y = b.codes[rid]!;
      const key = x * b.combinations + y;
      let id = dense ? dense[key]! : (sparse!.get(key) ?? -1);
      if (id < 0) {
        id = left.length;
        if (id >= max) return null;
        if (dense) dense[key] = id;
        else sparse!.set(key, id);
        left.push(x);
        right.push(y);
      }
      if (codes) codes[rid] = id;
    }
  }
  const combinations = left.length;
  if (!codes) return { first: a.first, codes: a.codes, combinations, members: [] };
  const narrow = codeArray(combinations, 1).constructor === codes.constructor ? codes : codeArray(combinations, rows);
  if (narrow !== codes) await inSlices(rows, (start, end) => narrow.set(codes.subarray(start, end), start), turns);
  const through = (member: CodeArray, picks: number[]) => {
    let count = 0;
    for (const code of member) count = Math.max(count, code + 1);
    const out = codeArray(count, combinations);
    picks.forEach((code, id) => {
      out[id] = member[code]!;
    });
    return out;
  };
  return {
    first: a.first,
    codes: narrow,
    combinations,
    members: [...a.members.map((m) => through(m, left)), ...b.members.map((m) => through(m, right))],
  };
}
