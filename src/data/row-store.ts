const NEWLINE = 0x0a;
const COMMA = 0x2c;

/**
 * Every row of a dataset as its finished JSON text, in `rid` order, in one buffer.
 * DuckDB finds which rows a page holds; the bytes come from here. Turning DuckDB
 * strings into JS strings costs the main thread far more per row than copying
 * bytes, and a response body made of bytes needs no encoding on the way out.
 */
export class RowStore {
  private constructor(
    private readonly bytes: Buffer,
    /** offsets[rid] is where row `rid` starts; offsets[rows] is one past the end. */
    private readonly offsets: Float64Array,
  ) {}

  get rowCount(): number {
    return this.offsets.length - 1;
  }

  get byteLength(): number {
    return this.bytes.length;
  }

  /**
   * Indexes newline-terminated rows. Each row must be a JSON object on one line
   * (JSON escapes newlines inside strings), which is checked row by row.
   */
  static fromLines(bytes: Buffer, rows: number): RowStore {
    const offsets = new Float64Array(rows + 1);
    let start = 0;
    for (let rid = 0; rid < rows; rid++) {
      const end = bytes.indexOf(NEWLINE, start);
      if (end < 0 || bytes[start] !== 0x7b || bytes[end - 1] !== 0x7d) {
        throw new Error(`row ${rid} of ${rows} is not a one-line JSON object`);
      }
      offsets[rid] = start;
      start = end + 1;
    }
    if (start !== bytes.length) throw new Error(`${rows} rows expected, more text follows`);
    offsets[rows] = start;
    return new RowStore(bytes, offsets);
  }

  /** `before` + the rows joined by commas + `after`, as one buffer. */
  render(rids: readonly number[], before: string, after: string): Buffer {
    let size = Buffer.byteLength(before) + Buffer.byteLength(after) + Math.max(0, rids.length - 1);
    for (const rid of rids) size += this.offsets[rid + 1]! - this.offsets[rid]! - 1;
    const out = Buffer.allocUnsafe(size);
    let at = out.write(before);
    rids.forEach((rid, i) => {
      if (i > 0) out[at++] = COMMA;
      at += this.bytes.copy(out, at, this.offsets[rid], this.offsets[rid + 1]! - 1);
    });
    at += out.write(after, at);
    return out;
  }
}
