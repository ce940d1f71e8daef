import { createHmac, timingSafeEqual } from 'node:crypto';
import { InvalidCursorError } from '../errors.ts';
import type { Filters } from './filters.ts';

/** What a cursor is valid for: a different release, dataset or filter set rejects it. */
export interface CursorScope {
  readonly release: string;
  readonly dataset: string;
  readonly filters: Filters;
  readonly period?: string;
}

const TOKEN = /^([0-9a-z]{1,10})\.([A-Za-z0-9_-]{22})$/;

/**
 * Opaque keyset cursors: the last row's `rid` plus an HMAC over it and the scope.
 * The scope is canonical (dimensions and values sorted, duplicates dropped), so the
 * order of query parameters does not matter, but any other change does.
 */
export class CursorCodec {
  constructor(private readonly secret: Buffer) {}

  encode(scope: CursorScope, lastRid: number): string {
    const position = lastRid.toString(36);
    return `${position}.${this.mac(scope, position).toString('base64url')}`;
  }

  /** The `rid` after which the next page starts; throws InvalidCursorError on any mismatch. */
  decode(token: string, scope: CursorScope): number {
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

  private mac(scope: CursorScope, position: string): Buffer {
    const filters = [...scope.filters]
      .map(([dimension, values]) => [dimension, [...new Set(values)].sort()] as const)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const canonical = JSON.stringify([scope.release, scope.dataset, filters, scope.period ?? null, position]);
    return createHmac('sha256', this.secret).update(canonical).digest().subarray(0, 16);
  }
}
