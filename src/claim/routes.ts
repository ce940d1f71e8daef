import { randomBytes, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { bodyParser } from '@koa/bodyparser';
import type Router from '@koa/router';
import type { Context } from 'koa';
import { NotFoundError } from '../errors/index.ts';
import { inviteStatus, looksLikeToken } from '../invites/store.ts';
import type { KeyRecord } from '../keys/store.ts';
import type { Services } from '../services.ts';
import { claimPage, keyPage, type Refusal, refusalPage } from './html.ts';

// GET and POST /claim/<token>: the invite's claim page and the claim itself (spec
// section 5). Outside /v1, so no API key is asked for; every answer here is HTML,
// never cached, never framed, and never sends the URL (it holds the token) onwards.

const SECURITY_HEADERS = {
  'Cache-Control': 'no-store',
  'Content-Security-Policy':
    "default-src 'none'; style-src 'self'; script-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
};

const STATUS: Record<Refusal, number> = {
  unknown: 404,
  claimed: 410,
  expired: 410,
  revoked: 410,
  forged: 403,
  'too-many': 429,
  method: 405,
  failed: 500,
};

/** The double-submit cookie: set by the page view, echoed by its form; SameSite=Strict keeps other sites from sending it. */
const CSRF_COOKIE = 'claim_csrf';

// A Map, not an object: a path segment such as `constructor` must not find Object.prototype's members.
const ASSETS = new Map(
  [
    ['claim.css', 'text/css; charset=utf-8'],
    ['copy.js', 'text/javascript; charset=utf-8'],
  ].map(([name, type]) => [name!, { type: type!, body: fs.readFileSync(path.join(import.meta.dirname, 'assets', name!)) }]),
);

const parseForm = bodyParser({ enableTypes: ['form'], formLimit: '2kb', onError: () => {} });

/**
 * Registers the claim page (/claim/<token>, for any method: a wrong one gets the page's
 * own 405) and its assets (/claim/assets/<file>) on the public router.
 */
export function registerClaim(router: Router, services: Pick<Services, 'invites' | 'keys' | 'limits' | 'clock' | 'log'>): void {
  const refuse = async (ctx: Context, reason: Refusal) => {
    // Only unknown tokens count against the address: guessing is what the guard stops. A real
    // token that is spent or expired (a double click, a race, an old email) is no guess, and
    // a valid invite is never slowed down.
    if (reason === 'unknown') {
      const guard = await services.limits.claims.consume(ctx.ip);
      if (!guard.allowed) {
        ctx.set('Retry-After', String(guard.retryAfterSeconds));
        reason = 'too-many';
      }
    }
    respond(ctx, STATUS[reason], refusalPage(reason));
  };

  /** The open invite a token names, or undefined once the refusal page is sent. */
  const openInvite = async (ctx: Context, token: string) => {
    const record = looksLikeToken(token) ? await services.invites.find(token) : undefined;
    if (!record) return void (await refuse(ctx, 'unknown'));
    const status = inviteStatus(record, services.clock());
    if (status !== 'open') return void (await refuse(ctx, status));
    return record;
  };

  const show = async (ctx: Context, token: string) => {
    const record = await openInvite(ctx, token);
    if (!record) return;
    const csrf = randomBytes(24).toString('base64url');
    ctx.set('Set-Cookie', `${CSRF_COOKIE}=${csrf}; Path=/claim; HttpOnly; SameSite=Strict; Max-Age=3600${ctx.secure ? '; Secure' : ''}`);
    respond(ctx, 200, claimPage(record.client, record.expires_at, csrf));
  };

  const claim = async (ctx: Context, token: string) => {
    // A spent or unknown invite says so first (a reload after the claim gets 410, not 403).
    if (!(await openInvite(ctx, token))) return;
    if (!sameSiteForm(ctx)) return respond(ctx, STATUS.forged, refusalPage('forged'));
    const spent = await services.invites.spend(token, services.clock());
    if (!spent.ok) return refuse(ctx, spent.status);
    const invite = spent.record;
    let issued: { key: string; record: KeyRecord };
    try {
      issued = await services.keys.create(invite.client, { inviteId: invite.id });
    } catch (err) {
      await services.invites.release(invite).catch(() => {});
      services.log.error({ err, invite: invite.id }, 'claim: cannot create the key; the invite was reopened');
      return respond(ctx, 500, refusalPage('failed'));
    }
    // The key exists and is shown below whatever happens next: a failure here is logged, not the client's.
    try {
      if (invite.replaces) await services.keys.revoke(invite.replaces);
      await services.invites.settle(invite, issued.record.id);
    } catch (err) {
      services.log.error(
        { err, invite: invite.id, key: issued.record.id },
        'claim: key issued, but recording it failed; revoke the replaced key by hand',
      );
    }
    services.log.info({ invite: invite.id, key: issued.record.id, replaced: invite.replaces }, 'invite claimed');
    ctx.set('Set-Cookie', `${CSRF_COOKIE}=; Path=/claim; HttpOnly; SameSite=Strict; Max-Age=0`);
    respond(ctx, 200, keyPage(invite.client, issued.key, `${ctx.protocol}://${ctx.host}`));
  };

  // Their own path segment keeps the assets apart from tokens.
  router.get('/claim/assets/:file', (ctx) => {
    const found = ASSETS.get(ctx.params.file!);
    if (!found) throw new NotFoundError();
    serveAsset(ctx, found);
  });
  router.all('/claim/:token', async (ctx) => {
    const token = ctx.params.token!;
    try {
      if (ctx.method === 'GET' || ctx.method === 'HEAD') return await show(ctx, token);
      if (ctx.method === 'POST') {
        await parseForm(ctx, async () => {});
        return await claim(ctx, token);
      }
      ctx.set('Allow', 'GET, HEAD, POST');
      respond(ctx, 405, refusalPage('method'));
    } catch (err) {
      // A store that cannot answer: an HTML page here too, and nothing spent (spend() is the last step that can fail before the key).
      services.log.error({ err }, 'claim page failed');
      respond(ctx, 500, refusalPage('failed'));
    }
  });
}

function serveAsset(ctx: Context, asset: { type: string; body: Buffer }): void {
  ctx.set({ 'Cache-Control': 'public, max-age=3600', 'X-Content-Type-Options': 'nosniff' });
  ctx.type = asset.type;
  ctx.body = asset.body;
}

function respond(ctx: Context, status: number, html: string): void {
  ctx.status = status;
  ctx.set(SECURITY_HEADERS);
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = html;
}

/** The form came from the page view that set the cookie, and not from another site. */
function sameSiteForm(ctx: Context): boolean {
  if (ctx.get('sec-fetch-site') === 'cross-site') return false;
  const cookie = Buffer.from(ctx.cookies.get(CSRF_COOKIE) ?? '');
  const field = Buffer.from(String((ctx.request.body as Record<string, unknown> | undefined)?.csrf ?? ''));
  return cookie.length >= 32 && cookie.length === field.length && timingSafeEqual(cookie, field);
}
