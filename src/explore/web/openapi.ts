import { getJson, type OperationParameter } from './api.ts';

// /openapi.json, through api.ts's store (asked once in the page's life while the
// server's Cache-Control allows, revalidated after): each /v1 operation's parameters,
// from which the page derives its controls and its links. It needs no key.

export interface Operations {
  readonly paths: Record<string, { get: { parameters: OperationParameter[] } }>;
}

export const operations = (): Promise<Operations> => getJson<Operations>('/openapi.json');
