"""INFO's figures that move with traffic, checked by what makes them move: the instantaneous
rates, the reads and writes processed, the recent peaks of client buffers, the Lua VMs'
memory, the reply buffer's resizes, and DEBUG ERROR's place (none) in the error counts.

lapse and Redis count differently (lapse has one reply buffer per client and several
threads, Redis a static buffer and a reply list), so the tests assert relations that hold
on both, never figures; LAPSE_TARGET=redis runs them against redis-server 7.0.15. The waits
poll with generous deadlines, never a duration the test asserts.
"""
from __future__ import annotations

import threading
import time

import pytest

from conftest import single_server
from lapse_harness import RespError, wait_blocked

server = single_server(threads=2)

BIG = 1_000_000


def fields(conn, section: str) -> dict[str, str]:
    text = conn.call('INFO', section).decode()
    return dict(line.split(':', 1) for line in text.split('\r\n') if line and not line.startswith('#'))


def figure(conn, section: str, name: str) -> float:
    return float(fields(conn, section)[name])


def wait_for(conn, section: str, predicate, what: str, timeout: float = 30.0, every: float = 0.05) -> dict:
    """Polls INFO `section` every `every` seconds until predicate(fields) holds."""
    deadline = time.monotonic() + timeout
    while True:
        seen = fields(conn, section)
        if predicate(seen):
            return seen
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}; last INFO {section}: {seen}")
        time.sleep(every)


def test_instantaneous_rates_follow_a_load_and_fall_back_to_zero(clean, connect):
    observer = connect()
    stop = threading.Event()

    def load():
        with clean.client() as c:
            while not stop.is_set():
                c.pipeline([('SET', 'k', 'v' * 100)] * 20)

    loader = threading.Thread(target=load)
    loader.start()
    try:
        wait_for(observer, 'stats', lambda s: int(s['instantaneous_ops_per_sec']) > 0
                 and float(s['instantaneous_input_kbps']) > 0 and float(s['instantaneous_output_kbps']) > 0,
                 'rates under load')
    finally:
        stop.set()
        loader.join()
    # The rates cover the last 16 samples of 100 ms: INFO is asked less often than that, so
    # that its own traffic has left the window by the next look.
    idle = wait_for(observer, 'stats', lambda s: s['instantaneous_ops_per_sec'] == '0'
                    and s['instantaneous_input_kbps'] == '0.00' and s['instantaneous_output_kbps'] == '0.00',
                    'rates back to zero', timeout=60.0, every=2.5)
    assert idle['instantaneous_input_repl_kbps'] == idle['instantaneous_output_repl_kbps'] == '0.00'


def test_reads_and_writes_processed_count_each_request(connect):
    observer = connect()
    client = connect()
    before = fields(observer, 'stats')
    for i in range(10):
        assert client.call('SET', f'k{i}', 'v') == 'OK'
    after = fields(observer, 'stats')
    assert int(after['total_reads_processed']) - int(before['total_reads_processed']) >= 10
    assert int(after['total_writes_processed']) - int(before['total_writes_processed']) >= 10
    assert after['io_threaded_reads_processed'] == after['io_threaded_writes_processed'] == '0'


def test_resetstat_zeroes_reads_and_writes(connect):
    conn = connect()
    for i in range(20):
        conn.call('PING')
    before = fields(conn, 'stats')
    assert int(before['total_reads_processed']) >= 20
    assert conn.call('CONFIG', 'RESETSTAT') == 'OK'
    after = fields(conn, 'stats')
    # Only what came since the reset: this INFO, at most a few other clients' requests.
    assert int(after['total_reads_processed']) < 20
    assert int(after['total_writes_processed']) < 20


