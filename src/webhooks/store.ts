// What is kept of webhooks (docs/api.md "Webhooks"): endpoints, the attempts still to
// make, and the delivery log; in Redis with REDIS_URL (shared by every replica), in
// STATE_DIR otherwise, as keys are. Survives a restart either way.

export const EVENTS = ['release.published', 'release.withdrawn'] as const;
export type EventType = (typeof EVENTS)[number];

/** A signing secret; the one a rotation replaced still signs until `expires_at`. */
export interface Secret {
  readonly secret: string;
  readonly expires_at: string | null;
}

export interface Endpoint {
  readonly id: string;
  /** The API key that made it: only that key sees it, and its revocation stops it. */
  readonly key_id: string;
  readonly url: string;
  readonly events: readonly EventType[];
  /** Newest first. */
  readonly secrets: readonly Secret[];
  readonly enabled: boolean;
  /** Why it is disabled (null while enabled). */
  readonly disabled_reason: string | null;
  readonly created_at: string;
  /** Messages in a row whose every attempt failed; two disable the endpoint. */
  readonly exhausted_in_row: number;
}

/** An attempt still to make: message `seq` of the publication log to one endpoint. */
export interface Pending {
  readonly endpoint_id: string;
  readonly seq: number;
  /** 1 for the first attempt. */
  readonly attempt: number;
  /** When it may be made (ms since the epoch). */
  readonly due_at: number;
  /** The release every replica must serve before the first attempt (item 3 of the issue). */
  readonly serves: string | null;
  /** When the message was queued, from which the settle wait is counted. */
  readonly queued_at: number;
}

/** One attempt, as GET /v1/webhooks/{id}/deliveries lists it. */
export interface Delivery {
  readonly at: string;
  readonly msg_id: string;
  readonly attempt: number;
  readonly status_code: number | null;
  readonly duration_ms: number;
  readonly error: string | null;
}

/** How long the delivery log keeps an attempt. */
export const DELIVERY_LOG_MS = 35 * 86_400_000;

export interface WebhookStore {
  /** Every endpoint, or one key's. */
  list(keyId?: string): Promise<Endpoint[]>;
  get(id: string): Promise<Endpoint | undefined>;
  /** Creates or replaces. */
  put(endpoint: Endpoint): Promise<void>;
  /** Removes the endpoint, its attempts to make and its log. */
  remove(id: string): Promise<void>;
  /** Adds or replaces the attempt to make of (endpoint, seq). */
  schedule(pending: Pending): Promise<void>;
  /** Drops the attempt to make of (endpoint, seq). */
  unschedule(endpointId: string, seq: number): Promise<void>;
  pending(): Promise<Pending[]>;
  /** Appends an attempt to the endpoint's log, forgetting those older than DELIVERY_LOG_MS. */
  record(endpointId: string, delivery: Delivery): Promise<void>;
  /** The endpoint's log, newest first, of the last DELIVERY_LOG_MS before `now`. */
  deliveries(endpointId: string, now: number): Promise<Delivery[]>;
  /** The last publication-log seq whose messages were queued; undefined before the first start. */
  cursor(): Promise<number | undefined>;
  /** Moves the cursor to `seq` if it is behind: true for the one caller that moved it, which queues that seq's messages. */
  advance(seq: number): Promise<boolean>;
  /** Holds `name` for `ms`: true for the one holder (a replica sending an attempt). */
  lease(name: string, ms: number): Promise<boolean>;
  close(): Promise<void>;
}
