#include "engine/entry.h"

#include "engine/collection.h"

#include <malloc.h>

#include <algorithm>
#include <cstdlib>
#include <new>

namespace lapse::engine {

Entry* Entry::Create(std::string_view key, std::string_view value, ValueType type, int64_t deadline_ms,
                     bool reserve_deadline, size_t value_capacity) {
  bool slot = reserve_deadline || deadline_ms != kNoDeadline;
  size_t capacity = value_capacity > value.size() ? value_capacity : value.size();
  size_t bytes = kHeaderBytes + (slot ? sizeof(int64_t) : 0) + key.size() + capacity;
  // Never below sizeof(Entry): the tail padding the payload reuses must be allocated too.
  void* mem = std::malloc(std::max(bytes, sizeof(Entry)));
  if (mem == nullptr) throw std::bad_alloc();
  Entry* e = new (mem) Entry;
  e->next_ = nullptr;
  e->key_len_ = static_cast<uint32_t>(key.size());
  e->value_len_ = static_cast<uint32_t>(value.size());
  e->type_ = static_cast<uint8_t>(type);
  e->flags_ = slot ? kDeadlineSlot : 0;
  e->set_access_stamp(0);
  if (slot) e->set_deadline(deadline_ms);
  if (!key.empty()) std::memcpy(e->KeyPtr(), key.data(), key.size());
  if (!value.empty()) std::memcpy(e->ValuePtr(), value.data(), value.size());
  return e;
}

void Entry::Destroy(Entry* e) {
  if (e->owns_table()) DestroyTable(e);
  std::free(e);
}

void Entry::DestroyMoved(Entry* e) { std::free(e); }

size_t Entry::AllocatedBytes() const { return malloc_usable_size(const_cast<Entry*>(this)); }

size_t Entry::value_capacity() const {
  size_t fixed = kHeaderBytes + DeadlineBytes() + key_len_;
  size_t usable = AllocatedBytes();
  size_t cap = usable > fixed ? usable - fixed : 0;
  return cap > UINT32_MAX ? UINT32_MAX : cap;
}

}  // namespace lapse::engine
