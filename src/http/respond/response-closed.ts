import { refusalInstead } from '../connection-refusal.ts';
import type { RequestContext } from '../request-state.ts';

/**
 * Calls `callback` once the request's response has closed, however it ended: written
 * whole, failed, or cut off by the client or by the connection's own refusal written
 * in its place (`finished` false: node-server.ts). Every step that holds
 * something for a response (the client-gone signal, an open export, an export's
 * release and files) lets go here; one listener on the response serves them all,
 * in the order they were added.
 */
export function onResponseClosed(ctx: RequestContext, callback: (finished: boolean) => void): void {
  let callbacks = ctx.state.onResponseClosed;
  if (!callbacks) {
    const list: Array<(finished: boolean) => void> = [];
    callbacks = list;
    ctx.state.onResponseClosed = list;
    const { res } = ctx;
    const closed = () => {
      const finished = res.writableFinished && refusalInstead(res) === undefined;
      for (const call of list) call(finished);
    };
    if (res.closed) queueMicrotask(closed);
    else res.once('close', closed);
  }
  callbacks.push(callback);
}

/**
 * Holds what a streamed answer reads (a release, a kept diff) until its response has
 * closed, however it ended, then calls `letGo`: the one way an answer keeps something
 * past its handler.
 */
export function holdUntilClosed(ctx: RequestContext, letGo: () => void): void {
  onResponseClosed(ctx, () => letGo());
}
