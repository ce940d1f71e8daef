import { createHash, randomBytes } from 'node:crypto';

/** What is kept of an invite: never its token, only the token's SHA-256. */
export interface InviteRecord {
  readonly id: string;
  readonly hash: string;
  readonly client: string;
  readonly created_at: string;
  readonly expires_at: string;
  /** The key id a claim revokes: how a lost key is replaced. */
  readonly replaces: string | null;
  readonly claimed_at: string | null;
  /** The key the claim issued (set once the key exists). */
  readonly key_id: string | null;
  readonly revoked_at: string | null;
}

export type InviteStatus = 'open' | 'claimed' | 'revoked' | 'expired';

export function inviteStatus(record: InviteRecord, now: number): InviteStatus {
  if (record.claimed_at !== null) return 'claimed';
  if (record.revoked_at !== null) return 'revoked';
  return Date.parse(record.expires_at) <= now ? 'expired' : 'open';
}

/** The outcome of a claim attempt: the invite to issue a key for, or why not. */
export type Spend =
  | { readonly ok: true; readonly record: InviteRecord }
  | { readonly ok: false; readonly status: 'unknown' | Exclude<InviteStatus, 'open'> };

export interface InviteStore {
  /** A new invite; the token is returned here once and never stored. */
  create(
    input: { client: string; expiresAt: number; replaces: string | null },
    now: number,
  ): Promise<{ token: string; record: InviteRecord }>;
  /** The record a token names, whatever its status; undefined when unknown. */
  find(token: string): Promise<InviteRecord | undefined>;
  /** Marks an open invite claimed, atomically: of any number of racing calls, one gets ok. */
  spend(token: string, now: number): Promise<Spend>;
  /** Records the key a spent invite issued. */
  settle(record: InviteRecord, keyId: string): Promise<void>;
  /** Reopens a spent invite whose key could not be made, so the client can try again. */
  release(record: InviteRecord): Promise<void>;
  list(): Promise<InviteRecord[]>;
  /** Revokes an unclaimed invite by id; returns the record as it stands, undefined when unknown. */
  revoke(id: string, now: number): Promise<InviteRecord | undefined>;
  close(): Promise<void>;
}

/** Ids name invites in lists, logs and `invite revoke`; they are no secret. */
const ID_PREFIX = 'inv_';
/**
 * Tokens, the secret in a claim link, have a prefix of their own so an operator's
 * tools can tell one from an id. Tokens made before it were `inv_` + 43 characters,
 * like an id but longer; their links keep working until they expire (90 days at most).
 */
const TOKEN_PREFIX = 'invtok_';

/** `invtok_` + 43 base64url characters: 256 random bits, far beyond guessing. */
export const generateToken = () => TOKEN_PREFIX + randomBytes(32).toString('base64url');

export const looksLikeToken = (text: string) => /^(?:invtok_|inv_)[A-Za-z0-9_-]{43}$/.test(text);

export const looksLikeInviteId = (text: string) => /^inv_[0-9a-f]{16}$/.test(text);

/**
 * Text that may hold a token (a link, or a token pasted where an id belongs): the
 * token prefix anywhere, or the old shared prefix on anything but a whole id. Such
 * text is never echoed or logged.
 */
export const mayBeToken = (text: string) => text.includes(TOKEN_PREFIX) || /inv_(?![0-9a-f]{16}$)/.test(text);

/** Tokens are stored only as this digest; a 256-bit random secret needs no slow hash. */
export const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

/** A new token and the record kept of it, for any store to save. */
export function issueInvite(
  input: { client: string; expiresAt: number; replaces: string | null },
  now: number,
): { token: string; record: InviteRecord } {
  const token = generateToken();
  return {
    token,
    record: {
      id: ID_PREFIX + randomBytes(8).toString('hex'),
      hash: hashToken(token),
      client: input.client,
      created_at: new Date(now).toISOString(),
      expires_at: new Date(input.expiresAt).toISOString(),
      replaces: input.replaces,
      claimed_at: null,
      key_id: null,
      revoked_at: null,
    },
  };
}