def test_recent_max_input_buffer_sees_a_big_argument_arriving(connect):
    observer = connect()
    sender = connect()
    value = b'x' * BIG
    head = b'*3\r\n$3\r\nSET\r\n$3\r\nbig\r\n$%d\r\n' % BIG
    sender.send_raw(head + value[:BIG // 2])
    seen = wait_for(observer, 'clients', lambda c: int(c['client_recent_max_input_buffer']) >= BIG // 2,
                    'the half-received argument in client_recent_max_input_buffer')
    assert int(seen['client_recent_max_output_buffer']) >= 0
    sender.send_raw(value[BIG // 2:] + b'\r\n')
    assert sender.read_reply() == 'OK'


def test_recent_max_output_buffer_sees_replies_a_client_does_not_read(connect):
    observer = connect()
    reader = connect()
    assert reader.call('SET', 'big', 'x' * BIG) == 'OK'
    count = 30
    # More than the sockets' buffers hold: the rest waits in the server for the client.
    reader.send_raw(b''.join([b'*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n'] * count))
    wait_for(observer, 'clients', lambda c: int(c['client_recent_max_output_buffer']) > BIG,
             'the unread replies in client_recent_max_output_buffer')
    for _ in range(count):
        assert len(reader.read_reply()) == BIG


def test_clients_in_timeout_table_counts_blocked_clients_with_a_timeout(connect):
    observer = connect()
    timed, forever = connect(), connect()
    timed.send('BLPOP', 'q1', 100)
    forever.send('BLPOP', 'q2', 0)
    wait_blocked(observer, 2)
    assert fields(observer, 'clients')['clients_in_timeout_table'] == '1'
    observer.call('LPUSH', 'q1', 'a')
    observer.call('LPUSH', 'q2', 'b')
    assert timed.read_reply() == [b'q1', b'a']
    assert forever.read_reply() == [b'q2', b'b']
    wait_blocked(observer, 0)
    assert fields(observer, 'clients')['clients_in_timeout_table'] == '0'


def test_lua_vm_memory_grows_with_scripts_and_functions(connect):
    conn = connect()
    conn.call('SCRIPT', 'FLUSH')
    conn.call('FUNCTION', 'FLUSH')
    conn.call('EVAL', 'return 1', 0)  # the eval VM exists on this client's thread
    before = fields(conn, 'memory')
    for i in range(200):
        body = f"local t = {{}} for j = 1, 10 do t[j] = '{i}-' .. j end return #t + {i}"
        assert conn.call('EVAL', body, 0) == 10 + i
    conn.call('FUNCTION', 'LOAD', "#!lua name=vmlib\n" + "\n".join(
        f"redis.register_function('f{i}', function() return {i} end)" for i in range(50)))
    assert conn.call('FCALL', 'f7', 0) == 7
    after = fields(conn, 'memory')
    assert int(after['used_memory_vm_eval']) > int(before['used_memory_vm_eval'])
    assert int(after['used_memory_vm_functions']) > 0
    for m in (before, after):
        assert m['used_memory_lua'] == m['used_memory_vm_eval']
        assert int(m['used_memory_vm_total']) == int(m['used_memory_vm_eval']) + int(m['used_memory_vm_functions'])
        # Lua's count of kilobytes, as Redis shows it.
        assert int(m['used_memory_vm_eval']) % 1024 == 0
    # MEMORY STATS's caches are INFO's script and function caches.
    stats = conn.call('MEMORY', 'STATS')
    stats = dict(zip(stats[::2], stats[1::2]))
    assert stats[b'lua.caches'] == int(after['used_memory_scripts_eval'])
    assert stats[b'functions.caches'] == int(after['used_memory_functions'])
    conn.call('SCRIPT', 'FLUSH')
    conn.call('FUNCTION', 'FLUSH')


def test_reply_buffer_shrinks_after_a_big_reply(connect):
    observer = connect()
    client = connect()
    before = int(figure(observer, 'stats', 'reply_buffer_shrinks'))
    assert client.call('SET', 'big', 'x' * (2 * BIG)) == 'OK'
    assert len(client.call('GET', 'big')) == 2 * BIG
    # lapse lets the grown buffer go at once; Redis shrinks its idle clients' buffers in its
    # cron, after their peak is reset (every 5 seconds).
    wait_for(observer, 'stats', lambda s: int(s['reply_buffer_shrinks']) > before, 'a reply buffer shrink',
             every=0.2)


@pytest.mark.lapse_only
def test_reply_buffer_expands_when_replies_outgrow_it(connect):
    observer = connect()
    client = connect()
    client.call('SET', 'small', 'y' * 100)
    client.call('SET', 'mid', 'z' * 100_000)
    # The observer's buffer is made big enough for every INFO reply, which then never grows it.
    assert observer.call('GET', 'mid') == b'z' * 100_000
    assert client.call('GET', 'small') == b'y' * 100  # the buffer holds a small reply
    before = fields(observer, 'stats')
    assert client.call('GET', 'mid') == b'z' * 100_000  # grows it: kept, under 1 MB
    grown = fields(observer, 'stats')
    assert int(grown['reply_buffer_expands']) == int(before['reply_buffer_expands']) + 1
    assert grown['reply_buffer_shrinks'] == before['reply_buffer_shrinks']
    assert client.call('GET', 'mid') == b'z' * 100_000  # fits what was kept
    assert fields(observer, 'stats')['reply_buffer_expands'] == grown['reply_buffer_expands']
    assert observer.call('CONFIG', 'RESETSTAT') == 'OK'
    reset = fields(observer, 'stats')
    assert reset['reply_buffer_expands'] == reset['reply_buffer_shrinks'] == '0'


def errorstats(conn) -> dict[str, str]:
    return fields(conn, 'errorstats')


def test_debug_error_is_not_counted_as_an_error_reply(connect):
    conn = connect()
    assert conn.call('CONFIG', 'RESETSTAT') == 'OK'
    assert conn.call_raw('DEBUG', 'ERROR', 'ERR made up') == b'-ERR made up\r\n'
    assert conn.call_raw('DEBUG', 'ERROR', 'CUSTOM code') == b'-CUSTOM code\r\n'
    assert errorstats(conn) == {}
    stats = fields(conn, 'stats')
    assert stats['total_error_replies'] == '0'
    assert 'failed_calls=0' in fields(conn, 'commandstats')['cmdstat_debug']
    # Inside a transaction too.
    assert conn.call('MULTI') == 'OK'
    assert conn.call('DEBUG', 'ERROR', 'ERR queued') == 'QUEUED'
    assert conn.call('EXEC') == [RespError('ERR queued')]
    assert errorstats(conn) == {}
    # A real error is still counted.
    assert isinstance(conn.call('GET'), RespError)
    assert errorstats(conn) == {'errorstat_ERR': 'count=1'}
    assert fields(conn, 'stats')['total_error_replies'] == '1'
    assert 'failed_calls=0' in fields(conn, 'commandstats')['cmdstat_debug']


def test_background_expiry_counts_its_time_and_its_capped_cycles(clean, connect):
    conn = connect()
    keys = 200_000
    for start in range(0, keys, 10_000):
        conn.pipeline([('SET', f'exp:{i}', 'v', 'PX', '50') for i in range(start, start + 10_000)])
    # Nobody reads the keys: only the background cycles delete them. 200,000 deletions do not
    # fit one cycle's time budget, on either server.
    seen = wait_for(conn, 'stats', lambda s: int(s['expired_keys']) >= keys, 'the keys to expire', timeout=60)
    assert int(seen['expire_cycle_cpu_milliseconds']) > 0, seen
    assert int(seen['expired_time_cap_reached_count']) > 0, seen
    assert conn.call('CONFIG', 'RESETSTAT') == 'OK'
    after = fields(conn, 'stats')
    assert after['expire_cycle_cpu_milliseconds'] == '0'
    assert after['expired_time_cap_reached_count'] == '0'

