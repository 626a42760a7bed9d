// Pub/Sub through ioredis, as node services use it: a subscriber connection with 'message' and
// 'pmessage' events, unsubscribing back to a normal connection, binary payloads with
// 'messageBuffer', fan-out to several subscribers in order, and a RESP2 subscriber refusing a
// normal command with Redis's error (sent on a raw socket: ioredis refuses such a command
// itself, before the server sees it).
//
// The server is lapse-server ($LAPSE_SERVER, relative paths from the repository root, or
// <repo>/build/lapse-server) with --threads 4; LAPSE_TARGET=redis runs Debian's redis-server
// instead, to check the expectations against Redis 7.0:
//   LAPSE_TARGET=redis node --test test/pubsub.test.js
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import Redis from 'ioredis';

import { rawExchange, sleep, startServer, stopServer, target } from '../lib/server.js';

// Resolves with the next `count` emissions of `event` on `emitter` (their argument lists).
function nextEvents(emitter, event, count, timeoutMs = 20000) {
  return new Promise((resolve, reject) => {
    const got = [];
    const timer = setTimeout(() => {
      emitter.removeListener(event, on);
      reject(new Error(`timeout: ${got.length} of ${count} '${event}' events`));
    }, timeoutMs);
    function on(...args) {
      got.push(args);
      if (got.length === count) {
        clearTimeout(timer);
        emitter.removeListener(event, on);
        resolve(got);
      }
    }
    emitter.on(event, on);
  });
}

// Waits until PUBSUB NUMSUB counts `n` subscribers of `channel`.
async function waitSubscribers(client, channel, n, timeoutMs = 10000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [, count] = await client.pubsub('NUMSUB', channel);
    if (Number(count) === n) return;
    if (Date.now() > deadline) assert.fail(`${channel} has ${count} subscribers, expected ${n}`);
    await sleep(10);
  }
}

