import Negotiator from 'negotiator';
import { NotAcceptableError } from '../errors.ts';

/** A bulk export's file format, chosen by `Accept` (docs/api.md "Bulk export"). */
export interface ExportFormat {
  readonly name: 'parquet' | 'csv' | 'arrow' | 'ndjson';
  readonly mediaType: string;
  readonly contentType: string;
  /** Of the file name in Content-Disposition. */
  readonly extension: string;
}

/** In order of preference: no Accept, `*` /`*` and ties get Parquet, the format meant for bulk data. */
export const EXPORT_FORMATS: readonly ExportFormat[] = [
  { name: 'parquet', mediaType: 'application/vnd.apache.parquet', contentType: 'application/vnd.apache.parquet', extension: 'parquet' },
  { name: 'csv', mediaType: 'text/csv', contentType: 'text/csv; charset=utf-8; header=present', extension: 'csv' },
  { name: 'arrow', mediaType: 'application/vnd.apache.arrow.stream', contentType: 'application/vnd.apache.arrow.stream', extension: 'arrows' },
  { name: 'ndjson', mediaType: 'application/x-ndjson', contentType: 'application/x-ndjson; charset=utf-8', extension: 'ndjson' },
];

const MEDIA_TYPES = EXPORT_FORMATS.map((f) => f.mediaType);

export function negotiateExport(accept: string): ExportFormat {
  const type = accept.trim() ? new Negotiator({ headers: { accept } }).mediaType(MEDIA_TYPES) : MEDIA_TYPES[0];
  const format = EXPORT_FORMATS.find((f) => f.mediaType === type);
  if (!format) throw new NotAcceptableError(MEDIA_TYPES);
  return format;
}
