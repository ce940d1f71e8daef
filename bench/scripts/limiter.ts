import { limitHeaders } from '../../src/http/middleware/limit-headers.ts';
import { hashKey } from '../../src/keys/key-format.ts';
import { MemoryLimiter } from '../../src/limits/memory.ts';
import { NoopLimiter } from '../../src/limits/noop.ts';
import { RedisLimiter } from '../../src/limits/redis.ts';
import { createLogger } from '../../src/log.ts';
import { connectRedis } from '../../src/redis.ts';
import { REDIS_BINARY, startRedis } from '../../tools/redis-server.ts';

// `npm run bench:limits`: what a limiter adds to one request, next to the noop
// limiter (the ceiling: the same code path counting nothing) in the same run.
// Memory: 1000 keys at the spec's limits; Redis: a real redis-server on loopback,
// one request at a time, so the figure is one round trip plus the script.

const log = (text: string) => process.stderr.write(`${text}\n`);
const POLICY = { perMinute: 100, perDay: 10_000 };
const ids = Array.from({ length: 1000 }, (_, i) => `key_${i}`);

async function perCall(name: string, calls: number, fn: (i: number) => Promise<unknown> | unknown) {
  for (let i = 0; i < Math.min(calls, 2000); i++) await fn(i); // warm up
  const started = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) await fn(i);
  const us = Number(process.hrtime.bigint() - started) / 1000 / calls;
  log(`${name.padEnd(52)} ${us.toFixed(2).padStart(8)} µs per call`);
  return us;
}

const noop = new NoopLimiter(POLICY, Date.now);
const memory = new MemoryLimiter(POLICY, Date.now);
// Alternated (noop, memory, memory, noop) so neither gains from a warmer process.
const runs = { noop: [] as number[], memory: [] as number[] };
for (const which of ['noop', 'memory', 'memory', 'noop'] as const) {
  const limiter = which === 'noop' ? noop : memory;
  runs[which].push(await perCall(`${which} limiter consume()`, 200_000, (i) => limiter.consume(ids[i % 1000]!)));
}
const mean = (xs: number[]) => xs.reduce((a, b) => a + b) / xs.length;
log(`memory limiter adds ${(mean(runs.memory) - mean(runs.noop)).toFixed(2)} µs per request over the noop ceiling (budget: < 20 µs)`);
const decision = await memory.consume('headers');
await perCall('limit headers rendered', 200_000, () => limitHeaders(decision));
const keys = new Map(ids.map((id) => [hashKey(id), id]));
await perCall('key check from the local copy (sha256 + Map get)', 200_000, (i) => keys.get(hashKey(ids[i % 1000]!)));

if (!REDIS_BINARY) {
  log('redis-server not found: Redis figures skipped');
} else {
  const server = await startRedis();
  const redis = await connectRedis(server.url, 1000, createLogger('silent'));
  try {
    const limiter = new RedisLimiter(POLICY, { redis, prefix: 'bench:', log: createLogger('silent') });
    await perCall('redis limiter (one Lua script round trip)', 20_000, (i) => limiter.consume(ids[i % 1000]!));
    await perCall('redis PING round trip', 20_000, () => redis.ping());
    await redis.hset('bench:keys', ...ids.flatMap((id) => [hashKey(id), JSON.stringify({ id })]));
    await perCall('key check by HGET per request (not chosen)', 20_000, (i) => redis.hget('bench:keys', hashKey(ids[i % 1000]!)));
  } finally {
    redis.disconnect();
    await server.stop();
  }
}
