#include "engine/key_image.h"

namespace lapse::engine {

bool KeyImage::CheapToCapture(Db& db, std::string_view key, int64_t now_ms) {
  const Entry* e = db.Find(key, now_ms);
  return e == nullptr || (!e->owns_table() && e->value().size() <= kCheapBytes);
}

KeyImage KeyImage::Capture(Db& db, std::string_view key, int64_t now_ms) {
  KeyImage image;
  image.key_ = std::string(key);
  const Entry* e = db.Find(key, now_ms);
  if (e == nullptr) return image;
  image.present_ = true;
  image.value_ = ValueCopy(*e);
  image.deadline_ = e->deadline();
  image.access_stamp_ = e->access_stamp();
  return image;
}

void KeyImage::Restore(Db& db, int64_t now_ms) && {
  if (!present_) {
    db.Erase(key_, now_ms);
    return;
  }
  // Put replaces whatever is stored now, live or not, and files the deadline again.
  Entry* e = db.Put(key_, value_.bytes(), value_.type(), deadline_, now_ms);
  e->set_encoding_bits(value_.encoding_bits());
  e->set_access_stamp(access_stamp_);
  value_.Release();  // the entry owns the copied table now
  db.TrackFields(e);
}

}  // namespace lapse::engine
