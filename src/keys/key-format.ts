import { hash, randomBytes } from 'node:crypto';
import type { KeyRecord } from './store.ts';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const KEY_PREFIX = 'sk_live_';
const SECRET_LENGTH = 40;

/** `sk_live_` + 40 base62 characters (~238 bits), drawn without modulo bias. */
export function generateKey(): string {
  let secret = '';
  while (secret.length < SECRET_LENGTH) {
    for (const byte of randomBytes(64)) {
      // 248 = 4 * 62: bytes at or above it would favour the first characters.
      if (byte < 248 && secret.length < SECRET_LENGTH) secret += BASE62[byte % 62];
    }
  }
  return KEY_PREFIX + secret;
}

/** Keys are stored only as this digest; a 238-bit random secret needs no slow hash. */
export const hashKey = (key: string) => hash('sha256', key, 'hex');

/** Enough of the key for an operator to tell keys apart, far too little to use one. */
export const displayPrefix = (key: string) => key.slice(0, KEY_PREFIX.length + 4);

const KEY_SHAPE = new RegExp(`^${KEY_PREFIX}[0-9A-Za-z]{32,}$`);

/** Checked on every /v1 request, before any lookup. */
export const looksLikeKey = (text: string) => KEY_SHAPE.test(text);

// A key however a client mangled it: `sk_live_`, `sk-live-`, `sk live ` (a `+`
// decoded), or its secret (SECRET_LENGTH base62 characters) anywhere, even run into
// other letters and digits: any run that long may hold one.
const KEY_IN_TEXT = new RegExp(`sk[\\s_+-]?live[\\s_+-]?[0-9A-Za-z]{8}|[0-9A-Za-z]{${SECRET_LENGTH}}`, 'i');

/** Whether `text` (decoded) may hold a key, or enough of one to matter: what logs and echoed ids must never carry. */
export const mayBeKey = (text: string) => KEY_IN_TEXT.test(text);

/** A new key and the record kept of it, for any store to save. */
export function issueKey(client: string, origin?: { inviteId: string }): { key: string; record: KeyRecord } {
  const key = generateKey();
  const record: KeyRecord = {
    id: `key_${randomBytes(8).toString('hex')}`,
    prefix: displayPrefix(key),
    hash: hashKey(key),
    client,
    created_at: new Date().toISOString(),
    revoked_at: null,
    ...(origin ? { invite_id: origin.inviteId } : {}),
  };
  return { key, record };
}