describe(`ioredis pub/sub against ${target}`, () => {
  let srv;
  let redis;
  const extra = [];

  // A connection whose handshake is over. ioredis 5 sends its ready check (INFO) after
  // commands queued while it connects, so a SUBSCRIBE queued then puts the connection in
  // subscriber mode first and the check fails: the connection drops its subscription (ioredis
  // issue #2037, fixed in ioredis 6). A slow server (the ASan build) made that happen here.
  const connect = async (options = {}) => {
    const c = new Redis({ port: srv.port, host: '127.0.0.1', lazyConnect: true, ...options });
    extra.push(c);
    await c.connect();
    return c;
  };

  before(async () => {
    srv = await startServer();
    redis = new Redis({ port: srv.port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0 });
    await redis.connect();
  });

  after(async () => {
    for (const c of extra) c.disconnect();
    if (redis) redis.disconnect();
    if (srv) await stopServer(srv);
  });

  test("subscribe, then 'message' events in order; publish counts the receivers", async () => {
    const sub = await connect();
    assert.equal(await sub.subscribe('news', 'sport'), 2);
    assert.equal(await redis.publish('nobody', 'x'), 0);
    const messages = nextEvents(sub, 'message', 3);
    assert.equal(await redis.publish('news', 'first'), 1);
    assert.equal(await redis.publish('sport', 'second'), 1);
    assert.equal(await redis.publish('news', ''), 1);
    assert.deepEqual(await messages, [['news', 'first'], ['sport', 'second'], ['news', '']]);
    assert.deepEqual(await redis.pubsub('NUMSUB', 'news', 'sport', 'none'), ['news', 1, 'sport', 1, 'none', 0]);
    assert.deepEqual((await redis.pubsub('CHANNELS')).sort(), ['news', 'sport']);
    assert.deepEqual(await redis.pubsub('CHANNELS', 'n*'), ['news']);
    assert.equal(await sub.unsubscribe('news'), 1);
    assert.equal(await redis.publish('news', 'gone'), 0);
    assert.equal(await sub.unsubscribe(), 0);
    assert.deepEqual(await redis.pubsub('CHANNELS'), []);
    // with no subscription left ioredis takes the connection back to normal commands
    assert.equal(await sub.set('k', 'v'), 'OK');
    assert.equal(await sub.get('k'), 'v');
    await sub.del('k');
  });

  test("psubscribe and 'pmessage' events, with glob specials", async () => {
    const sub = await connect();
    assert.equal(await sub.psubscribe('user:*', 'h?llo', 'h[ae]llo'), 3);
    assert.equal(await sub.subscribe('user:1'), 4);
    assert.equal(await redis.pubsub('NUMPAT'), 3);
    const pmessages = nextEvents(sub, 'pmessage', 4);
    const messages = nextEvents(sub, 'message', 1);
    assert.equal(await redis.publish('user:1', 'login'), 2);
    assert.equal(await redis.publish('hello', 'hi'), 2);
    assert.equal(await redis.publish('hxllo', 'x'), 1);
    assert.equal(await redis.publish('user', 'no-match'), 0);
    const got = await pmessages;
    assert.deepEqual(got[0], ['user:*', 'user:1', 'login']);
    assert.deepEqual(got.slice(1, 3).sort(), [['h?llo', 'hello', 'hi'], ['h[ae]llo', 'hello', 'hi']]);
    assert.deepEqual(got[3], ['h?llo', 'hxllo', 'x']);
    assert.deepEqual(await messages, [['user:1', 'login']]);
    assert.equal(await sub.punsubscribe('h?llo'), 3);
    assert.equal(await redis.publish('hxllo', 'x'), 0);
    // (named: ioredis's PUNSUBSCRIBE without arguments does not settle while a channel remains)
    assert.equal(await sub.punsubscribe('user:*', 'h[ae]llo'), 1);
    assert.equal(await redis.pubsub('NUMPAT'), 0);
    assert.equal(await sub.unsubscribe(), 0);
  });

  test("binary channels and payloads with 'messageBuffer' and 'pmessageBuffer'", async () => {
    const sub = await connect();
    const channel = Buffer.from([0x63, 0x00, 0x0d, 0x0a, 0xff]);
    const payload = Buffer.concat([Buffer.from('\r\n$3\r\n*1\r\n'), Buffer.from(Array.from({ length: 256 }, (_, i) => i))]);
    assert.equal(await sub.subscribe(channel), 1);
    assert.equal(await sub.psubscribe(Buffer.from([0x63, 0x00, 0x2a])), 2);
    const messages = nextEvents(sub, 'messageBuffer', 1);
    const pmessages = nextEvents(sub, 'pmessageBuffer', 1);
    assert.equal(await redis.publish(channel, payload), 2);
    const [[ch, msg]] = await messages;
    assert.ok(ch.equals(channel) && msg.equals(payload));
    const [[pattern, pch, pmsg]] = await pmessages;
    // ioredis hands the pattern over as a string
    assert.ok(Buffer.from(String(pattern), 'latin1').equals(Buffer.from([0x63, 0x00, 0x2a])));
    assert.ok(pch.equals(channel) && pmsg.equals(payload));
    assert.equal(await sub.punsubscribe(Buffer.from([0x63, 0x00, 0x2a])), 1);
    assert.equal(await sub.unsubscribe(), 0);
  });

  test('fan-out: five subscribers each get 1000 pipelined messages in order', async () => {
    const subs = await Promise.all(Array.from({ length: 5 }, () => connect()));
    for (const s of subs) assert.equal(await s.subscribe('feed'), 1);
    await waitSubscribers(redis, 'feed', 5);
    const all = subs.map((s) => nextEvents(s, 'message', 1000, 60000));
    const pipeline = redis.pipeline();
    for (let i = 0; i < 1000; i++) pipeline.publish('feed', `m${i}`);
    const results = await pipeline.exec();
    assert.deepEqual(results, Array.from({ length: 1000 }, () => [null, 5]));
    const expected = Array.from({ length: 1000 }, (_, i) => ['feed', `m${i}`]);
    for (const got of await Promise.all(all)) assert.deepEqual(got, expected);
    for (const s of subs) assert.equal(await s.unsubscribe(), 0);
  });

  test('a RESP2 subscriber connection refuses a normal command with Redis\'s error', async () => {
    const sub = await connect();
    await sub.subscribe('c');
    // ioredis refuses it itself, before sending anything
    await assert.rejects(sub.get('k'), /subscriber mode/);
    // the server's own refusal, on a raw RESP2 connection
    const reply = await rawExchange(srv.port,
      '*2\r\n$9\r\nSUBSCRIBE\r\n$1\r\nc\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n*1\r\n$4\r\nPING\r\n',
      (b) => b.toString('latin1').endsWith('pong\r\n$0\r\n\r\n'));
    assert.equal(reply.toString('latin1'),
      '*3\r\n$9\r\nsubscribe\r\n$1\r\nc\r\n:1\r\n' +
      "-ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context\r\n" +
      '*2\r\n$4\r\npong\r\n$0\r\n\r\n');
    assert.equal(await sub.unsubscribe(), 0);
  });

  test('ssubscribe and spublish through call()', async () => {
    const sub = await connect();
    const smessages = nextEvents(sub, 'smessage', 1);
    assert.equal(await sub.ssubscribe('shard'), 1);
    assert.deepEqual(await redis.pubsub('SHARDNUMSUB', 'shard'), ['shard', 1]);
    assert.equal(await redis.spublish('shard', 'hello'), 1);
    assert.equal(await redis.publish('shard', 'not-sharded'), 0);
    assert.deepEqual(await smessages, [['shard', 'hello']]);
    assert.equal(await sub.sunsubscribe(), 0);
  });
});
