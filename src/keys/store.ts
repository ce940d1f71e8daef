/** What is kept of an API key: never the key itself. */
export interface KeyRecord {
  readonly id: string;
  readonly prefix: string;
  readonly hash: string;
  readonly client: string;
  readonly created_at: string;
  readonly revoked_at: string | null;
  /** The invite whose claim issued the key (absent: made by an operator). */
  readonly invite_id?: string;
  /** The last request made with the key, to within the store's flush interval (list() only). */
  readonly last_used_at?: string | null;
}

/** The record if the key is active; undefined when unknown or revoked. */
export const activeRecord = (record: KeyRecord | undefined): KeyRecord | undefined =>
  record && record.revoked_at === null ? record : undefined;

export interface KeyStore {
  /** The active record for a presented key, or undefined when unknown or revoked; may ask a shared store. */
  verify(key: string): Promise<KeyRecord | undefined>;
  /**
   * The active record of a key this replica already knows, without asking a shared
   * store: for a client address already refused for bad keys, and for paths that need
   * no key, neither of which may cost a shared-store lookup.
   */
  known(key: string): Promise<KeyRecord | undefined>;
  /** Issues a key; the plain key is returned here once and never stored. */
  create(client: string, origin?: { inviteId: string }): Promise<{ key: string; record: KeyRecord }>;
  /** Every record, with last_used_at. */
  list(): Promise<KeyRecord[]>;
  /** Notes a request made with the key: memory only, written out within a flush interval. */
  recordUse(id: string, at: number): void;
  /** Revokes by id or by the full key; undefined when nothing matches. */
  revoke(ref: string): Promise<KeyRecord | undefined>;
  close(): Promise<void>;
}
