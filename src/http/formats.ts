import Negotiator from 'negotiator';
import { NotAcceptableError } from '../errors.ts';
import type { ServedDataset } from '../store/loader.ts';

/** What a page's body says besides its rows; only JSON has room for it in the body. */
export interface PageEnvelope {
  readonly meta: Record<string, unknown>;
  readonly pagination: { readonly cursor: string; readonly has_more: boolean };
}

export interface Format {
  /** Short name, part of cache keys and ETags. */
  readonly name: 'json' | 'csv' | 'arrow';
  readonly mediaType: string;
  /** Content-Type of the body. */
  readonly contentType: string;
  render(served: ServedDataset, rids: readonly number[], envelope: PageEnvelope): Buffer;
}

/** In order of preference: `*` /`*`, no Accept and ties get JSON. */
export const FORMATS: readonly Format[] = [
  {
    name: 'json',
    mediaType: 'application/json',
    contentType: 'application/json; charset=utf-8',
    render: (served, rids, { meta, pagination }) =>
      served.json.render(rids, `{"meta":${JSON.stringify(meta)},"data":[`, `],"pagination":${JSON.stringify(pagination)}}`),
  },
  {
    name: 'csv',
    mediaType: 'text/csv',
    // RFC 4180's optional `header` parameter: the first line names the columns.
    contentType: 'text/csv; charset=utf-8; header=present',
    render: (served, rids) => served.csv.render(rids, served.csv.header, ''),
  },
  {
    name: 'arrow',
    mediaType: 'application/vnd.apache.arrow.stream',
    contentType: 'application/vnd.apache.arrow.stream',
    render: (served, rids) => served.arrow.render(rids),
  },
];

const MEDIA_TYPES = FORMATS.map((f) => f.mediaType);
const byMediaType = new Map(FORMATS.map((f) => [f.mediaType, f]));

// Clients send a handful of distinct Accept values, so each is parsed once; the
// bound keeps hostile variety from growing memory.
const chosen = new Map<string, Format | null>();
const MAX_REMEMBERED = 256;

/**
 * The format an Accept header asks for (RFC 9110 12.5.1, q-values honoured): JSON
 * when there is none, it is empty, or it ranks formats equally; NotAcceptableError
 * when it rules out every format served.
 */
export function negotiateFormat(accept: string): Format {
  let format = chosen.get(accept);
  if (format === undefined) {
    const type = accept.trim() ? new Negotiator({ headers: { accept } }).mediaType(MEDIA_TYPES) : MEDIA_TYPES[0];
    format = (type && byMediaType.get(type)) || null;
    if (chosen.size >= MAX_REMEMBERED) chosen.clear();
    chosen.set(accept, format);
  }
  if (!format) throw new NotAcceptableError(MEDIA_TYPES);
  return format;
}
