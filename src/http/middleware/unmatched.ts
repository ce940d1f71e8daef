import type Router from '@koa/router';
import type { Middleware } from 'koa';
import { MethodNotAllowedError, NotFoundError } from '../../errors/index.ts';
import type { RequestState } from '../request-state.ts';

/** JSON 405 (with Allow) for a known path and another method; JSON 404 otherwise. */
export function unmatched(router: Router<RequestState>): Middleware<RequestState> {
  return async (ctx) => {
    const methods = new Set(router.match(ctx.path, ctx.method).path.flatMap((layer) => layer.methods));
    if (methods.size > 0) throw new MethodNotAllowedError([...methods]);
    throw new NotFoundError();
  };
}
