import { promisify } from 'node:util';
import zlib from 'node:zlib';
import Negotiator from 'negotiator';

export type Coding = 'br' | 'gzip' | 'identity';

/** Our preference when the client ranks codings equally: br is the smallest at the levels below. */
const CODINGS: readonly Coding[] = ['br', 'gzip', 'identity'];

// negotiator 1.x takes the server's preference for ties; @types/negotiator describes 0.6.
type PreferringEncoding = (available: readonly Coding[], options: { preferred: readonly Coding[] }) => Coding | undefined;

// Clients send a handful of distinct Accept-Encoding values, so each is parsed
// once; the bound keeps hostile variety from growing memory.
const chosen = new Map<string, Coding>();
const MAX_REMEMBERED = 256;

/**
 * The coding to send for an Accept-Encoding header, q-values honoured (RFC 9110
 * 12.5.3). No header means identity; so does a header that rules everything out,
 * identity included: a JSON body the client cannot decode helps nobody.
 */
export function negotiateCoding(acceptEncoding: string): Coding {
  let coding = chosen.get(acceptEncoding);
  if (coding === undefined) {
    const negotiator = new Negotiator({ headers: { 'accept-encoding': acceptEncoding } });
    coding = (negotiator.encoding as PreferringEncoding).call(negotiator, CODINGS, { preferred: CODINGS }) ?? 'identity';
    if (chosen.size >= MAX_REMEMBERED) chosen.clear();
    chosen.set(acceptEncoding, coding);
  }
  return coding;
}

// Levels chosen on the largest page (`npx tsx bench/scripts/compression.ts FILE` prints
// the table, docs/performance.md "Compression levels" keeps it): brotli's default
// quality costs a page far more time than it saves bytes; quality 5 and gzip's default
// 6 cost little more than the write itself.
const brotli = promisify(zlib.brotliCompress);
const gzip = promisify(zlib.gzip);
export const BROTLI_QUALITY = 5;
export const GZIP_LEVEL = 6;

/** The body in `coding`, compressed on libuv's thread pool so the event loop keeps serving. */
export function encode(body: Buffer, coding: Coding): Promise<Buffer> {
  if (coding === 'br') {
    return brotli(body, {
      params: { [zlib.constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: body.length },
    });
  }
  if (coding === 'gzip') return gzip(body, { level: GZIP_LEVEL });
  return Promise.resolve(body);
}
