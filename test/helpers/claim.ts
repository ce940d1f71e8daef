import { type Response, send } from './service.ts';

// The claim flow as a browser without JavaScript runs it: open the invite link, keep
// the cookie it sets, send the form back with its hidden field.

export interface ClaimForm {
  readonly page: Response;
  readonly cookie: string;
  readonly csrf: string;
}

export async function openInvite(url: string): Promise<ClaimForm> {
  const page = await send(url);
  const setCookie = [page.headers['set-cookie'] ?? []].flat()[0] ?? '';
  return { page, cookie: setCookie.split(';')[0]!, csrf: /name="csrf" value="([^"]+)"/.exec(page.text)?.[1] ?? '' };
}

export const postClaim = (url: string, form: Pick<ClaimForm, 'cookie' | 'csrf'>, headers: Record<string, string> = {}) =>
  send(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: form.cookie, ...headers },
    body: new URLSearchParams({ csrf: form.csrf }).toString(),
  });

/** The key shown on a successful claim page. */
export const shownKey = (html: string) => /id="key"[^>]*value="(sk_live_[0-9A-Za-z]+)"/.exec(html)?.[1];

export async function claim(url: string): Promise<Response> {
  return postClaim(url, await openInvite(url));
}
