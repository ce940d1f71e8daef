import type { Middleware } from 'koa';
import { InvalidKeyError, MissingKeyError } from '../errors.ts';
import type { KeyStore } from '../keys/store.ts';

/** Spec section 5: every /v1 request carries `x-api-key`; the record is kept for logs and limits. */
export function requireKey(keys: KeyStore): Middleware {
  return async (ctx, next) => {
    const key = ctx.get('x-api-key');
    if (!key) throw new MissingKeyError();
    const record = await keys.verify(key);
    if (!record) throw new InvalidKeyError();
    ctx.state.key = record;
    await next();
  };
}
