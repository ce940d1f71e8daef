// Every format a body is rendered in, by name. Which formats an endpoint offers, and
// which one a request gets (its Accept header), is the HTTP layer's to decide.

export type FormatName = 'json' | 'csv' | 'arrow' | 'ndjson' | 'parquet';

/** A page of rows or of a computed result: JSON (the default), CSV or Arrow. */
export const PAGE_FORMATS = ['json', 'csv', 'arrow'] as const satisfies readonly FormatName[];
/** A bulk export: Parquet (the default, the format meant for bulk data), CSV, Arrow or NDJSON. */
export const EXPORT_FORMATS = ['parquet', 'csv', 'arrow', 'ndjson'] as const satisfies readonly FormatName[];

export interface Format {
  /** Short name: part of cache keys and ETags. */
  readonly name: FormatName;
  readonly mediaType: string;
  /** Content-Type of the body. */
  readonly contentType: string;
  /** Of a file's name (Content-Disposition of an export). */
  readonly extension: string;
}

export const FORMATS: Readonly<Record<FormatName, Format>> = {
  json: { name: 'json', mediaType: 'application/json', contentType: 'application/json; charset=utf-8', extension: 'json' },
  // RFC 4180's optional `header` parameter: the first line names the columns.
  csv: { name: 'csv', mediaType: 'text/csv', contentType: 'text/csv; charset=utf-8; header=present', extension: 'csv' },
  arrow: {
    name: 'arrow',
    mediaType: 'application/vnd.apache.arrow.stream',
    contentType: 'application/vnd.apache.arrow.stream',
    extension: 'arrows',
  },
  ndjson: { name: 'ndjson', mediaType: 'application/x-ndjson', contentType: 'application/x-ndjson; charset=utf-8', extension: 'ndjson' },
  parquet: {
    name: 'parquet',
    mediaType: 'application/vnd.apache.parquet',
    contentType: 'application/vnd.apache.parquet',
    extension: 'parquet',
  },
};

/** What a page's body says besides its rows; only JSON has room for it in the body. */
export interface PageEnvelope {
  readonly meta: Record<string, unknown>;
  readonly pagination: { readonly cursor: string; readonly has_more: boolean };
}

/** The JSON page: `meta`, the rows (`data`, already JSON and comma-separated), `pagination`. */
export const envelopeBefore = (envelope: PageEnvelope) => `{"meta":${JSON.stringify(envelope.meta)},"data":[`;
export const envelopeAfter = (envelope: PageEnvelope) => `],"pagination":${JSON.stringify(envelope.pagination)}}`;
