import type { Context } from 'koa';
import type { KeyRecord } from '../../keys/store.ts';

// The key a /v1 request was admitted with: set once by the key step of the pipeline
// (middleware/api-key.ts), read by what charges work to it (its turn for heavy work,
// its export budget and open exports).

export function setRequestKey(ctx: Context, record: KeyRecord): void {
  ctx.state.key = record;
}

/** The key the request was admitted with; only for routes under /v1, which every request reaches with one. */
export const requestKey = (ctx: Context): KeyRecord => ctx.state.key as KeyRecord;
