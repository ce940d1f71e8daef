import type { OperationParameter } from './api.ts';

// /openapi.json, read once in the page's life (a failure is not kept): each /v1
// operation's parameters, from which the page derives its controls and its links.
// It needs no key.

export interface Operations {
  readonly paths: Record<string, { get: { parameters: OperationParameter[] } }>;
}

let asked: Promise<Operations> | undefined;

export function operations(): Promise<Operations> {
  asked ??= fetch('/openapi.json')
    .then((r) => r.json() as Promise<Operations>)
    .catch((err) => {
      asked = undefined;
      throw err;
    });
  return asked;
}
