// The server the ioredis tests run against, shared by every test file: lapse-server
// ($LAPSE_SERVER, relative paths from the repository root, or <repo>/build/lapse-server) with
// --threads 4, or Debian's redis-server when LAPSE_TARGET=redis. Kept out of test/, whose
// every file node --test runs.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
export const target = process.env.LAPSE_TARGET === 'redis' ? 'redis' : 'lapse';

export function serverCommand(port) {
  const common = ['--port', String(port), '--loglevel', 'warning', '--enable-debug-command', 'yes'];
  if (target === 'redis') {
    return { binary: 'redis-server', args: [...common, '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'] };
  }
  const value = process.env.LAPSE_SERVER || 'build/lapse-server';
  const binary = path.isAbsolute(value) ? value : path.join(repoRoot, value);
  assert.ok(existsSync(binary), `server binary not found: ${binary} (set LAPSE_SERVER)`);
  return { binary, args: [...common, '--threads', '4'] };
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

// Sends raw bytes on a fresh socket and resolves with everything received until `done(buf)`.
export function rawExchange(port, bytes, done, timeoutMs = 5000) {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1');
    let buf = Buffer.alloc(0);
    const timer = setTimeout(() => { sock.destroy(); reject(new Error(`timeout; got ${buf}`)); }, timeoutMs);
    sock.on('connect', () => sock.write(bytes));
    sock.on('data', (chunk) => {
      buf = Buffer.concat([buf, chunk]);
      if (done(buf)) { clearTimeout(timer); sock.destroy(); resolve(buf); }
    });
    sock.on('error', (err) => { clearTimeout(timer); reject(err); });
    sock.on('close', () => { clearTimeout(timer); resolve(buf); });
  });
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// `extraArgs` come last, so they override the defaults (--threads).
export async function startServer(extraArgs = []) {
  const port = await freePort();
  const { binary, args } = serverCommand(port);
  const child = spawn(binary, [...args, ...extraArgs], { stdio: ['ignore', 'pipe', 'pipe'], cwd: os.tmpdir() });
  let log = '';
  child.stdout.on('data', (d) => { log += d; });
  child.stderr.on('data', (d) => { log += d; });
  child.on('error', (err) => { log += `spawn error: ${err}\n`; });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const deadline = Date.now() + 30000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited during start-up (${child.exitCode}):\n${log}`);
    try {
      const reply = await rawExchange(port, 'PING\r\n', (b) => b.includes('\r\n'), 1000);
      if (/^(\+PONG|-NOAUTH)/.test(reply.toString())) break; // NOAUTH: up, but wants a password
    } catch { /* not listening yet */ }
    if (Date.now() > deadline) { child.kill('SIGKILL'); throw new Error(`server did not answer PING:\n${log}`); }
    await sleep(20);
  }
  return { port, child, exited, log: () => log };
}

// SHUTDOWN NOSAVE, then wait for the process; it must exit with code 0.
export async function stopServer(srv) {
  if (srv.child.exitCode === null) {
    await rawExchange(srv.port, '*2\r\n$8\r\nSHUTDOWN\r\n$6\r\nNOSAVE\r\n', () => false, 10000).catch(() => {});
  }
  let timer;
  const timeout = new Promise((resolve) => { timer = setTimeout(() => resolve(null), 20000); });
  const result = await Promise.race([srv.exited, timeout]);
  clearTimeout(timer);
  if (result === null) {
    srv.child.kill('SIGKILL');
    assert.fail(`server did not exit after SHUTDOWN:\n${srv.log()}`);
  }
  assert.deepEqual(result, { code: 0, signal: null }, `server exit:\n${srv.log()}`);
}
