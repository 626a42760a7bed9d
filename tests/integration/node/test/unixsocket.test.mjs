// ioredis through the server's unix-domain socket (`unixsocket`), as an application on the
// same host connects with `new Redis({ path })`: commands, a pipeline, MULTI, pub/sub, and
// the connection's own view of itself (CLIENT INFO's addr and flag U).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Redis from 'ioredis';

import { startServer, stopServer } from '../lib/server.js';

describe('ioredis over the unix socket', () => {
  let srv;
  let redis;
  let dir;
  let socketPath;

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'lux'));
    socketPath = path.join(dir, 'server.sock');
    srv = await startServer(['--unixsocket', socketPath, '--unixsocketperm', '770']);
    redis = new Redis({ path: socketPath, lazyConnect: true, maxRetriesPerRequest: 0 });
    await redis.connect();
  });

  after(async () => {
    if (redis) redis.disconnect();
    if (srv) await stopServer(srv);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('the socket file has the configured mode', () => {
    const st = statSync(socketPath);
    assert.ok(st.isSocket());
    assert.equal(st.mode & 0o777, 0o770);
  });

  test('commands and CLIENT INFO', async () => {
    assert.equal(await redis.set('k', 'v'), 'OK');
    assert.equal(await redis.get('k'), 'v');
    const info = await redis.client('INFO');
    assert.match(info, new RegExp(`addr=${socketPath}:0 laddr=${socketPath}:0 `));
    assert.match(info, / flags=U /);
  });

  test('a pipeline and a transaction', async () => {
    const pipeline = redis.pipeline();
    for (let i = 0; i < 1000; i++) pipeline.incr('counter');
    const results = await pipeline.exec();
    assert.deepEqual(results[999], [null, 1000]);
    const replies = await redis.multi().set('a', '1').incr('a').get('a').exec();
    assert.deepEqual(replies, [[null, 'OK'], [null, 2], [null, '2']]);
  });

  test('pub/sub between a unix client and a TCP client', async () => {
    const sub = new Redis({ path: socketPath, lazyConnect: true });
    const pub = new Redis({ port: srv.port, host: '127.0.0.1', lazyConnect: true });
    await sub.connect();
    await pub.connect();
    try {
      const got = new Promise((resolve) => sub.on('message', (channel, message) => resolve([channel, message])));
      await sub.subscribe('news');
      assert.equal(await pub.publish('news', 'hello'), 1);
      assert.deepEqual(await got, ['news', 'hello']);
    } finally {
      sub.disconnect();
      pub.disconnect();
    }
  });
});
