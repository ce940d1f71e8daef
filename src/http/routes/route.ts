import type { Services } from '../../services.ts';
import type { Documented } from '../openapi/json.ts';
import type { RequestContext } from '../request-state.ts';

export type { Json } from '../openapi/json.ts';

/**
 * One endpoint (`GET path`): how it answers, and how the OpenAPI document describes
 * it (Documented): its operation, with its parameters and every error it can give,
 * and the component schemas its responses name; none for what the document does not
 * describe (the /docs page's assets). The app registers each route of
 * src/http/routes/index.ts, and the document is built from the same list.
 */
export interface Route extends Documented {
  handle(ctx: RequestContext, services: Services): Promise<void> | void;
}
