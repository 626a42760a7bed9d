// File: engine/key_image.h
//
// One key's state as it was, kept so that it can be put back: the undo log of a script that
// may have to start over (server/script_undo.h) keeps one per key before the script first
// changes it.
//
// An image is a detached deep copy, made as COPY makes one (ValueCopy): the value with its
// type and encoding, the key's deadline, a hash's field deadlines and the access stamp that
// OBJECT IDLETIME / FREQ report; or the key's absence. Capture looks the key up as a write
// would, so a key already past its deadline is deleted then (its expiry is real, and stays)
// and its image is "absent".
//
// Copying costs time and memory in proportion to the value, so a caller that must bound its
// work asks CheapToCapture first: a string or a packed collection (one allocation, a few KiB
// at most) is cheap; a collection with a table of its own (a big hash, list, sorted set,
// stream) is not.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "engine/collection.h"
#include "engine/db.h"

namespace lapse::engine {

class KeyImage {
 public:
  // Longest value copied at once by a caller that bounds its work (CheapToCapture).
  static constexpr size_t kCheapBytes = 16 * 1024;

  // Whether capturing `key` of `db` would copy no table and at most kCheapBytes (an absent
  // key is cheap). Expires the key if it is due, as Capture would.
  static bool CheapToCapture(Db& db, std::string_view key, int64_t now_ms);
  // The key's state now (after lazy expiry).
  static KeyImage Capture(Db& db, std::string_view key, int64_t now_ms);

  // Puts the key back as captured, whatever happened to it since: replaced, edited in
  // place, deleted or created. Like any write it touches the key's watchers. The copy goes
  // into the key, so an image is restored at most once.
  void Restore(Db& db, int64_t now_ms) &&;

  const std::string& key() const { return key_; }
  bool present() const { return present_; }

 private:
  std::string key_;
  bool present_ = false;
  ValueCopy value_;
  int64_t deadline_ = kNoDeadline;
  uint32_t access_stamp_ = 0;
};

}  // namespace lapse::engine
