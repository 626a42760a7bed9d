// ioredis against the real lapse-server binary on a free loopback port, with node's
// built-in test runner; the server harness is lib/server.js, shared with the other files.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import Redis from 'ioredis';

import { rawExchange, startServer, stopServer } from '../lib/server.js';

describe('ioredis against lapse-server', () => {
  let srv;
  let redis;

  before(async () => {
    srv = await startServer();
    redis = new Redis({ port: srv.port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0 });
    await redis.connect();
  });

  after(async () => {
    if (redis) redis.disconnect();
    if (srv) await stopServer(srv);
  });

  test('PING, ECHO', async () => {
    assert.equal(await redis.ping(), 'PONG');
    assert.equal(await redis.ping('hello'), 'hello');
    assert.equal(await redis.echo('a b\r\nc'), 'a b\r\nc');
  });

  test('SET / GET, options and binary values', async () => {
    assert.equal(await redis.set('greeting', 'hello'), 'OK');
    assert.equal(await redis.get('greeting'), 'hello');
    assert.equal(await redis.get('missing'), null);
    assert.equal(await redis.set('greeting', 'x', 'NX'), null);
    assert.equal(await redis.set('greeting', 'world', 'XX', 'GET'), 'hello');
    assert.equal(await redis.set('ttl', 'v', 'EX', 100), 'OK');
    assert.equal(await redis.ttl('ttl'), 100);
    const bin = Buffer.from([0, 1, 2, 13, 10, 255, 0]);
    assert.equal(await redis.set(Buffer.from('bin\0key'), bin), 'OK');
    assert.deepEqual(await redis.getBuffer(Buffer.from('bin\0key')), bin);
    assert.equal(await redis.incr('counter'), 1);
    assert.equal(await redis.incrbyfloat('counter', '1.5'), '2.5');
    await assert.rejects(redis.set('k', 'v', 'NX', 'XX'), /ERR syntax error/);
    await assert.rejects(redis.incr('greeting'), /ERR value is not an integer or out of range/);
  });

  test('pipeline of 10,000 commands answers in order', async () => {
    const pipeline = redis.pipeline();
    const expected = [];
    const counters = new Map();
    for (let i = 0; i < 10000; i++) {
      const key = `p:${i % 997}`;
      switch (i % 4) {
        case 0:
          pipeline.set(`s:${i}`, `v${i}`);
          expected.push('OK');
          break;
        case 1:
          pipeline.get(`s:${i - 1}`);
          expected.push(`v${i - 1}`);
          break;
        default: {
          pipeline.incr(key);
          const n = (counters.get(key) || 0) + 1;
          counters.set(key, n);
          expected.push(n);
        }
      }
    }
    const results = await pipeline.exec();
    assert.equal(results.length, 10000);
    results.forEach(([err, value], i) => {
      assert.equal(err, null, `command ${i}`);
      assert.equal(value, expected[i], `command ${i}`);
    });
  });

  test('auto-pipelined concurrent commands', async () => {
    const client = new Redis({ port: srv.port, enableAutoPipelining: true });
    const replies = await Promise.all(Array.from({ length: 2000 }, (_, i) => client.set(`ap:${i}`, i)
      .then(() => client.get(`ap:${i}`))));
    replies.forEach((v, i) => assert.equal(v, String(i)));
    client.disconnect();
  });

  test('multi-key MGET / MSET / DEL / EXISTS across shards', async () => {
    const keys = Array.from({ length: 200 }, (_, i) => `mk:${i}`);
    const flat = keys.flatMap((k, i) => [k, `val${i}`]);
    assert.equal(await redis.mset(...flat), 'OK');
    const values = await redis.mget(...keys, 'mk:missing');
    assert.deepEqual(values, [...keys.map((_, i) => `val${i}`), null]);
    assert.equal(await redis.exists(...keys, keys[0]), 201);
    assert.equal(await redis.msetnx('mk:0', 'x', 'mk:new', 'y'), 0);
    assert.equal(await redis.del(...keys.slice(0, 100)), 100);
    assert.equal(await redis.exists(...keys), 100);
  });

  test('SCAN stream returns every key once', async () => {
    await redis.flushdb();
    const pipeline = redis.pipeline();
    for (let i = 0; i < 500; i++) pipeline.set(`scan:${i}`, i);
    await pipeline.exec();
    const seen = new Set();
    const stream = redis.scanStream({ match: 'scan:*', count: 50 });
    for await (const batch of stream) batch.forEach((k) => seen.add(k));
    assert.equal(seen.size, 500);
    assert.equal(await redis.dbsize(), 500);
  });

  test('expiry via DEBUG ADVANCE', async () => {
    await redis.flushdb();
    await redis.set('short', 'v', 'PX', 1500);
    await redis.set('long', 'v', 'EX', 100);
    await redis.set('forever', 'v');
    assert.equal(await redis.call('DEBUG', 'ADVANCE', '1000'), 'OK');
    assert.deepEqual(await redis.mget('short', 'long', 'forever'), ['v', 'v', 'v']);
    const pttl = await redis.pttl('short');
    assert.ok(pttl > 0 && pttl <= 500, `pttl ${pttl}`);
    await redis.call('DEBUG', 'ADVANCE', '501'); // Redis: visible at the deadline ms, gone after it
    assert.deepEqual(await redis.mget('short', 'long', 'forever'), [null, 'v', 'v']);
    assert.equal(await redis.exists('short'), 0);
    assert.equal(await redis.ttl('short'), -2);
    assert.equal(await redis.type('short'), 'none');
    assert.deepEqual((await redis.keys('*')).sort(), ['forever', 'long']);
    assert.equal(await redis.dbsize(), 2);
    await redis.call('DEBUG', 'ADVANCE', '100000');
    assert.deepEqual(await redis.keys('*'), ['forever']);
    assert.equal(await redis.randomkey(), 'forever');
  });

  test('HELLO: RESP2 through ioredis, RESP3 as raw bytes', async () => {
    const hello = await redis.call('HELLO', '2');
    assert.ok(Array.isArray(hello));
    const fields = Object.fromEntries(Array.from({ length: hello.length / 2 }, (_, i) => [hello[2 * i], hello[2 * i + 1]]));
    assert.equal(fields.server, 'redis');
    assert.equal(fields.proto, 2);
    assert.equal(fields.mode, 'standalone');
    // ioredis 5 has no RESP3 parser, so RESP3 is checked on a raw socket
    const raw = await rawExchange(srv.port, '*2\r\n$5\r\nHELLO\r\n$1\r\n3\r\n*2\r\n$3\r\nGET\r\n$7\r\nmissing\r\n',
      (b) => b.toString('latin1').endsWith('*0\r\n_\r\n'));
    const text = raw.toString('latin1');
    assert.ok(text.startsWith('%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n'), text);
    assert.ok(text.includes('$5\r\nproto\r\n:3\r\n'), text);
    assert.ok(text.endsWith('$7\r\nmodules\r\n*0\r\n_\r\n'), text);
  });

  test('INFO', async () => {
    await redis.flushall();
    await redis.set('a', '1', 'EX', 1000);
    await redis.set('b', '2');
    const info = await redis.info();
    const fields = Object.fromEntries(info.split('\r\n').filter((l) => l.includes(':')).map((l) => {
      const at = l.indexOf(':');
      return [l.slice(0, at), l.slice(at + 1)];
    }));
    assert.match(fields.redis_version, /^7\./);
    assert.ok(Number(fields.connected_clients) >= 1);
    assert.ok(Number(fields.used_memory) > 0);
    assert.match(fields.db0, /^keys=2,expires=1,avg_ttl=\d+$/);
    const keyspace = await redis.info('keyspace');
    assert.ok(keyspace.startsWith('# Keyspace\r\n'));
  });

  test('connection options: db, connectionName, and CLIENT commands', async () => {
    const client = new Redis({ port: srv.port, db: 5, connectionName: 'node-test' });
    await client.set('in5', 'x');
    assert.equal(await client.client('GETNAME'), 'node-test');
    assert.equal(await redis.get('in5'), null);
    await redis.select(5);
    assert.equal(await redis.get('in5'), 'x');
    await redis.select(0);
    const list = await redis.client('LIST');
    assert.match(list, /name=node-test .*db=5 /);
    client.disconnect();
  });

  test('errors for unknown commands and wrong arity', async () => {
    await assert.rejects(redis.call('nosuchcommand', 'a', 'b'),
      (err) => err.message === "ERR unknown command 'nosuchcommand', with args beginning with: 'a' 'b' ");
    await assert.rejects(redis.call('get'), (err) => err.message === "ERR wrong number of arguments for 'get' command");
  });

  test('multi(): MULTI/EXEC with per-command results and runtime errors', async () => {
    await redis.set('text', 'x');
    const results = await redis.multi().set('m', '1').incr('m').incr('text').get('m').exec();
    assert.equal(results.length, 4);
    assert.deepEqual(results[0], [null, 'OK']);
    assert.deepEqual(results[1], [null, 2]);
    assert.equal(results[2][0].message, 'ERR value is not an integer or out of range');
    assert.deepEqual(results[3], [null, '2']);
  });

  test('multi() with WATCH: a concurrent write makes exec() resolve to null', async () => {
    const watcher = new Redis({ port: srv.port });
    await watcher.watch('w');
    await redis.set('w', 'changed');
    assert.equal(await watcher.multi().set('w', 'mine').exec(), null);
    assert.equal(await redis.get('w'), 'changed');
    await watcher.watch('w');
    assert.deepEqual(await watcher.multi().set('w', 'mine').exec(), [[null, 'OK']]);
    watcher.disconnect();
  });

  test('multi() with a refused command rejects with EXECABORT and changes nothing', async () => {
    await assert.rejects(redis.multi().set('never', '1').call('nosuchcommand').exec(),
      (err) => err.message.startsWith('EXECABORT Transaction discarded because of previous errors.'));
    assert.equal(await redis.get('never'), null);
  });

  test('defineCommand: EVALSHA first, EVAL after NOSCRIPT, results and errors', async () => {
    redis.defineCommand('swapValues', {
      numberOfKeys: 2,
      lua: "local a = redis.call('get', KEYS[1]); local b = redis.call('get', KEYS[2]); " +
        "redis.call('set', KEYS[1], b); redis.call('set', KEYS[2], a); return {a, b}",
    });
    redis.defineCommand('failing', { numberOfKeys: 0, lua: "return redis.call('incr', 'text')" });
    await redis.script('FLUSH');
    await redis.mset('sa', 'left', 'sb', 'right');
    assert.deepEqual(await redis.swapValues('sa', 'sb'), ['left', 'right']);
    assert.deepEqual(await redis.mget('sa', 'sb'), ['right', 'left']);
    assert.deepEqual(await redis.swapValues('sa', 'sb'), ['right', 'left']);
    await redis.set('text', 'x');
    await assert.rejects(redis.failing(), (err) => err.message.startsWith('ERR value is not an integer or out of range script: '));
    const results = await redis.pipeline().swapValues('sa', 'sb').get('sa').exec();
    assert.deepEqual(results, [[null, ['left', 'right']], [null, 'right']]);
  });

  test('hashes and sets: hset/hgetall as an object, field TTLs, set algebra, hscanStream', async () => {
    const client = new Redis({ port: srv.port });
    await client.flushall();
    assert.equal(await client.hset('session:1', { user: 'ann', cart: '3' }), 2);
    assert.deepEqual(await client.hgetall('session:1'), { user: 'ann', cart: '3' });
    assert.equal(await client.hincrby('session:1', 'cart', 2), 5);
    assert.deepEqual(await client.call('HEXPIRE', 'session:1', '100', 'FIELDS', '2', 'cart', 'nope'), [1, -2]);
    assert.deepEqual(await client.call('HTTL', 'session:1', 'FIELDS', '1', 'cart'), [100]);
    assert.equal(await client.sadd('online', 'ann', 'bob', 'cy'), 3);
    assert.equal(await client.sadd('admins', 'ann', 'cy'), 2);
    assert.deepEqual((await client.sinter('online', 'admins')).sort(), ['ann', 'cy']);
    assert.equal(await client.smove('online', 'admins', 'bob'), 1);
    assert.equal(await client.scard('admins'), 3);
    await client.hset('big', Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`f${i}`, `${i}`])));
    const seen = new Set();
    await new Promise((resolve, reject) => {
      const stream = client.hscanStream('big', { count: 100 });
      stream.on('data', (chunk) => { for (let i = 0; i < chunk.length; i += 2) seen.add(chunk[i]); });
      stream.on('end', resolve);
      stream.on('error', reject);
    });
    assert.equal(seen.size, 1000);
    await assert.rejects(client.hget('online', 'x'), /WRONGTYPE/);
    client.disconnect();
  });

  test('streams: xadd/xrange/xread, consumer groups with xreadgroup/xack/xpending/xautoclaim, blocking xread', async () => {
    const client = new Redis({ port: srv.port });
    const waiter = new Redis({ port: srv.port });
    await client.flushall();
    assert.equal(await client.xadd('events', '1-0', 'kind', 'click'), '1-0');
    assert.equal(await client.xadd('events', 'MAXLEN', '~', '1000', '2-0', 'kind', 'view'), '2-0');
    assert.deepEqual(await client.xrange('events', '-', '+'), [['1-0', ['kind', 'click']], ['2-0', ['kind', 'view']]]);
    assert.deepEqual(await client.xread('COUNT', 1, 'STREAMS', 'events', '1-0'), [['events', [['2-0', ['kind', 'view']]]]]);
    assert.equal(await client.xgroup('CREATE', 'events', 'workers', '0'), 'OK');
    assert.deepEqual(await client.xreadgroup('GROUP', 'workers', 'w1', 'COUNT', 1, 'STREAMS', 'events', '>'),
      [['events', [['1-0', ['kind', 'click']]]]]);
    assert.equal(await client.xack('events', 'workers', '1-0'), 1);
    assert.deepEqual(await client.xpending('events', 'workers'), [0, null, null, null]);
    await client.xreadgroup('GROUP', 'workers', 'w1', 'STREAMS', 'events', '>');
    assert.deepEqual(await client.xautoclaim('events', 'workers', 'w2', 0, '0', 'JUSTID'), ['0-0', ['2-0'], []]);
    // A reader blocked on a stream of another shard is woken by the next XADD.
    const blocked = waiter.xread('BLOCK', 0, 'STREAMS', 'other', '$');
    while (!/blocked_clients:1\r/.test(await client.info('clients'))) await new Promise((r) => setImmediate(r));
    await client.xadd('other', '5-0', 'k', 'v');
    assert.deepEqual(await blocked, [['other', [['5-0', ['k', 'v']]]]]);
    await assert.rejects(client.xadd('events', '1-0', 'k', 'v'), /equal or smaller than the target stream top item/);
    client.disconnect();
    waiter.disconnect();
  });

  test('QUIT', async () => {
    const client = new Redis({ port: srv.port });
    assert.equal(await client.ping(), 'PONG');
    assert.equal(await client.quit(), 'OK');
  });
});

