import { createRequire } from 'node:module';

/**
 * The service's version, from package.json (this file is one folder below it in src/
 * and in dist/): the OpenAPI document's info.version, and the version of every client
 * package the service builds and serves (tools/clients/build.ts, GET /clients/…).
 */
export const SERVICE_VERSION = (createRequire(import.meta.url)('../package.json') as { version: string }).version;
