/** A JSON object of the OpenAPI document. */
export type Json = Record<string, unknown>;

/** What the document reads of a route. */
export interface Documented {
  readonly path: string;
  /** The OpenAPI operation object of `GET path`. */
  readonly operation?: Json;
  /** Schemas the operation refers to as `#/components/schemas/<name>`. */
  readonly schemas?: Readonly<Record<string, Json>>;
}
