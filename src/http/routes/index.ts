import { createRequire } from 'node:module';
import { openApiDocument } from '../openapi/document.ts';
import { aggregate } from './aggregate.ts';
import { catalog } from './catalog.ts';
import { docRoutes } from './docs.ts';
import { exporter } from './export.ts';
import { facets } from './facets.ts';
import { financials } from './financials.ts';
import { frontDoor } from './front-door.ts';
import { healthz } from './healthz.ts';
import { reference } from './reference.ts';
import { releases } from './releases.ts';
import { revisions } from './revisions.ts';
import type { Route } from './route.ts';

// Every endpoint of the public listener, one line each: the app registers them, and
// the OpenAPI document describes them in this order.

export const ROUTES: readonly Route[] = [
  financials,
  reference,
  aggregate,
  revisions,
  facets,
  exporter,
  releases,
  catalog,
  healthz,
  frontDoor,
  ...docRoutes(() => openApiText),
];

const { version } = createRequire(import.meta.url)('../../../package.json') as { version: string };

/** The document as served at /openapi.json and as committed in docs/openapi.json (two-space indent, final newline). */
export const openApiText = `${JSON.stringify(openApiDocument(ROUTES, version), null, 2)}\n`;
