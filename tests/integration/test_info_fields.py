"""INFO's field names, section by section, are Redis 7.0's, in Redis's order: tools such as
redis-py's test fixtures and monitoring exporters look fields up by name. The lists below
were taken from redis-server 7.0.15 (`INFO everything`); LAPSE_TARGET=redis checks them there
again. lapse may add its own fields (LAPSE_ONLY, placed beside their Redis neighbours) and its
own sections after Redis's; every other difference fails. Values may differ, but their shape
(human sizes, percentages, ratios) must be Redis's.
"""
from __future__ import annotations

import re

import pytest

from lapse_harness import RespError

REDIS_SECTIONS = {
    'Server': [
        'redis_version', 'redis_git_sha1', 'redis_git_dirty', 'redis_build_id', 'redis_mode', 'os', 'arch_bits',
        'monotonic_clock', 'multiplexing_api', 'atomicvar_api', 'gcc_version', 'process_id', 'process_supervised',
        'run_id', 'tcp_port', 'server_time_usec', 'uptime_in_seconds', 'uptime_in_days', 'hz', 'configured_hz',
        'lru_clock', 'executable', 'config_file', 'io_threads_active'],
    'Clients': [
        'connected_clients', 'cluster_connections', 'maxclients', 'client_recent_max_input_buffer',
        'client_recent_max_output_buffer', 'blocked_clients', 'tracking_clients', 'clients_in_timeout_table'],
    'Memory': [
        'used_memory', 'used_memory_human', 'used_memory_rss', 'used_memory_rss_human', 'used_memory_peak',
        'used_memory_peak_human', 'used_memory_peak_perc', 'used_memory_overhead', 'used_memory_startup',
        'used_memory_dataset', 'used_memory_dataset_perc', 'allocator_allocated', 'allocator_active',
        'allocator_resident', 'total_system_memory', 'total_system_memory_human', 'used_memory_lua',
        'used_memory_vm_eval', 'used_memory_lua_human', 'used_memory_scripts_eval', 'number_of_cached_scripts',
        'number_of_functions', 'number_of_libraries', 'used_memory_vm_functions', 'used_memory_vm_total',
        'used_memory_vm_total_human', 'used_memory_functions', 'used_memory_scripts', 'used_memory_scripts_human',
        'maxmemory', 'maxmemory_human', 'maxmemory_policy', 'allocator_frag_ratio', 'allocator_frag_bytes',
        'allocator_rss_ratio', 'allocator_rss_bytes', 'rss_overhead_ratio', 'rss_overhead_bytes',
        'mem_fragmentation_ratio', 'mem_fragmentation_bytes', 'mem_not_counted_for_evict', 'mem_replication_backlog',
        'mem_total_replication_buffers', 'mem_clients_slaves', 'mem_clients_normal', 'mem_cluster_links',
        'mem_aof_buffer', 'mem_allocator', 'active_defrag_running', 'lazyfree_pending_objects', 'lazyfreed_objects'],
    'Persistence': [
        'loading', 'async_loading', 'current_cow_peak', 'current_cow_size', 'current_cow_size_age',
        'current_fork_perc', 'current_save_keys_processed', 'current_save_keys_total', 'rdb_changes_since_last_save',
        'rdb_bgsave_in_progress', 'rdb_last_save_time', 'rdb_last_bgsave_status', 'rdb_last_bgsave_time_sec',
        'rdb_current_bgsave_time_sec', 'rdb_saves', 'rdb_last_cow_size', 'rdb_last_load_keys_expired',
        'rdb_last_load_keys_loaded', 'aof_enabled', 'aof_rewrite_in_progress', 'aof_rewrite_scheduled',
        'aof_last_rewrite_time_sec', 'aof_current_rewrite_time_sec', 'aof_last_bgrewrite_status', 'aof_rewrites',
        'aof_rewrites_consecutive_failures', 'aof_last_write_status', 'aof_last_cow_size', 'module_fork_in_progress',
        'module_fork_last_cow_size'],
    'Stats': [
        'total_connections_received', 'total_commands_processed', 'instantaneous_ops_per_sec',
        'total_net_input_bytes', 'total_net_output_bytes', 'total_net_repl_input_bytes',
        'total_net_repl_output_bytes', 'instantaneous_input_kbps', 'instantaneous_output_kbps',
        'instantaneous_input_repl_kbps', 'instantaneous_output_repl_kbps', 'rejected_connections', 'sync_full',
        'sync_partial_ok', 'sync_partial_err', 'expired_keys', 'expired_stale_perc', 'expired_time_cap_reached_count',
        'expire_cycle_cpu_milliseconds', 'evicted_keys', 'evicted_clients', 'total_eviction_exceeded_time',
        'current_eviction_exceeded_time', 'keyspace_hits', 'keyspace_misses', 'pubsub_channels', 'pubsub_patterns',
        'pubsubshard_channels', 'latest_fork_usec', 'total_forks', 'migrate_cached_sockets',
        'slave_expires_tracked_keys', 'active_defrag_hits', 'active_defrag_misses', 'active_defrag_key_hits',
        'active_defrag_key_misses', 'total_active_defrag_time', 'current_active_defrag_time', 'tracking_total_keys',
        'tracking_total_items', 'tracking_total_prefixes', 'unexpected_error_replies', 'total_error_replies',
        'dump_payload_sanitizations', 'total_reads_processed', 'total_writes_processed',
        'io_threaded_reads_processed', 'io_threaded_writes_processed', 'reply_buffer_shrinks', 'reply_buffer_expands'],
    'Replication': [
        'role', 'connected_slaves', 'master_failover_state', 'master_replid', 'master_replid2', 'master_repl_offset',
        'second_repl_offset', 'repl_backlog_active', 'repl_backlog_size', 'repl_backlog_first_byte_offset',
        'repl_backlog_histlen'],
    'CPU': [
        'used_cpu_sys', 'used_cpu_user', 'used_cpu_sys_children', 'used_cpu_user_children',
        'used_cpu_sys_main_thread', 'used_cpu_user_main_thread'],
    'Modules': [],
    'Commandstats': None,  # one field per command called: names checked by DYNAMIC_FIELD
    'Errorstats': None,
    'Latencystats': None,
    'Cluster': ['cluster_enabled'],
    'Keyspace': None,
}

