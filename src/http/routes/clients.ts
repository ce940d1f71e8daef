import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { CLIENT_PACKAGES, type ClientLanguage, clientPath } from '../../clients.ts';
import { NotFoundError } from '../../errors/index.ts';
import { SERVICE_VERSION } from '../../version.ts';
import { noneMatch } from '../respond/cacheable.ts';
import type { Route } from './route.ts';

// GET /clients/<language>/<file> (no key): the client packages `npm run build` wrote to
// CLIENTS_DIR/<language>/ (tools/clients/build.ts), at the service's version. A version's
// file never changes, so it is cached for good; `latest` in place of the version answers
// 302 to the current one (src/clients.ts names the files).

const IMMUTABLE = 'public, max-age=31536000, immutable';
// A redirect to the current version changes when the service is upgraded: briefly cached, like the front door.
const LATEST = 'public, max-age=300';

/** A served file's bytes and strong ETag, read again only when its size or time changes (a new build). */
interface Served {
  readonly stamp: string;
  readonly body: Buffer;
  readonly etag: string;
}
const read = new Map<string, Served>();

async function servedFile(file: string): Promise<Served | undefined> {
  const stat = await fs.stat(file).catch(() => undefined);
  if (!stat?.isFile()) return undefined;
  const stamp = `${stat.size} ${stat.mtimeMs}`;
  let served = read.get(file);
  if (served?.stamp !== stamp) {
    const body = await fs.readFile(file);
    served = { stamp, body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` };
    read.set(file, served);
  }
  return served;
}

const isLanguage = (name: string): name is ClientLanguage => Object.hasOwn(CLIENT_PACKAGES, name);

export const clients: Route = {
  path: '/clients/:language/:file',
  async handle(ctx, services) {
    const { language = '', file = '' } = ctx.params;
    if (!isLanguage(language))
      throw new NotFoundError(`No client for '${language}': the clients are ${Object.keys(CLIENT_PACKAGES).join(', ')}`);
    const current = CLIENT_PACKAGES[language].file(SERVICE_VERSION);
    if (file === CLIENT_PACKAGES[language].file('latest')) {
      ctx.set('Cache-Control', LATEST);
      ctx.redirect(clientPath(language, SERVICE_VERSION));
      return;
    }
    if (file !== current) {
      throw new NotFoundError(
        `No such ${language} client: '${file}'. This server (version ${SERVICE_VERSION}) serves ${clientPath(language, SERVICE_VERSION)}, and ${clientPath(language, 'latest')} redirects to it`,
      );
    }
    const served = await servedFile(path.join(services.clientsDir, language, current));
    if (!served)
      throw new NotFoundError(`The ${language} client is not built on this server: \`npm run build\` builds it into CLIENTS_DIR`);
    ctx.set('Cache-Control', IMMUTABLE);
    ctx.set('ETag', served.etag);
    ctx.set('X-Content-Type-Options', 'nosniff');
    if (noneMatch(ctx.get('if-none-match'), served.etag)) {
      ctx.status = 304;
      return;
    }
    ctx.type = CLIENT_PACKAGES[language].type;
    ctx.attachment(current);
    ctx.body = served.body;
  },
};
