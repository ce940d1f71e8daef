import { createHmac, timingSafeEqual } from 'node:crypto';
import { InvalidCursorError } from '../errors.ts';
import { canonicalScope, type QueryScope } from './scope.ts';

const TOKEN = /^([0-9a-z]{1,10})\.([A-Za-z0-9_-]{22})$/;

/**
 * Opaque keyset cursors: the last row's `rid` plus an HMAC over it and the
 * canonical scope, so a cursor is valid only for the release, dataset and filter
 * set it came from, in any parameter order.
 */
export class CursorCodec {
  constructor(private readonly secret: Buffer) {}

  encode(scope: QueryScope, lastRid: number): string {
    const position = lastRid.toString(36);
    return `${position}.${this.mac(scope, position).toString('base64url')}`;
  }

  /** The `rid` after which the next page starts; throws InvalidCursorError on any mismatch. */
  decode(token: string, scope: QueryScope): number {
    const match = TOKEN.exec(token);
    if (!match) throw new InvalidCursorError();
    const [, position, mac] = match as unknown as [string, string, string];
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