DYNAMIC_FIELD = {
    'Commandstats': r'cmdstat_[a-z_|-]+',
    'Errorstats': r'errorstat_[A-Z]+',
    'Latencystats': r'latency_percentiles_usec_[a-z_|-]+',
    'Keyspace': r'db\d+',
}

# lapse's own fields, and its own sections, which come after Redis's.
LAPSE_ONLY = {
    'Server': {'lapse_version', 'threads', 'shards'},
    'Stats': {'expire_lag_max_ms'},
}
LAPSE_SECTIONS = ['RU', 'Reclaim']

HUMAN = re.compile(r'(\d+B|\d+\.\d\d[KMGTPEZY])')
PERCENT = re.compile(r'\d+\.\d\d%')
RATIO = re.compile(r'-?\d+\.\d\d')
INTEGER = re.compile(r'-?\d+')


def parse_sections(text: str) -> list[tuple[str, list[tuple[str, str]]]]:
    sections = []
    for line in text.split('\r\n'):
        if line.startswith('# '):
            sections.append((line[2:], []))
        elif line:
            name, _, value = line.partition(':')
            sections[-1][1].append((name, value))
    return sections


def info(raw, *args) -> list[tuple[str, list[tuple[str, str]]]]:
    return parse_sections(raw.call('INFO', *args).decode())


def redis_fields(section: str, fields: list[str]) -> list[str]:
    return [f for f in fields if f not in LAPSE_ONLY.get(section, set())]


def test_info_everything_has_redis_sections_in_redis_order(raw):
    raw.call('SET', 'k', 'v')  # so that Keyspace has a line
    names = [name for name, _ in info(raw, 'everything')]
    redis_part = [n for n in names if n not in LAPSE_SECTIONS]
    assert redis_part == list(REDIS_SECTIONS)
    assert names[:len(REDIS_SECTIONS)] == list(REDIS_SECTIONS)


