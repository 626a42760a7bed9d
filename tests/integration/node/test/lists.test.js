// Lists, blocking pops and sorted sets through ioredis, as node services use them: a work queue
// with a producer and competing BRPOP consumers, BRPOP served by a producer on another
// connection, a reliable queue with BLMOVE, a leaderboard, a sliding-window rate limiter and a
// store locator on a geo index (a sorted set too).
//
// The server is lapse-server ($LAPSE_SERVER, relative paths from the repository root, or
// <repo>/build/lapse-server) with --threads 4; LAPSE_TARGET=redis runs Debian's redis-server
// instead, to check the expectations against Redis 7.0:
//   LAPSE_TARGET=redis node --test test/lists.test.js
// Sorted sets are built separately: the leaderboard and limiter tests are skipped while the
// server answers ZADD with "unknown command".
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import Redis from 'ioredis';

import { rawExchange, sleep, startServer, stopServer, target } from '../lib/server.js';

async function blockedClients(client) {
  const info = await client.info('clients');
  const match = /^blocked_clients:(\d+)\r?$/m.exec(info);
  assert.ok(match, `no blocked_clients in ${info}`);
  return Number(match[1]);
}

// Waits until INFO clients counts exactly n blocked clients.
async function waitBlocked(client, n, timeoutMs = 10000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const count = await blockedClients(client);
    if (count === n) return;
    if (Date.now() > deadline) assert.fail(`blocked_clients is ${count}, expected ${n}`);
    await sleep(10);
  }
}

