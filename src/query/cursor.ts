import { createHmac, timingSafeEqual } from 'node:crypto';
import { InvalidCursorError } from '../errors/index.ts';
import { canonicalScope, type QueryScope } from './scope.ts';

// The release tag is optional: tokens issued before it existed name no release and
// page through the served one, as they always did. So is the format after it: tokens
// issued before it existed page any format, as they always did.
const TOKEN = /^([0-9a-z]{1,10})\.([A-Za-z0-9_-]{22})(?:\.([0-9a-z]{1,6})(?:\.([a-z]{1,8}))?)?$/;

/** The release a cursor was issued on, as a short tag (2026-11 → 202611 in base 36). */
const releaseTag = (release: string) => Number(release.replace('-', '')).toString(36);
function releaseOfTag(tag: string): string | undefined {
  const digits = String(parseInt(tag, 36));
  return /^\d{6}$/.test(digits) ? `${digits.slice(0, 4)}-${digits.slice(4)}` : undefined;
}

/** A cursor as the client sent it, parsed but not yet checked against the request it came with. */
export interface Cursor {
  /** The last row's position, base 36. */
  readonly position: string;
  readonly mac: string;
  /** The release it was issued on; undefined for a token from before releases were named. */
  readonly release: string | undefined;
  /** The format of the page it was issued with; undefined for a token from before formats were named. */
  readonly format: string | undefined;
}

/**
 * Opaque keyset cursors: the last row's `rid`, the release it was issued on, the
 * format of its page, and an HMAC over them and the canonical scope, so a cursor is
 * valid only for the release, dataset, filter set and format it came from, in any
 * parameter order. The release travels in the token so that, after a switch, the
 * server knows which retained release a cursor pages through; the MAC covers it and
 * the format, so neither can be changed.
 *
 * A request's cursor is parsed once (`parse`: the release it names chooses what the
 * request reads) and checked once, against the scope of that release (`after`).
 */
export class CursorCodec {
  constructor(private readonly secret: Buffer) {}

  encode(scope: QueryScope, lastRid: number): string {
    const position = lastRid.toString(36);
    const token = `${position}.${this.mac(scope, position, scope.format).toString('base64url')}.${releaseTag(scope.release)}`;
    return scope.format === undefined ? token : `${token}.${scope.format}`;
  }

  /** The parts of a token; throws InvalidCursorError when it is not one of ours. */
  parse(token: string): Cursor {
    const match = TOKEN.exec(token);
    if (!match) throw new InvalidCursorError();
    const [, position, mac, tag, format] = match as unknown as [string, string, string, string | undefined, string | undefined];
    const release = tag === undefined ? undefined : releaseOfTag(tag);
    if (tag !== undefined && release === undefined) throw new InvalidCursorError();
    return { position, mac, release, format };
  }

  /** The `rid` after which the next page starts; throws InvalidCursorError unless `cursor` was issued for `scope`. */
  after(cursor: Cursor, scope: QueryScope): number {
    const { position, mac, release, format } = cursor;
    if (release !== undefined && release !== scope.release) throw new InvalidCursorError();
    if (format !== undefined && format !== scope.format) throw new InvalidCursorError();
    // Compared as text, not decoded bytes: base64 ignores the low bits of the last
    // character, so decoding would accept a cursor with that character changed.
    const given = Buffer.from(mac);
    const expected = Buffer.from(this.mac(scope, position, format).toString('base64url'));
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new InvalidCursorError();
    return parseInt(position, 36);
  }

  /** Over the canonical scope and the position, and the format when the token names one. */
  private mac(scope: QueryScope, position: string, format: string | undefined): Buffer {
    const canonical = JSON.stringify(
      format === undefined ? [...canonicalScope(scope), position] : [...canonicalScope(scope), position, { format }],
    );
    return createHmac('sha256', this.secret).update(canonical).digest().subarray(0, 16);
  }
}