describe('ioredis with requirepass', () => {
  let srv;
  before(async () => { srv = await startServer(['--requirepass', 'node-secret', '--threads', '2']); });
  after(async () => {
    // SHUTDOWN needs AUTH here
    await rawExchange(srv.port, '*2\r\n$4\r\nAUTH\r\n$11\r\nnode-secret\r\n*1\r\n$8\r\nSHUTDOWN\r\n', () => false, 10000)
      .catch(() => {});
    await stopServer(srv);
  });

  test('AUTH on connect, NOAUTH without it', async () => {
    const good = new Redis({ port: srv.port, password: 'node-secret' });
    assert.equal(await good.set('k', 'v'), 'OK');
    assert.equal(await good.get('k'), 'v');
    good.disconnect();
    const anon = new Redis({ port: srv.port, maxRetriesPerRequest: 0, retryStrategy: () => null });
    anon.on('error', () => {});
    await assert.rejects(anon.get('k'), /NOAUTH Authentication required\./);
    anon.disconnect();
    const raw = await rawExchange(srv.port, '*2\r\n$4\r\nAUTH\r\n$5\r\nwrong\r\n', (b) => b.includes('\r\n'));
    assert.equal(raw.toString(), '-WRONGPASS invalid username-password pair or user is disabled.\r\n');
  });
});
