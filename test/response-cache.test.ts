import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { LruResponseCache } from '../src/cache/lru.ts';
import { NoopResponseCache } from '../src/cache/noop.ts';
import type { ResponseCache } from '../src/cache/store.ts';

// One contract for every ResponseCache (undici's cacheStoreTests pattern). A cache
// may decline to keep anything (`keeps: false`), but whatever it returns must be
// exactly what was stored under that key, and it must stay within its bound.

const body = (text: string) => Buffer.from(text);
const size = (key: string, text: string) => key.length + Buffer.byteLength(text);

function contract(name: string, make: (maxBytes: number) => ResponseCache, keeps: boolean): void {
  const test = suite(`ResponseCache contract: ${name}`);

  test('an unknown key is a miss', () => {
    assert.is(make(1000).get('nothing here'), undefined);
  });

  test('a hit is the exact bytes stored under that key, never another key’s', () => {
    const cache = make(1000);
    cache.set('a', body('{"a":1}'));
    cache.set('b', body('{"b":2}'));
    for (const [key, text] of [
      ['a', '{"a":1}'],
      ['b', '{"b":2}'],
    ] as const) {
      const hit = cache.get(key);
      if (keeps) assert.is(hit?.toString(), text, key);
      else assert.is(hit, undefined, key);
    }
    assert.is(cache.get('c'), undefined);
  });

  test('set replaces the body under a key', () => {
    const cache = make(1000);
    cache.set('a', body('old'));
    cache.set('a', body('new'));
    assert.is(cache.get('a')?.toString(), keeps ? 'new' : undefined);
    assert.is(cache.bytes, keeps ? size('a', 'new') : 0);
  });

  test('clear empties it', () => {
    const cache = make(1000);
    cache.set('a', body('x'));
    cache.set('b', body('y'));
    cache.clear();
    assert.is(cache.get('a'), undefined);
    assert.is(cache.get('b'), undefined);
    assert.is(cache.bytes, 0);
  });

  test('bounded in bytes: the least recently used go first', () => {
    const cache = make(100);
    const text = 'x'.repeat(29); // 30 bytes with its one-character key
    for (const key of ['a', 'b', 'c']) cache.set(key, body(text));
    assert.is(cache.bytes, keeps ? 90 : 0);
    cache.get('a'); // now b is the least recently used
    cache.set('d', body(text));
    assert.ok(cache.bytes <= 100, `${cache.bytes} bytes held`);
    assert.is(cache.get('b'), undefined, 'b evicted');
    for (const key of ['a', 'c', 'd']) assert.is(cache.get(key)?.length, keeps ? 29 : undefined, key);
  });

  test('an entry larger than the bound is not kept and evicts nothing', () => {
    const cache = make(100);
    cache.set('a', body('small'));
    cache.set('big', Buffer.alloc(200));
    assert.is(cache.get('big'), undefined);
    assert.is(cache.get('a')?.toString(), keeps ? 'small' : undefined);
  });

  test('keeps says whether set would keep an entry of that size', () => {
    const cache = make(100);
    for (const bytes of [1, 97, 98, 99, 200]) {
      const key = `k${bytes}`;
      const said = cache.keeps(key, bytes);
      cache.set(key, Buffer.alloc(bytes));
      assert.is(said, cache.get(key) !== undefined, `${bytes} bytes under ${key}`);
      cache.clear();
    }
    if (keeps) assert.ok(cache.keeps('k', 99) && !cache.keeps('k', 100), 'the bound counts the key as set does');
  });

  test.run();
}

contract('lru-cache', (maxBytes) => new LruResponseCache(maxBytes), true);
contract('noop', () => new NoopResponseCache(), false);
