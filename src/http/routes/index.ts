import { SERVICE_VERSION } from '../../version.ts';
import { openApiDocument } from '../openapi/document.ts';
import { DOCUMENTED_RELEASES, type ReleaseExamples } from '../openapi/prefill.ts';
import { aggregate } from './aggregate.ts';
import { catalog } from './catalog.ts';
import { clients } from './clients.ts';
import { docRoutes } from './docs.ts';
import { exporter } from './export.ts';
import { facets } from './facets.ts';
import { financials } from './financials.ts';
import { frontDoor } from './front-door.ts';
import { healthz } from './healthz.ts';
import { history } from './history.ts';
import { reference } from './reference.ts';
import { releasesAtom, releasesJsonFeed } from './release-feeds.ts';
import { releases } from './releases.ts';
import { revisions } from './revisions.ts';
import type { Route } from './route.ts';
import { usage, usageDaily } from './usage.ts';

// Every endpoint of the public listener, one line each: the app registers them, and
// the OpenAPI document describes them in this order.

export const ROUTES: readonly Route[] = [
  financials,
  reference,
  aggregate,
  revisions,
  history,
  facets,
  exporter,
  releases,
  releasesAtom,
  releasesJsonFeed,
  catalog,
  usage,
  usageDaily,
  healthz,
  frontDoor,
  clients,
  ...docRoutes((releases) => openApiTextFor(releases)),
];

/** The document as served at /openapi.json by a server whose newest releases are `releases` (two-space indent, final newline). */
export const openApiTextFor = (releases: ReleaseExamples): string =>
  `${JSON.stringify(openApiDocument(ROUTES, SERVICE_VERSION, releases), null, 2)}\n`;

/** The document as committed in docs/openapi.json: served as it is by a server whose newest releases are DOCUMENTED_RELEASES. */
export const openApiText = openApiTextFor(DOCUMENTED_RELEASES);
