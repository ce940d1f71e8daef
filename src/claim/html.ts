// The claim pages as HTML strings: server-rendered, no JavaScript needed, every
// value escaped. Only the copy button uses a script, and the page works without it.

export const SERVICE_NAME = 'Data Query Service';

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ENTITIES[c]!);

function layout(title: string, body: string, script = false): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)} · ${SERVICE_NAME}</title>
<link rel="stylesheet" href="/claim/assets/claim.css">
${script ? '<script src="/claim/assets/copy.js" defer></script>\n' : ''}</head>
<body>
<header>${SERVICE_NAME}</header>
<main>
${body}
</main>
<footer>
<nav aria-label="The service"><a href="/explore">Explore the data in your browser</a> · <a href="/docs">API reference</a></nav>
<p>API keys for the ${SERVICE_NAME} are issued by invite. Keep yours secret: it identifies you on every request.</p>
</footer>
</body>
</html>
`;
}

const date = (iso: string) => new Date(iso).toUTCString().replace(/:\d\d GMT$/, ' UTC');

export function claimPage(client: string, expiresAt: string, csrf: string): string {
  return layout(
    'Claim your API key',
    `<h1>Claim your API key</h1>
<p>This invite is for <strong>${escapeHtml(client)}</strong>. It works once, until ${escapeHtml(date(expiresAt))}.</p>
<p class="muted">Your key is shown once, on the next page. Have a safe place ready to store it, such as a password manager.</p>
<form method="post">
<input type="hidden" name="csrf" value="${escapeHtml(csrf)}">
<button type="submit">Claim Your API Key</button>
</form>`,
  );
}

export function keyPage(client: string, key: string, baseUrl: string): string {
  return layout(
    'Your API key',
    `<h1>Your API key</h1>
<p class="warning" role="alert"><strong>Copy this key now.</strong> It is shown only this once and cannot be shown again. If you lose it, ask the operator for a new invite.</p>
<label for="key">API key for ${escapeHtml(client)}</label>
<div class="key-row">
<input id="key" name="key" type="text" value="${escapeHtml(key)}" readonly spellcheck="false" autocomplete="off" aria-describedby="key-status">
<button type="button" class="secondary" data-copy="key" hidden>Copy</button>
</div>
<p id="key-status" role="status" aria-live="polite"></p>
<p>Send it in the <code>x-api-key</code> header of every request:</p>
<pre><code>curl -H "x-api-key: ${escapeHtml(key)}" ${escapeHtml(baseUrl)}/v1/catalog</code></pre>
<p>Or paste it into <a href="/explore">Explore</a> to browse the data in your browser; the <a href="/docs">API reference</a> lists every endpoint.</p>`,
    true,
  );
}

export type Refusal = 'unknown' | 'claimed' | 'expired' | 'revoked' | 'forged' | 'too-many' | 'method' | 'failed';

const REFUSALS: Record<Refusal, { title: string; text: string }> = {
  unknown: {
    title: 'This invite link is not valid',
    text: 'The link may be mistyped or incomplete. Check that you copied all of it, or ask the operator for a new invite.',
  },
  claimed: {
    title: 'This invite has already been used',
    text: 'Each invite gives one key, and this one has been claimed. If you did not store the key, ask the operator for a new invite.',
  },
  expired: { title: 'This invite has expired', text: 'Invites work for a limited time. Ask the operator for a new invite.' },
  revoked: { title: 'This invite was withdrawn', text: 'The operator revoked this invite. Ask the operator for a new one.' },
  forged: {
    title: 'Please open your invite link again',
    text: 'This form was not sent from the page your invite link opened, or the page was open for too long. Open the invite link again and press the button there. Your invite has not been used.',
  },
  'too-many': {
    title: 'Too many attempts',
    text: 'Too many invalid invite links were opened from your network. Wait a minute, then open your invite link again.',
  },
  method: { title: 'This page only opens in a browser', text: 'Open the invite link in a web browser and press the button there.' },
  failed: {
    title: 'Your key could not be created',
    text: 'Something went wrong on our side, and your invite has not been used. Please open the invite link again in a moment.',
  },
};

export function refusalPage(reason: Refusal): string {
  const { title, text } = REFUSALS[reason];
  return layout(title, `<h1>${escapeHtml(title)}</h1>\n<p>${escapeHtml(text)}</p>`);
}
