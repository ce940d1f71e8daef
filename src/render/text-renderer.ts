import type { ColumnStore, DimensionColumn } from '../store/column-store.ts';
import { Turns } from '../store/slices.ts';
import { MAX_DOUBLE_LENGTH, writeDouble } from './json-number.ts';

/** Turns a page of rows into a response body; each text format is one over the same ColumnStore. */
export interface PageRenderer {
  /** `before` + the rows (in the order given) + `after`, as one buffer. */
  render(rids: readonly number[], before: string, after: string): Buffer;
}

/** Where a text format puts its punctuation around the values of a row. */
export interface TextSyntax {
  /**
   * The text of one combination of segment `s`: its dimensions' values, with whatever
   * the format writes before them and, for the last segment, up to the first metric.
   */
  fragment(s: number, values: ReadonlyArray<readonly [column: DimensionColumn, code: number]>): string;
  /** Text before each metric's number after the first. */
  readonly metricGlue: readonly string[];
  /** After a row's last value. */
  readonly tail: string;
  /** Between two rows. */
  readonly separator: string;
}

/** Every segment combination's text: fragments[segment][combination]. */
type Fragments = ReadonlyArray<readonly Buffer[]>;

/**
 * Encodes every combination's fragment once, taking turns with the event loop: a
 * release's stores have tens of thousands of combinations (src/store/slices.ts).
 */
async function encodeFragments(store: ColumnStore, syntax: TextSyntax): Promise<Fragments> {
  const turns = new Turns();
  const fragments: Buffer[][] = [];
  for (const [s, segment] of store.segments.entries()) {
    const list: Buffer[] = [];
    for (let combination = 0; combination < segment.combinations; combination++) {
      if ((combination & 0xfff) === 0) await turns.turn();
      const values = segment.dimensions.map((d) => {
        const column = store.dimensions[d]!;
        return [column, column.codeOfCombination[combination]!] as const;
      });
      list.push(Buffer.from(syntax.fragment(s, values)));
    }
    fragments.push(list);
  }
  return fragments;
}

/**
 * Rows of text from the column store. Every segment combination is one pre-encoded
 * fragment holding its values and the punctuation around them, so a row is a few
 * buffer copies and one number per metric, written as DuckDB's to_json writes it.
 */
export class TextRenderer implements PageRenderer {
  private readonly codes: ReadonlyArray<ArrayLike<number>>;
  /** fragments[segment][combination] */
  private readonly fragments: ReadonlyArray<readonly Buffer[]>;
  private readonly values: readonly Float64Array[];
  private readonly metricGlue: readonly Buffer[];
  private readonly tail: Buffer;
  private readonly separator: Buffer;
  private readonly maxRowBytes: number;

  /** A renderer of `store`'s rows in `syntax`, every fragment encoded first (taking turns with the event loop). */
  static async create(store: ColumnStore, syntax: TextSyntax): Promise<TextRenderer> {
    return new TextRenderer(store, syntax, await encodeFragments(store, syntax));
  }

  private constructor(store: ColumnStore, syntax: TextSyntax, fragments: Fragments) {
    this.fragments = fragments;
    this.codes = store.segments.map((s) => s.codes);
    this.values = store.metrics.map((m) => m.values);
    this.metricGlue = syntax.metricGlue.map((glue) => Buffer.from(glue));
    this.tail = Buffer.from(syntax.tail);
    this.separator = Buffer.from(syntax.separator);
    this.maxRowBytes =
      this.separator.length +
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
    const { codes, fragments, values, metricGlue, tail, separator } = this;
    let at = out.write(before);
    for (let i = 0; i < rids.length; i++) {
      const rid = rids[i]!;
      // A byte or two: a set() call would cost more than the copy.
      if (i > 0) for (let t = 0; t < separator.length; t++) out[at++] = separator[t]!;
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
      for (let t = 0; t < tail.length; t++) out[at++] = tail[t]!;
    }
    at += out.write(after, at);
    return out.subarray(0, at);
  }
}
