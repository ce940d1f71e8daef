import { createHmac, randomBytes } from 'node:crypto';

// Standard Webhooks signatures (https://www.standardwebhooks.com): the receiver checks
// them with any of its libraries (the npm package `standardwebhooks` in our tests).

const PREFIX = 'whsec_';

/** A new secret: `whsec_` and 32 random bytes in base64, as the spec's libraries make them. */
export const newSecret = (): string => `${PREFIX}${randomBytes(32).toString('base64')}`;

/** `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">` for one secret. */
function signature(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.slice(PREFIX.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/** The three headers of one attempt; one signature per secret (two while a secret rotates), space-separated. */
export function signedHeaders(secrets: readonly string[], id: string, timestamp: number, body: string): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets.map((secret) => signature(secret, id, timestamp, body)).join(' '),
  };
}
