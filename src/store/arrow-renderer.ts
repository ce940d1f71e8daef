import {
  Dictionary,
  Field,
  Float64,
  Int16,
  Int32,
  Int8,
  RecordBatch,
  RecordBatchStreamWriter,
  Schema,
  Struct,
  Utf8,
  makeData,
  vectorFromArray,
  type Data,
  type DataType,
  type Vector,
} from 'apache-arrow';
import type { ColumnStore } from './column-store.ts';
import { INTEGER_DIMENSIONS } from '../registry.ts';

/** A column of one page, made from the page's combination code in each segment. */
type Column = (combinations: readonly Int32Array[], rids: readonly number[]) => Data;

type Typed = Int8Array | Int16Array | Int32Array | Float64Array;

/**
 * A typed array reused by every page: the stream is copied out before the next page
 * is made, so a page allocates almost nothing the garbage collector must trace.
 */
function scratch<T extends Typed>(make: (length: number) => T): (length: number) => T {
  let array = make(0);
  return (length) => {
    if (array.length < length) array = make(Math.max(length, array.length * 2));
    return array.subarray(0, length) as T;
  };
}

/** The narrowest signed index type for a dictionary of `size` values (Arrow's indices are signed). */
function indexType(size: number): { type: Int8 | Int16 | Int32; array: Int8ArrayConstructor | Int16ArrayConstructor | Int32ArrayConstructor } {
  if (size <= 0x80) return { type: new Int8(), array: Int8Array };
  if (size <= 0x8000) return { type: new Int16(), array: Int16Array };
  return { type: new Int32(), array: Int32Array };
}

/** The stream's end-of-stream marker: continuation token, zero length. */
const END_OF_STREAM = Buffer.from(Int32Array.of(-1, 0).buffer);

/**
 * apache-arrow's stream writer, collecting what it writes. The schema and the
 * dictionaries are the same for every page of a dataset, so they are written once
 * (`prefix`); a page is then only its record batch, because the writer skips
 * dictionaries it has already written.
 */
class PageWriter extends RecordBatchStreamWriter {
  private chunks: Uint8Array[] = [];
  readonly prefix: Buffer;

  constructor(schema: Schema, first: RecordBatch) {
    super();
    this.reset(undefined, schema);
    this._writeDictionaries(first);
    this.prefix = this.take();
  }

  protected override _write(chunk: ArrayBufferView): this {
    if (chunk.byteLength > 0) this.chunks.push(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    return this;
  }

  /** One page's stream. */
  page(batch: RecordBatch): Buffer {
    this.chunks = []; // nothing a failed page left behind
    this._writeRecordBatch(batch);
    return this.take([this.prefix], END_OF_STREAM);
  }

  private take(before: Buffer[] = [], after?: Buffer): Buffer {
    const out = Buffer.concat([...before, ...this.chunks, ...(after ? [after] : [])]);
    this.chunks = [];
    return out;
  }
}

/**
 * A page as one Arrow IPC stream (schema, dictionaries, one record batch): string
 * dimensions dictionary-encoded straight from the store's dictionaries and codes,
 * `year` Int32, metrics Float64, columns in the CSV's order. Every page of a dataset
 * carries the same whole dictionaries, so codes mean the same on every page.
 */
export class ArrowRenderer {
  private readonly schema: Schema;
  private readonly columns: readonly Column[];
  private readonly segments: ReadonlyArray<{ codes: ArrayLike<number>; page: (length: number) => Int32Array }>;
  private readonly writer: PageWriter;

  constructor(store: ColumnStore) {
    const fields: Field[] = [];
    const columns: Column[] = [];
    store.dimensions.forEach((dimension, d) => {
      const values = dimension.dictionary.values;
      if (INTEGER_DIMENSIONS.has(dimension.name)) {
        const type = new Int32();
        fields.push(new Field(dimension.name, type, false));
        const page = scratch((n) => new Int32Array(n));
        columns.push((combinations, rids) => {
          const years = page(rids.length);
          const combination = combinations[dimension.segment]!;
          for (let i = 0; i < rids.length; i++) years[i] = values[dimension.codeOfCombination[combination[i]!]!] as number;
          return makeData({ type, length: rids.length, nullCount: 0, data: years });
        });
        return;
      }
      const index = indexType(values.length);
      const type = new Dictionary(new Utf8(), index.type, d);
      const dictionary = vectorFromArray(values as string[], new Utf8()) as Vector<Utf8>;
      fields.push(new Field(dimension.name, type, false));
      const page = scratch((n) => new index.array(n));
      columns.push((combinations, rids) => {
        const codes = page(rids.length);
        const combination = combinations[dimension.segment]!;
        for (let i = 0; i < rids.length; i++) codes[i] = dimension.codeOfCombination[combination[i]!]!;
        return makeData({ type, length: rids.length, nullCount: 0, data: codes, dictionary });
      });
    });
    for (const metric of store.metrics) {
      const type = new Float64();
      fields.push(new Field(metric.name, type, false));
      const page = scratch((n) => new Float64Array(n));
      columns.push((_, rids) => {
        const values = page(rids.length);
        for (let i = 0; i < rids.length; i++) values[i] = metric.values[rids[i]!]!;
        return makeData({ type, length: rids.length, nullCount: 0, data: values });
      });
    }
    this.schema = new Schema(fields);
    this.columns = columns;
    this.segments = store.segments.map((segment) => ({ codes: segment.codes, page: scratch((n) => new Int32Array(n)) }));
    this.writer = new PageWriter(this.schema, this.batch([]));
  }

  render(rids: readonly number[]): Buffer {
    return this.writer.page(this.batch(rids));
  }

  private batch(rids: readonly number[]): RecordBatch {
    // Each row's combination code per segment, read once for every dimension it holds.
    const combinations = this.segments.map(({ codes, page }) => {
      const combination = page(rids.length);
      for (let i = 0; i < rids.length; i++) combination[i] = codes[rids[i]!]!;
      return combination;
    });
    const children = this.columns.map((column) => column(combinations, rids)) as Data<DataType>[];
    return new RecordBatch(this.schema, makeData({ type: new Struct(this.schema.fields), length: rids.length, nullCount: 0, children }));
  }
}
