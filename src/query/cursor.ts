import { createHmac, timingSafeEqual } from 'node:crypto';
import { InvalidCursorError } from '../errors.ts';
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

/**
 * Opaque keyset cursors: the last row's `rid`, the release it was issued on, the
 * format of its page, and an HMAC over them and the canonical scope, so a cursor is
 * valid only for the release, dataset, filter set and format it came from, in any
 * parameter order. The release travels in the token so that, after a switch, the
 * server knows which retained release a cursor pages through; the MAC covers it and
 * the format, so neither can be changed.
 */
export class CursorCodec {
  constructor(private readonly secret: Buffer) {}

  encode(scope: QueryScope, lastRid: number): string {
    const position = lastRid.toString(36);
    const token = `${position}.${this.mac(scope, position, scope.format).toString('base64url')}.${releaseTag(scope.release)}`;
    return scope.format === undefined ? token : `${token}.${scope.format}`;
  }

  /** The release a token names, unverified (`decode` checks it); undefined when it names none. */
  releaseOf(token: string): string | undefined {
    const tag = TOKEN.exec(token)?.[3];
    return tag === undefined ? undefined : (releaseOfTag(tag) ?? '');
  }

  /** The `rid` after which the next page starts; throws InvalidCursorError on any mismatch. */
  decode(token: string, scope: QueryScope): number {
    const match = TOKEN.exec(token);
    if (!match) throw new InvalidCursorError();
    const [, position, mac, tag, format] = match as unknown as [string, string, string, string | undefined, string | undefined];
    if (tag !== undefined && releaseOfTag(tag) !== scope.release) throw new InvalidCursorError();
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
