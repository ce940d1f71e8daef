import type { Endpoint } from '../../query/options/endpoint.ts';

/** A JSON object of the OpenAPI document. */
export type Json = Record<string, unknown>;

/** What the document reads of a route. */
export interface Documented {
  readonly path: string;
  /** A data endpoint's options: the document lists them as the operation's parameters, with its example request. */
  readonly endpoint?: Endpoint;
  /** The OpenAPI operation object of `GET path`; a data endpoint's without its parameters and example request. */
  readonly operation?: Json;
  /** Schemas the operation refers to as `#/components/schemas/<name>`. */
  readonly schemas?: Readonly<Record<string, Json>>;
}
