import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

// A real webhook receiver on loopback: it keeps every request and answers each as the
// test scripts (a status, headers, or a held answer).

export interface Received {
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: string;
  /** When it arrived (ms since the epoch). */
  readonly at: number;
}

export interface Answer {
  readonly status: number;
  readonly headers?: Record<string, string>;
}

export interface Receiver {
  readonly url: string;
  readonly received: Received[];
  /** Answers to give (to requests for `path`, or any other), first to last; past them, 200. */
  script(answers: readonly Answer[], path?: string): void;
  /** Requests whose webhook-id is `id`. */
  of(id: string): Received[];
  close(): Promise<void>;
}

/** The settings that let a server's webhooks reach a receiver on loopback over http. */
export const LOOPBACK_WEBHOOKS = { WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8', WEBHOOK_ALLOW_HTTP: 'true' };

/** `before`, when given, runs on each request before it is answered (what a subscriber does on arrival). */
export async function startReceiver(before?: (request: Received) => Promise<void>): Promise<Receiver> {
  const received: Received[] = [];
  const answers = new Map<string, Answer[]>();
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
    const request = { path: req.url ?? '/', headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
    received.push(request);
    await before?.(request);
    const answer = answers.get(req.url ?? '/')?.shift() ?? answers.get('')?.shift() ?? { status: 200 };
    res.writeHead(answer.status, answer.headers).end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    script(list, path = '') {
      answers.set(path, [...list]);
    },
    of: (id) => received.filter((r) => r.headers['webhook-id'] === id),
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** The payload if `request` verifies against `secret` with the reference verifier; throws otherwise. */
export const verified = (secret: string, request: Pick<Received, 'body' | 'headers'>) =>
  new Webhook(secret).verify(request.body, {
    'webhook-id': request.headers['webhook-id']!,
    'webhook-timestamp': request.headers['webhook-timestamp']!,
    'webhook-signature': request.headers['webhook-signature']!,
  });
