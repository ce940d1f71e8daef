import type { ColumnStore } from './column-store.ts';
import { MAX_DOUBLE_LENGTH, writeDouble } from './json-number.ts';

/** Turns a page of rows into a response body; each output format implements it over the same ColumnStore. */
export interface PageRenderer {
  /** `before` + the rows (in the order given) + `after`, as one buffer. */
  render(rids: readonly number[], before: string, after: string): Buffer;
}

export type RowShape = 'financial' | 'reference';

const COMMA = 0x2c;

/**
 * Rows as the API has always served them, byte for byte what DuckDB's to_json made
 * of `{dimensions: {...}, values: {...}}` (financial) or the flat row (reference).
 * Every segment combination is one pre-encoded fragment holding its `"name":value`
 * pairs and the punctuation around them, so a row is a few buffer copies and one
 * number per metric.
 */
export class JsonRenderer implements PageRenderer {
  private readonly codes: ReadonlyArray<ArrayLike<number>>;
  /** fragments[segment][combination] */
  private readonly fragments: ReadonlyArray<readonly Buffer[]>;
  private readonly values: readonly Float64Array[];
  /** Text before each metric's number after the first (`,"name":`), and after the last. */
  private readonly metricGlue: readonly Buffer[];
  private readonly tail: Buffer;
  private readonly maxRowBytes: number;

  constructor(store: ColumnStore, shape: RowShape) {
    const financial = shape === 'financial';
    const metricNames = store.metrics.map((m) => JSON.stringify(m.name));
    const last = store.segments.length - 1;
    this.fragments = store.segments.map((segment, s) => {
      const open = s > 0 ? ',' : financial ? '{"dimensions":{' : '{';
      const close = s < last ? '' : financial ? `},"values":{${metricNames[0]}:` : '}';
      return Array.from({ length: segment.combinations }, (_, combination) => {
        const pairs = segment.dimensions.map((d) => {
          const column = store.dimensions[d]!;
          return `${JSON.stringify(column.name)}:${column.dictionary.json[column.codeOfCombination[combination]!]}`;
        });
        return Buffer.from(open + pairs.join(',') + close);
      });
    });
    this.codes = store.segments.map((s) => s.codes);
    this.values = store.metrics.map((m) => m.values);
    this.metricGlue = metricNames.slice(1).map((name) => Buffer.from(`,${name}:`));
    this.tail = Buffer.from(financial ? '}}' : '');
    this.maxRowBytes =
      1 +
      this.tail.length +
      this.fragments.reduce((sum, list) => sum + list.reduce((m, f) => Math.max(m, f.length), 0), 0) +
      this.metricGlue.reduce((sum, g) => sum + g.length, 0) +
      this.values.length * MAX_DOUBLE_LENGTH;
  }

  /** Bytes of all pre-encoded fragments: what this renderer keeps beside the store. */
  get fragmentBytes(): number {
    return this.fragments.reduce((sum, list) => sum + list.reduce((n, f) => n + f.length, 0), 0);
  }

  render(rids: readonly number[], before: string, after: string): Buffer {
    const out = Buffer.allocUnsafe(Buffer.byteLength(before) + Buffer.byteLength(after) + rids.length * this.maxRowBytes);
    const { codes, fragments, values, metricGlue, tail } = this;
    let at = out.write(before);
    for (let i = 0; i < rids.length; i++) {
      const rid = rids[i]!;
      if (i > 0) out[at++] = COMMA;
      for (let s = 0; s < codes.length; s++) {
        const fragment = fragments[s]![codes[s]![rid]!]!;
        out.set(fragment, at);
        at += fragment.length;
      }
      for (let m = 0; m < values.length; m++) {
        if (m > 0) {
          out.set(metricGlue[m - 1]!, at);
          at += metricGlue[m - 1]!.length;
        }
        at = writeDouble(out, at, values[m]![rid]!);
      }
      // A byte or two: a set() call would cost more than the copy.
      for (let t = 0; t < tail.length; t++) out[at++] = tail[t]!;
    }
    at += out.write(after, at);
    return out.subarray(0, at);
  }
}