describe(`ioredis lists and queues against ${target}`, () => {
  let srv;
  let redis;
  let hasZsets = false;
  const extra = [];

  const connect = (options = {}) => {
    const c = new Redis({ port: srv.port, host: '127.0.0.1', ...options });
    extra.push(c);
    return c;
  };

  before(async () => {
    srv = await startServer();
    redis = new Redis({ port: srv.port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0 });
    await redis.connect();
    try {
      await redis.zadd('__zset_probe', 1, 'm');
      await redis.del('__zset_probe');
      hasZsets = true;
    } catch (err) {
      if (!/unknown command/.test(err.message)) throw err;
    }
  });

  after(async () => {
    for (const c of extra) c.disconnect();
    if (redis) redis.disconnect();
    if (srv) await stopServer(srv);
  });

  test('list basics: push, range, pop with count, the key goes with its last element', async () => {
    await redis.flushall();
    assert.equal(await redis.rpush('l', 'a', 'b', 'c'), 3);
    assert.equal(await redis.lpush('l', 'z'), 4);
    assert.deepEqual(await redis.lrange('l', 0, -1), ['z', 'a', 'b', 'c']);
    assert.equal(await redis.lindex('l', -1), 'c');
    assert.equal(await redis.lindex('l', 10), null);
    assert.equal(await redis.lpos('l', 'b'), 2);
    assert.deepEqual(await redis.lpop('l', 2), ['z', 'a']);
    assert.equal(await redis.rpop('l'), 'c');
    assert.equal(await redis.type('l'), 'list');
    assert.equal(await redis.lmove('l', 'other', 'LEFT', 'RIGHT'), 'b');
    assert.equal(await redis.exists('l'), 0);
    assert.equal(await redis.lpop('l'), null);
    assert.equal(await redis.lpop('l', 3), null);
    assert.deepEqual(await redis.lmpop(2, 'l', 'other', 'LEFT', 'COUNT', 5), ['other', ['b']]);
    assert.equal(await redis.lmpop(1, 'other', 'LEFT'), null);
    await assert.rejects(redis.lset('missing', 0, 'x'), (err) => err.message === 'ERR no such key');
    await redis.rpush('l', 'x');
    await assert.rejects(redis.lset('l', 5, 'x'), (err) => err.message === 'ERR index out of range');
    await redis.set('str', 'v');
    await assert.rejects(redis.lpush('str', 'x'),
      (err) => err.message === 'WRONGTYPE Operation against a key holding the wrong kind of value');
    await assert.rejects(redis.blpop('l', -1), (err) => err.message === 'ERR timeout is negative');
    await assert.rejects(redis.blpop('l', 'soon'), (err) => err.message === 'ERR timeout is not a float or out of range');
  });

  test('brpop served by a producer on another connection', async () => {
    await redis.flushall();
    const consumer = connect();
    const producer = connect();
    const popped = consumer.brpop('q', 0);
    await waitBlocked(producer, 1);
    assert.equal(await producer.lpush('q', 'x'), 1);
    assert.deepEqual(await popped, ['q', 'x']);
    assert.equal(await producer.llen('q'), 0);
    // several keys; the one that gets an element answers
    const multi = consumer.brpop('k1', 'k2', 'k3', 0);
    await waitBlocked(producer, 1);
    assert.equal(await producer.rpush('k3', 'a', 'b'), 2);
    assert.deepEqual(await multi, ['k3', 'b']);
    assert.deepEqual(await producer.lrange('k3', 0, -1), ['a']);
    // a timeout with decimals answers null
    const started = Date.now();
    assert.equal(await consumer.brpop('empty', 0.2), null);
    const elapsed = Date.now() - started;
    assert.ok(elapsed >= 100 && elapsed < 5000, `elapsed ${elapsed} ms`);
    // blmove into a destination, then blmpop with a count
    const moved = consumer.blmove('src', 'dst', 'LEFT', 'RIGHT', 0);
    await waitBlocked(producer, 1);
    await producer.rpush('src', 'm1', 'm2');
    assert.equal(await moved, 'm1');
    assert.deepEqual(await producer.lrange('dst', 0, -1), ['m1']);
    const many = consumer.blmpop(0, 1, 'batch', 'LEFT', 'COUNT', 2);
    await waitBlocked(producer, 1);
    await producer.rpush('batch', '1', '2', '3');
    assert.deepEqual(await many, ['batch', ['1', '2']]);
    assert.equal(await blockedClients(producer), 0);
  });

  test('work queue: a producer and two BRPOP consumers, every job consumed once', async () => {
    await redis.flushall();
    const jobs = 1000;
    const producer = connect();
    const consumers = [connect(), connect()];
    let producerDone = false;
    const produce = (async () => {
      for (let i = 0; i < jobs; i += 50) {
        if ((i / 50) % 2) {
          await producer.lpush('jobs', ...Array.from({ length: 50 }, (_, j) => `job:${i + j}`));
        } else {
          const pipeline = producer.pipeline();
          for (let j = i; j < i + 50; j++) pipeline.lpush('jobs', `job:${j}`);
          await pipeline.exec();
        }
      }
      producerDone = true;
    })();
    const consume = async (c) => {
      const got = [];
      for (;;) {
        const finished = producerDone; // stop only after a timeout that began once all was produced
        const item = await c.brpop('jobs', 1);
        if (item === null) {
          if (finished) return got;
          continue;
        }
        assert.equal(item[0], 'jobs');
        got.push(Number(item[1].split(':')[1]));
      }
    };
    const [, a, b] = await Promise.all([produce, consume(consumers[0]), consume(consumers[1])]);
    const all = [...a, ...b].sort((x, y) => x - y);
    assert.deepEqual(all, Array.from({ length: jobs }, (_, i) => i));
    for (const got of [a, b]) assert.deepEqual(got, [...got].sort((x, y) => x - y)); // FIFO per consumer
    assert.equal(await redis.exists('jobs'), 0);
  });

  test('reliable queue with BLMOVE into a processing list', async () => {
    await redis.flushall();
    const workers = [connect(), connect(), connect()];
    const done = [];
    const work = async (c) => {
      for (;;) {
        const job = await c.blmove('rq:pending', 'rq:processing', 'RIGHT', 'LEFT', 5);
        if (job === null) continue;
        assert.equal(await c.lrem('rq:processing', 1, job), 1);
        if (job === 'stop') return;
        done.push(job);
      }
    };
    const running = workers.map(work);
    for (let i = 0; i < 300; i += 30) {
      const length = await redis.lpush('rq:pending', ...Array.from({ length: 30 }, (_, j) => `task${i + j}`));
      assert.ok(length >= 30);
    }
    await redis.lpush('rq:pending', 'stop', 'stop', 'stop');
    await Promise.all(running);
    assert.deepEqual([...done].sort(), Array.from({ length: 300 }, (_, j) => `task${j}`).sort());
    assert.equal(await redis.exists('rq:pending', 'rq:processing'), 0);
  });

  test('leaderboard with a sorted set', async (t) => {
    if (!hasZsets) { t.skip('the server has no sorted sets yet (ZADD: unknown command)'); return; }
    await redis.flushall();
    assert.equal(await redis.zadd('board', 120, 'ann', 95, 'bob', 120, 'cy', 40, 'dee'), 4);
    assert.equal(await redis.zincrby('board', 30, 'bob'), '125');
    assert.equal(await redis.zincrby('board', 5, 'eve'), '5');
    assert.deepEqual(await redis.zrevrange('board', 0, 2, 'WITHSCORES'), ['bob', '125', 'cy', '120', 'ann', '120']);
    assert.deepEqual(await redis.zrevrange('board', 0, -1), ['bob', 'cy', 'ann', 'dee', 'eve']);
    assert.equal(await redis.zrank('board', 'eve'), 0);
    assert.equal(await redis.zrevrank('board', 'bob'), 0);
    assert.equal(await redis.zrank('board', 'nobody'), null);
    assert.equal(await redis.zscore('board', 'ann'), '120');
    assert.equal(await redis.zincrby('board', 0.5, 'dee'), '40.5');
    assert.deepEqual(await redis.zrange('board', 0, 1, 'WITHSCORES'), ['eve', '5', 'dee', '40.5']);
    assert.equal(await redis.zcard('board'), 5);
  });

  test('sliding-window rate limiter with a MULTI pipeline', async (t) => {
    if (!hasZsets) { t.skip('the server has no sorted sets yet (ZADD: unknown command)'); return; }
    await redis.flushall();
    const allow = async (client, key, nowMs, seq, limit, windowMs) => {
      const results = await client.multi()
        .zremrangebyscore(key, 0, nowMs - windowMs)
        .zadd(key, nowMs, `${nowMs}-${seq}`)
        .zcard(key)
        .expire(key, 60)
        .exec();
      for (const [err] of results) assert.equal(err, null);
      assert.equal(results[1][1], 1);
      assert.equal(results[3][1], 1);
      return { allowed: results[2][1] <= limit, removed: results[0][1] };
    };
    const times = [0, 200, 400, 600, 1100, 1300, 2500, 2600, 2700, 2800];
    const outcomes = [];
    for (const [i, now] of times.entries()) outcomes.push(await allow(redis, 'rate:ann', now, i, 3, 1000));
    assert.deepEqual(outcomes.map((o) => o.allowed), [true, true, true, false, false, false, true, true, true, false]);
    assert.deepEqual(outcomes.map((o) => o.removed), [0, 0, 0, 0, 1, 1, 4, 0, 0, 0]);
    assert.deepEqual(await redis.zrange('rate:ann', 0, -1), ['2500-6', '2600-7', '2700-8', '2800-9']);
    const ttl = await redis.ttl('rate:ann');
    assert.ok(ttl > 0 && ttl <= 60, `ttl ${ttl}`);
    // 20 simultaneous callers on their own connections: exactly the limit get through
    const callers = Array.from({ length: 20 }, () => connect());
    const burst = await Promise.all(callers.map((c, n) => allow(c, 'rate:burst', 10000, n, 7, 1000)));
    assert.equal(burst.filter((o) => o.allowed).length, 7);
    assert.equal(await redis.zcard('rate:burst'), 20);
  });

  test('store locator with the geo commands', async (t) => {
    if (!hasZsets) { t.skip('the server has no sorted sets yet (ZADD: unknown command)'); return; }
    await redis.flushall();
    assert.equal(await redis.geoadd('shops', 13.361389, 38.115556, 'Palermo', 15.087269, 37.502669, 'Catania'), 2);
    assert.equal(await redis.geoadd('shops', 'NX', 13.361389, 38.115556, 'Palermo'), 0);
    assert.equal(await redis.geodist('shops', 'Palermo', 'Catania', 'km'), '166.2742');
    assert.deepEqual(await redis.geopos('shops', 'Palermo', 'nosuch'),
      [['13.36138933897018433', '38.11555639549629859'], null]);
    assert.deepEqual(await redis.geohash('shops', 'Palermo', 'Catania'), ['sqc8b49rny0', 'sqdtr74hyu0']);
    assert.deepEqual(await redis.georadius('shops', 15, 37, 200, 'km', 'WITHDIST', 'ASC'),
      [['Catania', '56.4413'], ['Palermo', '190.4424']]);
    assert.deepEqual(await redis.geosearch('shops', 'FROMMEMBER', 'Palermo', 'BYBOX', 400, 400, 'km', 'DESC', 'COUNT', 1),
      ['Catania']);
    assert.deepEqual(await redis.geosearch('shops', 'FROMLONLAT', 15, 37, 'BYRADIUS', 100, 'km', 'WITHHASH', 'WITHCOORD'),
      [['Catania', 3479447370796909, ['15.08726745843887329', '37.50266842333162032']]]);
    assert.equal(await redis.geosearchstore('near', 'shops', 'FROMLONLAT', 15, 37, 'BYRADIUS', 200, 'km', 'STOREDIST'), 2);
    assert.deepEqual(await redis.zrange('near', 0, -1, 'WITHSCORES'),
      ['Catania', '56.441257870158204', 'Palermo', '190.44242984775784']);
    assert.equal(await redis.type('shops'), 'zset');
    await assert.rejects(redis.geoadd('shops', 200, 100, 'bad'), /invalid longitude,latitude pair 200.000000,100.000000/);
    await assert.rejects(redis.geosearch('shops', 'FROMLONLAT', 15, 37, 'BYRADIUS', 1, 'parsec'), /unsupported unit/);
  });
});
