import type { KeyRecord } from '../../keys/store.ts';
import type { RequestContext } from '../request-state.ts';

// The key a /v1 request was admitted with: set once by the key step of the pipeline
// (middleware/api-key.ts), read by what charges work to it (its turn for heavy work,
// its export budget and open exports).

export function setRequestKey(ctx: RequestContext, record: KeyRecord): void {
  ctx.state.key = record;
}

/** The key the request was admitted with; only for routes under /v1, which every request reaches with one. */
export function requestKey(ctx: RequestContext): KeyRecord {
  const { key } = ctx.state;
  if (!key) throw new Error('requestKey: only a /v1 route has a key, and only once the key step has admitted it');
  return key;
}
