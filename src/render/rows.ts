import type { DatasetKind } from '../registry.ts';
import type { ColumnStore } from '../store/column-store.ts';
import { SLICE, Turns } from '../store/slices.ts';
import { ArrowRenderer, END_OF_STREAM } from './arrow-renderer.ts';
import { csvHeader, csvSyntax } from './csv-syntax.ts';
import { envelopeAfter, envelopeBefore, type PageEnvelope } from './formats.ts';
import { jsonSyntax } from './json-syntax.ts';
import { ndjsonSyntax } from './ndjson-syntax.ts';
import { TextRenderer } from './text-renderer.ts';

/** The formats a page of rows is served in (the Accept of /v1/financials and /v1/reference). */
export type PageFormat = 'json' | 'csv' | 'arrow';
/** The formats rows are streamed in, a batch at a time (bulk exports; Parquet is DuckDB's to write). */
export type StreamFormat = 'csv' | 'arrow' | 'ndjson';

/**
 * A dataset's rows in every format, each rendered from the one ColumnStore. Made when
 * a release loads, since each keeps its pre-encoded fragments; NDJSON's when an
 * export first asks for it.
 */
export class RowRenderers {
  private ndjsonRenderer: Promise<TextRenderer> | undefined;
  private readonly csvHeader: string;

  static async create(store: ColumnStore, kind: DatasetKind): Promise<RowRenderers> {
    return new RowRenderers(
      store,
      await TextRenderer.create(store, jsonSyntax(store, kind)),
      await TextRenderer.create(store, csvSyntax(store)),
      new ArrowRenderer(store),
    );
  }

  private constructor(
    private readonly store: ColumnStore,
    readonly json: TextRenderer,
    readonly csv: TextRenderer,
    readonly arrow: ArrowRenderer,
  ) {
    this.csvHeader = csvHeader(store);
  }

  /** Bytes of the pre-encoded fragments the text renderers keep. */
  get bytes(): number {
    return this.json.fragmentBytes + this.csv.fragmentBytes;
  }

  /** One page: JSON in the envelope, CSV with its header row, or a whole Arrow stream. */
  page(format: PageFormat, rids: readonly number[], envelope: PageEnvelope): Buffer {
    if (format === 'csv') return this.csv.render(rids, this.csvHeader, '');
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
    if (format === 'ndjson') this.ndjsonRenderer ??= TextRenderer.create(this.store, ndjsonSyntax(this.store));
    const ndjson = format === 'ndjson' ? await this.ndjsonRenderer : undefined;
    if (format === 'csv') yield Buffer.from(this.csvHeader);
    if (format === 'arrow') yield arrow.streamStart;
    // A batch is rendered a slice at a time, taking turns with the event loop between
    // slices: a whole batch of text in one step held the loop for tens of milliseconds
    // while other keys' requests waited.
    const turns = new Turns();
    for await (const batch of batches) {
      for (let at = 0; at < batch.length; at += SLICE) {
        await turns.turn();
        const rids = batch.length <= SLICE ? batch : batch.slice(at, at + SLICE);
        if (format === 'csv') yield this.csv.render(rids, '', '');
        else if (ndjson) yield ndjson.render(rids, '', '');
        else {
          const page = arrow.render(rids);
          yield page.subarray(prefix, page.length - END_OF_STREAM.length);
        }
      }
    }
    if (format === 'arrow') yield END_OF_STREAM;
  }
}
