import type Router from '@koa/router';
import * as v from 'valibot';
import type { Clock } from '../clock.ts';
import { ConflictError, InvalidParametersError, NotFoundError } from '../errors/index.ts';
import { type InviteRecord, type InviteStore, inviteStatus, looksLikeInviteId, mayBeToken } from '../invites/store.ts';
import type { KeyStore } from '../keys/store.ts';
import { invalidParameters } from '../query/options/params.ts';

const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const MAX_EXPIRY_MS = 90 * UNIT_MS.d;

const createInviteBody = v.object({
  client: v.pipe(v.string(), v.trim(), v.minLength(1, 'Name the client the invite is for'), v.maxLength(200)),
  expires: v.optional(v.pipe(v.string(), v.regex(/^[1-9]\d{0,4}[mhd]$/, 'Expected a duration such as 30m, 12h or 7d')), '7d'),
  replaces: v.optional(v.pipe(v.string(), v.regex(/^key_[0-9a-f]{16}$/, 'Expected a key id (key_…), as `admin key list` shows'))),
});

const TOKEN_FOR_ID = 'That is an invite link or token, not its id (inv_ + 16 hex): find the id with `admin invite list`';

/** Never the hash; the status as of now, so an operator need not compare dates. */
const publicInvite = ({ hash: _hash, ...rest }: InviteRecord, now: number) => ({
  ...rest,
  status: inviteStatus(rest as InviteRecord, now),
});

/** The operators' invite routes on the admin listener. */
export function register(router: Router, options: { invites: InviteStore; keys: KeyStore; publicUrl: string; clock: Clock }): void {
  const { invites, keys, clock } = options;
  router.post('/invites', async (ctx) => {
    const parsed = v.safeParse(createInviteBody, ctx.request.body ?? {});
    if (!parsed.success) throw invalidParameters(parsed.issues);
    const { client, expires, replaces } = parsed.output;
    const lifetime = Number(expires.slice(0, -1)) * UNIT_MS[expires.at(-1) as keyof typeof UNIT_MS];
    if (lifetime > MAX_EXPIRY_MS) throw new InvalidParametersError({ expires: ['At most 90d: an invite is a short-lived secret'] });
    if (replaces && !(await keys.list()).some((k) => k.id === replaces))
      throw new InvalidParametersError({ replaces: [`No key has the id ${replaces}`] });
    const now = clock();
    const { token, record } = await invites.create({ client, expiresAt: now + lifetime, replaces: replaces ?? null }, now);
    ctx.status = 201;
    ctx.body = { url: `${options.publicUrl}/claim/${token}`, invite: publicInvite(record, now) };
  });
  router.get('/invites', async (ctx) => {
    const now = clock();
    ctx.body = { invites: (await invites.list()).map((r) => publicInvite(r, now)) };
  });
  router.post('/invites/:id/revoke', async (ctx) => {
    const id = ctx.params.id!;
    // A token here is a mistake that must not spread: refused without echoing it (the request log redacts it).
    if (mayBeToken(id)) throw new InvalidParametersError({ id: [TOKEN_FOR_ID] });
    if (!looksLikeInviteId(id)) throw new NotFoundError('No invite has that id; `admin invite list` shows the ids (inv_ + 16 hex)');
    const now = clock();
    const record = await invites.revoke(id, now);
    if (!record) throw new NotFoundError(`No invite has the id ${id}`);
    if (record.claimed_at !== null)
      throw new ConflictError(`Invite ${record.id} was already claimed (key ${record.key_id ?? 'being issued'}); revoke that key instead`);
    ctx.body = { invite: publicInvite(record, now) };
  });
}
