import { createHmac, timingSafeEqual } from 'node:crypto';
import { InvalidCursorError } from '../errors.ts';
import { canonicalScope, type QueryScope } from './scope.ts';

// The release tag is optional: tokens issued before it existed name no release and
// page through the served one, as they always did.
const TOKEN = /^([0-9a-z]{1,10})\.([A-Za-z0-9_-]{22})(?:\.([0-9a-z]{1,6}))?$/;

/** The release a cursor was issued on, as a short tag (2026-11 → 202611 in base 36). */
const releaseTag = (release: string) => Number(release.replace('-', '')).toString(36);
function releaseOfTag(tag: string): string | undefined {
  const digits = String(parseInt(tag, 36));
  return /^\d{6}$/.test(digits) ? `${digits.slice(0, 4)}-${digits.slice(4)}` : undefined;
}

/**
 * Opaque keyset cursors: the last row's `rid`, the release it was issued on, and an
 * HMAC over both and the canonical scope, so a cursor is valid only for the release,
 * dataset and filter set it came from, in any parameter order. The release travels
 * in the token so that, after a switch, the server knows which retained release a
 * cursor pages through; the MAC covers it, so it cannot be changed.
 */
export class CursorCodec {
  constructor(private readonly secret: Buffer) {}

  encode(scope: QueryScope, lastRid: number): string {
    const position = lastRid.toString(36);
    return `${position}.${this.mac(scope, position).toString('base64url')}.${releaseTag(scope.release)}`;
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
    const [, position, mac, tag] = match as unknown as [string, string, string, string | undefined];
    if (tag !== undefined && releaseOfTag(tag) !== scope.release) throw new InvalidCursorError();
    // Compared as text, not decoded bytes: base64 ignores the low bits of the last
    // character, so decoding would accept a cursor with that character changed.
    const given = Buffer.from(mac);
    const expected = Buffer.from(this.mac(scope, position).toString('base64url'));
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new InvalidCursorError();
    return parseInt(position, 36);
  }

  private mac(scope: QueryScope, position: string): Buffer {
    const canonical = JSON.stringify([...canonicalScope(scope), position]);
    return createHmac('sha256', this.secret).update(canonical).digest().subarray(0, 16);
  }
}