@pytest.mark.parametrize('section', [s for s, fields in REDIS_SECTIONS.items() if fields is not None])
def test_section_fields_are_redis_fields_in_redis_order(raw, section):
    sections = dict(info(raw, 'everything'))
    fields = [name for name, _ in sections[section]]
    assert redis_fields(section, fields) == REDIS_SECTIONS[section]
    # The section alone gives the same fields.
    alone = dict(info(raw, section.lower()))
    assert [name for name, _ in alone[section]] == fields


@pytest.mark.parametrize('section', list(DYNAMIC_FIELD))
def test_dynamic_section_field_names(raw, section):
    raw.call('SET', 'k', 'v')
    raw.call('GET', 'k')
    assert isinstance(raw.call('NOSUCHCOMMAND'), RespError)  # an Errorstats line
    fields = dict(info(raw, 'everything'))[section]
    assert fields, section
    for name, _ in fields:
        assert re.fullmatch(DYNAMIC_FIELD[section], name), name


def test_memory_value_shapes(raw):
    memory = dict(dict(info(raw, 'memory'))['Memory'])
    for name, value in memory.items():
        if name.endswith('_human'):
            assert HUMAN.fullmatch(value), (name, value)
        elif name.endswith('_perc'):
            assert PERCENT.fullmatch(value), (name, value)
        elif name.endswith('_ratio'):
            assert RATIO.fullmatch(value), (name, value)
        elif name not in ('maxmemory_policy', 'mem_allocator'):
            assert INTEGER.fullmatch(value), (name, value)
    assert int(memory['used_memory_peak']) >= int(memory['used_memory'])
    assert int(memory['total_system_memory']) > 0
    assert int(memory['used_memory_scripts']) == (int(memory['used_memory_scripts_eval'])
                                                  + int(memory['used_memory_functions']))


def test_stats_value_shapes(raw):
    stats = dict(dict(info(raw, 'stats'))['Stats'])
    for name in ('instantaneous_input_kbps', 'instantaneous_output_kbps', 'instantaneous_input_repl_kbps',
                 'instantaneous_output_repl_kbps', 'expired_stale_perc'):
        assert RATIO.fullmatch(stats[name]), (name, stats[name])
    for name, value in stats.items():
        if name not in ('instantaneous_input_kbps', 'instantaneous_output_kbps', 'instantaneous_input_repl_kbps',
                        'instantaneous_output_repl_kbps', 'expired_stale_perc'):
            assert INTEGER.fullmatch(value), (name, value)


def test_server_lru_clock_and_build_id(raw):
    server = dict(dict(info(raw, 'server'))['Server'])
    assert re.fullmatch(r'[0-9a-f]+', server['redis_build_id'])
    assert server['atomicvar_api'] in ('c11-builtin', 'sync-builtin', 'atomic-builtin')
    # Redis's LRU clock: the Unix time in seconds, kept to 24 bits.
    now = int(raw.call('TIME')[0])
    assert int(server['lru_clock']) in {(now + d) & 0xFFFFFF for d in (-1, 0)}


def test_script_and_function_counts(raw):
    raw.call('SCRIPT', 'FLUSH')
    raw.call('FUNCTION', 'FLUSH')
    before = dict(dict(info(raw, 'memory'))['Memory'])
    assert (before['number_of_cached_scripts'], before['number_of_functions'], before['number_of_libraries']) == \
        ('0', '0', '0')
    raw.call('SCRIPT', 'LOAD', 'return 1')
    raw.call('SCRIPT', 'LOAD', 'return 2')
    raw.call('FUNCTION', 'LOAD', "#!lua name=lib\nredis.register_function('f1', function() return 1 end)\n"
                                 "redis.register_function('f2', function() return 2 end)")
    after = dict(dict(info(raw, 'memory'))['Memory'])
    assert (after['number_of_cached_scripts'], after['number_of_functions'], after['number_of_libraries']) == \
        ('2', '2', '1')
    assert int(after['used_memory_scripts_eval']) > int(before['used_memory_scripts_eval'])
    assert int(after['used_memory_functions']) > int(before['used_memory_functions'])
    raw.call('SCRIPT', 'FLUSH')
    raw.call('FUNCTION', 'FLUSH')
