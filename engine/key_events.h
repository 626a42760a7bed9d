// File: engine/key_events.h
//
// What the engine tells the server of keys that change with no command naming them: a key
// deleted because its deadline passed, whether a read met it (lazily) or the reclaimer did;
// and of the two events Redis sends from its key table rather than from a command: a key
// created (`new`, from dbAdd) and a read that found no key (`keymiss`, from lookupKeyRead).
// The server turns these into keyspace notifications (`expired`); the engine knows nothing
// of channels or clients. A listener is called on the shard's thread, holding the shard, and
// must not touch the shard itself.
#pragma once

#include <cstdint>
#include <string_view>

namespace lapse::engine {

class KeyEventListener {
 public:
  virtual ~KeyEventListener() = default;
  // `key` of database `db` was deleted by expiry (it is still readable during the call).
  virtual void KeyExpired(uint32_t db, std::string_view key) = 0;
  // Hash `key` lost fields to their own deadlines (HEXPIRE), and still exists or not.
  virtual void FieldsExpired(uint32_t db, std::string_view key) = 0;
  // `key` of database `db` was deleted to free memory (maxmemory-policy); still readable
  // during the call.
  virtual void KeyEvicted(uint32_t db, std::string_view key) = 0;
  // `key` was added to the table where it was absent (not replaced in place).
  virtual void KeyCreated(uint32_t db, std::string_view key) = 0;
  // A read lookup (Redis's lookupKeyRead) found no live `key`.
  virtual void KeyMissed(uint32_t db, std::string_view key) = 0;
  // Item `id` of `container`, a container of database `db`, was deleted because its time to
  // live ran out (read or reclaimer).
  virtual void ItemExpired(uint32_t db, std::string_view container, std::string_view id) = 0;
  // Item `id` of `container` was deleted to free memory (its container opted in to eviction).
  virtual void ItemEvicted(uint32_t db, std::string_view container, std::string_view id) = 0;
};

}  // namespace lapse::engine
