import type { DatasetKind } from '../registry.ts';
import type { ColumnStore } from '../store/column-store.ts';
import { ArrowRenderer, END_OF_STREAM } from './arrow-renderer.ts';
import { CsvRenderer } from './csv-renderer.ts';
import { envelopeAfter, envelopeBefore, type PageEnvelope } from './formats.ts';
import { JsonRenderer } from './json-renderer.ts';
import { NdjsonRenderer } from './ndjson-renderer.ts';

/** The formats a page of rows is served in (the Accept of /v1/financials and /v1/reference). */
export type PageFormat = 'json' | 'csv' | 'arrow';
/** The formats rows are streamed in, a batch at a time (bulk exports; Parquet is DuckDB's to write). */
export type StreamFormat = 'csv' | 'arrow' | 'ndjson';

/**
 * A dataset's rows in every format, each rendered from the one ColumnStore. Built when
 * a release loads, since each keeps its pre-encoded fragments; NDJSON only when an
 * export first asks for it.
 */
export class RowRenderers {
  readonly json: JsonRenderer;
  readonly csv: CsvRenderer;
  readonly arrow: ArrowRenderer;
  private ndjsonRenderer: NdjsonRenderer | undefined;

  constructor(
    private readonly store: ColumnStore,
    kind: DatasetKind,
  ) {
    this.json = new JsonRenderer(store, kind);
    this.csv = new CsvRenderer(store);
    this.arrow = new ArrowRenderer(store);
  }

  get ndjson(): NdjsonRenderer {
    return (this.ndjsonRenderer ??= new NdjsonRenderer(this.store));
  }

  /** One page: JSON in the envelope, CSV with its header row, or a whole Arrow stream. */
  page(format: PageFormat, rids: readonly number[], envelope: PageEnvelope): Buffer {
    if (format === 'csv') return this.csv.render(rids, this.csv.header, '');
    if (format === 'arrow') return this.arrow.render(rids);
    return this.json.render(rids, envelopeBefore(envelope), envelopeAfter(envelope));
  }

  /**
   * Every row `batches` yields, as one file in `format`: CSV's header once, one Arrow
   * stream (its schema and dictionaries once, then a record batch per batch), NDJSON lines.
   */
  async *stream(format: StreamFormat, batches: AsyncIterable<readonly number[]>): AsyncGenerator<Buffer> {
    const { arrow } = this;
    const prefix = arrow.streamStart.length;
    if (format === 'csv') yield Buffer.from(this.csv.header);
    if (format === 'arrow') yield arrow.streamStart;
    for await (const rids of batches) {
      if (format === 'csv') yield this.csv.render(rids, '', '');
      else if (format === 'ndjson') yield this.ndjson.render(rids, '', '');
      else {
        const page = arrow.render(rids);
        yield page.subarray(prefix, page.length - END_OF_STREAM.length);
      }
    }
    if (format === 'arrow') yield END_OF_STREAM;
  }
}
