import {
  type Data,
  type DataType,
  Dictionary,
  Field,
  Float64,
  Int8,
  Int16,
  Int32,
  makeData,
  RecordBatch,
  RecordBatchStreamWriter,
  Schema,
  Struct,
  Utf8,
  type Vector,
  vectorFromArray,
} from 'apache-arrow';
import { INTEGER_DIMENSIONS } from '../registry.ts';
import type { ColumnStore } from '../store/column-store.ts';

type Typed = Int8Array | Int16Array | Int32Array | Float64Array;
type TypedConstructor = new (buffer: ArrayBuffer, byteOffset: number, length: number) => Typed;

/**
 * One column of a page: its Arrow type (with the dictionary for text) and how to
 * write its values for `rids` into a typed array, from each row's combination
 * code in the column's segment.
 */
interface Column {
  readonly name: string;
  readonly type: DataType;
  readonly dictionary?: Vector<Utf8>;
  readonly array: TypedConstructor;
  fill(target: Typed, combinations: readonly Int32Array[], rids: readonly number[]): void;
}

/** Where a page of `length` rows puts its bytes: the same for every page of that length. */
interface Layout {
  /** The record batch message's header: continuation, metadata length, metadata, padding. */
  readonly header: Buffer;
  readonly bodyLength: number;
  /** Byte offset of each column's values in the body. */
  readonly offsets: readonly number[];
}

/** An Int32Array reused by every page: a page allocates nothing but its own bytes. */
function scratch(): (length: number) => Int32Array {
  let array = new Int32Array(0);
  return (length) => {
    if (array.length < length) array = new Int32Array(Math.max(length, array.length * 2));
    return array.subarray(0, length);
  };
}

/** The narrowest signed index type for a dictionary of `size` values (Arrow's indices are signed). */
function indexType(size: number): {
  type: Int8 | Int16 | Int32;
  array: Int8ArrayConstructor | Int16ArrayConstructor | Int32ArrayConstructor;
} {
  if (size <= 0x80) return { type: new Int8(), array: Int8Array };
  if (size <= 0x8000) return { type: new Int16(), array: Int16Array };
  return { type: new Int32(), array: Int32Array };
}

/** The stream's end-of-stream marker: continuation token, zero length. */
/** What ends an Arrow IPC stream. */
export const END_OF_STREAM = Buffer.from(Int32Array.of(-1, 0).buffer);

/**
 * apache-arrow's stream writer, collecting what it writes. The schema and the
 * dictionaries are the same for every page of a dataset, so they are written once
 * (`prefix`). A page's record batch message depends on its values only in its body:
 * with no nulls and fixed-width columns, its header and the body's layout depend on
 * the row count alone, so the writer lays out one message per row count and pages
 * fill in their values.
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

  /** The layout of `batch`'s message, as `_writeRecordBatch` would write it. */
  layout(batch: RecordBatch): Layout {
    this.chunks = []; // nothing a failed call left behind
    const { byteLength, bufferRegions } = this._assembleRecordBatch(batch);
    // Each column is a validity buffer (empty: no nulls) then its values.
    const columns = batch.schema.fields.length;
    if (bufferRegions.length !== 2 * columns) throw new Error(`Arrow layout: ${bufferRegions.length} buffers for ${columns} columns`);
    const offsets = Array.from({ length: columns }, (_, i) => bufferRegions[2 * i + 1]!.offset);
    this._writeRecordBatch(batch);
    const message = this.take();
    return { header: message.subarray(0, message.length - byteLength), bodyLength: byteLength, offsets };
  }

  private take(): Buffer {
    const out = Buffer.concat(this.chunks);
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
  /** By row count; pages have at most the largest `limit` rows, so this stays small. */
  private readonly layouts = new Map<number, Layout>();

  constructor(store: ColumnStore) {
    const columns: Column[] = [];
    store.dimensions.forEach((dimension, d) => {
      const values = dimension.dictionary.values;
      const codeOf = dimension.codeOfCombination;
      if (INTEGER_DIMENSIONS.has(dimension.name)) {
        columns.push({
          name: dimension.name,
          type: new Int32(),
          array: Int32Array,
          fill: (target, combinations, rids) => {
            const combination = combinations[dimension.segment]!;
            for (let i = 0; i < rids.length; i++) target[i] = values[codeOf[combination[i]!]!] as number;
          },
        });
        return;
      }
      const index = indexType(values.length);
      columns.push({
        name: dimension.name,
        type: new Dictionary(new Utf8(), index.type, d),
        dictionary: vectorFromArray(values as string[], new Utf8()) as Vector<Utf8>,
        array: index.array,
        fill: (target, combinations, rids) => {
          const combination = combinations[dimension.segment]!;
          for (let i = 0; i < rids.length; i++) target[i] = codeOf[combination[i]!]!;
        },
      });
    });
    for (const metric of store.metrics) {
      columns.push({
        name: metric.name,
        type: new Float64(),
        array: Float64Array,
        fill: (target, _, rids) => {
          for (let i = 0; i < rids.length; i++) target[i] = metric.values[rids[i]!]!;
        },
      });
    }
    this.schema = new Schema(columns.map((column) => new Field(column.name, column.type, false)));
    this.columns = columns;
    this.segments = store.segments.map((segment) => ({ codes: segment.codes, page: scratch() }));
    this.writer = new PageWriter(this.schema, this.emptyBatch(0));
  }

  /**
   * The stream apache-arrow's writer would make for this page (test/store.test.ts
   * compares the two), written straight into one buffer: no Arrow objects per page.
   */
  /** What every page starts with: the schema and the dictionaries. A longer stream writes it once, then each page's batch. */
  get streamStart(): Buffer {
    return this.writer.prefix;
  }

  render(rids: readonly number[]): Buffer {
    const layout = this.layout(rids.length);
    const { prefix } = this.writer;
    const bodyStart = prefix.length + layout.header.length;
    // A fresh ArrayBuffer is zeroed (the padding) and 8-byte aligned, as every offset below is.
    const out = Buffer.from(new ArrayBuffer(bodyStart + layout.bodyLength + END_OF_STREAM.length));
    prefix.copy(out, 0);
    layout.header.copy(out, prefix.length);
    END_OF_STREAM.copy(out, bodyStart + layout.bodyLength);
    // Each row's combination code per segment, read once for every dimension it holds.
    const combinations = this.segments.map(({ codes, page }) => {
      const combination = page(rids.length);
      for (let i = 0; i < rids.length; i++) combination[i] = codes[rids[i]!]!;
      return combination;
    });
    this.columns.forEach((column, c) => {
      column.fill(new column.array(out.buffer, bodyStart + layout.offsets[c]!, rids.length), combinations, rids);
    });
    return out;
  }

  private layout(rows: number): Layout {
    let layout = this.layouts.get(rows);
    if (!layout) {
      layout = this.writer.layout(this.emptyBatch(rows));
      this.layouts.set(rows, layout);
    }
    return layout;
  }

  /** A batch of `rows` rows of zeros: what the writer needs to lay a page of that length out. */
  private emptyBatch(rows: number): RecordBatch {
    const children = this.columns.map(({ type, array, dictionary }) =>
      makeData({
        type,
        length: rows,
        nullCount: 0,
        data: new array(new ArrayBuffer(rows * array.prototype.BYTES_PER_ELEMENT), 0, rows),
        dictionary,
      } as never),
    ) as Data<DataType>[];
    return new RecordBatch(this.schema, makeData({ type: new Struct(this.schema.fields), length: rows, nullCount: 0, children }));
  }
}
