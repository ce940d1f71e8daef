import { getJson, type OperationParameter } from './api.ts';

// /openapi.json, read once in the page's life (a failure is not kept): each /v1
// operation's parameters, from which the page derives its controls and its links. It
// needs no key and answers the same for every key, so a key typed or forgotten, which
// empties api.ts's store of keyed answers, does not ask for it again.

export interface Operations {
  readonly paths: Record<string, { get: { parameters: OperationParameter[] } }>;
}

/** The document as asked: its operations, and the service's version, the clients' too (the "copy as" panel's install lines). */
interface OpenApiDocument extends Operations {
  readonly info: { readonly version: string };
}

let asked: Promise<OpenApiDocument> | undefined;

export function operations(): Promise<OpenApiDocument> {
  asked ??= getJson<OpenApiDocument>('/openapi.json').catch((err) => {
    asked = undefined;
    throw err;
  });
  return asked;
}
