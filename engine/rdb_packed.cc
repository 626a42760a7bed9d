#include "engine/rdb_packed.h"

#include <charconv>

#include "engine/collection.h"

namespace lapse::engine::rdb {

namespace {

uint64_t ReadLe(const unsigned char* p, int bytes) {
  uint64_t v = 0;
  for (int k = bytes - 1; k >= 0; --k) v = (v << 8) | p[k];
  return v;
}

int64_t SignExtend(uint64_t v, int bits) {
  uint64_t sign = uint64_t{1} << (bits - 1);
  return static_cast<int64_t>((v ^ sign) - sign);
}

// The bytes a listpack entry's back length takes for an entry of `len` bytes.
size_t BacklenSize(size_t len) {
  if (len <= 127) return 1;
  if (len < 16383) return 2;
  if (len < 2097151) return 3;
  if (len < 268435455) return 4;
  return 5;
}

void AppendBacklen(std::string& out, size_t len) {
  size_t n = BacklenSize(len);
  // Written so that it reads right to left: the last byte holds the lowest 7 bits, every
  // byte but the first has its top bit set.
  for (size_t k = 0; k < n; ++k) {
    size_t shift = 7 * (n - 1 - k);
    unsigned char b = static_cast<unsigned char>((len >> shift) & 127);
    if (k > 0) b |= 128;
    out.push_back(static_cast<char>(b));
  }
}

bool EmitInt(const ElementFn& fn, int64_t v, bool* stop) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  *stop = !fn(std::string_view(buf, end - buf));
  return true;
}

}  // namespace

void ListpackWriter::AppendEntry(std::string_view encoded) {
  bytes_.append(encoded);
  AppendBacklen(bytes_, encoded.size());
  ++count_;
}

void ListpackWriter::AppendInteger(int64_t v) {
  std::string e;
  auto le = [&](int bytes) {
    for (int k = 0; k < bytes; ++k) e.push_back(static_cast<char>((static_cast<uint64_t>(v) >> (8 * k)) & 0xff));
  };
  if (v >= 0 && v <= 127) {
    e.push_back(static_cast<char>(v));
  } else if (v >= -4096 && v <= 4095) {
    uint64_t u = static_cast<uint64_t>(v) & 0x1fff;
    e.push_back(static_cast<char>(0xc0 | (u >> 8)));
    e.push_back(static_cast<char>(u & 0xff));
  } else if (v >= INT16_MIN && v <= INT16_MAX) {
    e.push_back(static_cast<char>(0xf1));
    le(2);
  } else if (v >= -(1 << 23) && v < (1 << 23)) {
    e.push_back(static_cast<char>(0xf2));
    le(3);
  } else if (v >= INT32_MIN && v <= INT32_MAX) {
    e.push_back(static_cast<char>(0xf3));
    le(4);
  } else {
    e.push_back(static_cast<char>(0xf4));
    le(8);
  }
  AppendEntry(e);
}

void ListpackWriter::Append(std::string_view s) {
  int64_t v = 0;
  if (s.size() <= 20 && ParseCanonicalInt(s, &v)) return AppendInteger(v);
  std::string e;
  if (s.size() < 64) {
    e.push_back(static_cast<char>(0x80 | s.size()));
  } else if (s.size() < 4096) {
    e.push_back(static_cast<char>(0xe0 | (s.size() >> 8)));
    e.push_back(static_cast<char>(s.size() & 0xff));
  } else {
    e.push_back(static_cast<char>(0xf0));
    for (int k = 0; k < 4; ++k) e.push_back(static_cast<char>((s.size() >> (8 * k)) & 0xff));
  }
  e.append(s);
  AppendEntry(e);
}

std::string ListpackWriter::Finish() {
  bytes_.push_back(static_cast<char>(0xff));
  uint32_t total = static_cast<uint32_t>(bytes_.size());
  uint16_t n = count_ < 65535 ? static_cast<uint16_t>(count_) : 65535;
  for (int k = 0; k < 4; ++k) bytes_[k] = static_cast<char>((total >> (8 * k)) & 0xff);
  bytes_[4] = static_cast<char>(n & 0xff);
  bytes_[5] = static_cast<char>(n >> 8);
  return std::move(bytes_);
}

bool ForEachListpackElement(std::string_view lp, const ElementFn& fn) {
  const auto* p = reinterpret_cast<const unsigned char*>(lp.data());
  size_t n = lp.size();
  if (n < 7 || ReadLe(p, 4) != n || p[n - 1] != 0xff) return false;
  size_t i = 6;
  bool stop = false;
  while (i < n - 1 && !stop) {
    unsigned char b = p[i];
    size_t header = 1, data = 0;
    bool is_string = (b & 0xc0) == 0x80 || (b & 0xf0) == 0xe0 || b == 0xf0;
    if (b < 0x80) {
      EmitInt(fn, b, &stop);
    } else if ((b & 0xc0) == 0x80) {
      data = b & 0x3f;
    } else if ((b & 0xe0) == 0xc0) {
      if (i + 2 > n) return false;
      header = 2;
      EmitInt(fn, SignExtend(((b & 0x1f) << 8) | p[i + 1], 13), &stop);
    } else if ((b & 0xf0) == 0xe0) {
      if (i + 2 > n) return false;
      header = 2;
      data = ((b & 0x0f) << 8) | p[i + 1];
    } else if (b == 0xf0) {
      if (i + 5 > n) return false;
      header = 5;
      data = ReadLe(p + i + 1, 4);
    } else if (b >= 0xf1 && b <= 0xf4) {
      int bytes = b == 0xf1 ? 2 : b == 0xf2 ? 3 : b == 0xf3 ? 4 : 8;
      if (i + 1 + bytes > n) return false;
      header = 1 + bytes;
      EmitInt(fn, SignExtend(ReadLe(p + i + 1, bytes), 8 * bytes), &stop);
    } else {
      return false;
    }
    if (data > n || i + header + data > n - 1) return false;
    if (is_string && !stop) stop = !fn(lp.substr(i + header, data));
    i += header + data + BacklenSize(header + data);
  }
  return stop || i == n - 1;
}

bool ForEachZiplistElement(std::string_view zl, const ElementFn& fn) {
  const auto* p = reinterpret_cast<const unsigned char*>(zl.data());
  size_t n = zl.size();
  if (n < 11 || ReadLe(p, 4) != n || p[n - 1] != 0xff) return false;
  size_t i = 10;
  bool stop = false;
  while (i < n - 1 && !stop) {
    i += p[i] < 254 ? 1 : 5;  // the previous entry's length
    if (i >= n - 1) return false;
    unsigned char b = p[i];
    size_t header = 1, data = 0;
    bool is_string = true;
    switch (b >> 6) {
      case 0:
        data = b & 0x3f;
        break;
      case 1:
        if (i + 2 > n) return false;
        header = 2, data = ((b & 0x3f) << 8) | p[i + 1];
        break;
      case 2:
        if (i + 5 > n) return false;
        header = 5, data = (size_t{p[i + 1]} << 24) | (p[i + 2] << 16) | (p[i + 3] << 8) | p[i + 4];
        break;
      default: {
        is_string = false;
        int bytes = b == 0xc0 ? 2 : b == 0xd0 ? 4 : b == 0xe0 ? 8 : b == 0xf0 ? 3 : b == 0xfe ? 1 : 0;
        if (bytes == 0) {  // 1111xxxx: an immediate 0..12
          if (b < 0xf1 || b > 0xfd) return false;
          EmitInt(fn, (b & 0x0f) - 1, &stop);
        } else {
          if (i + 1 + bytes > n) return false;
          header = 1 + bytes;
          EmitInt(fn, SignExtend(ReadLe(p + i + 1, bytes), 8 * bytes), &stop);
        }
      }
    }
    if (data > n || i + header + data > n - 1) return false;
    if (is_string && !stop) stop = !fn(zl.substr(i + header, data));
    i += header + data;
  }
  return stop || i == n - 1;
}

bool ForEachIntsetMember(std::string_view is, const ElementFn& fn) {
  const auto* p = reinterpret_cast<const unsigned char*>(is.data());
  if (is.size() < 8) return false;
  uint64_t width = ReadLe(p, 4), count = ReadLe(p + 4, 4);
  if ((width != 2 && width != 4 && width != 8) || is.size() != 8 + width * count) return false;
  bool stop = false;
  for (uint64_t k = 0; k < count && !stop; ++k) {
    EmitInt(fn, SignExtend(ReadLe(p + 8 + k * width, static_cast<int>(width)), static_cast<int>(8 * width)), &stop);
  }
  return true;
}

bool ForEachZipmapElement(std::string_view zm, const ElementFn& fn) {
  const auto* p = reinterpret_cast<const unsigned char*>(zm.data());
  size_t n = zm.size(), i = 1;
  if (n < 2) return false;
  auto read_len = [&](size_t* len) {
    if (i >= n) return false;
    if (p[i] < 254) {
      *len = p[i++];
      return true;
    }
    if (p[i] != 254 || i + 5 > n) return false;
    *len = ReadLe(p + i + 1, 4);
    i += 5;
    return true;
  };
  bool field = true;
  while (i < n && p[i] != 255) {
    size_t len = 0, free = 0;
    if (!read_len(&len)) return false;
    if (!field) {
      if (i >= n) return false;
      free = p[i++];
    }
    if (len > n || i + len + free > n) return false;
    if (!fn(zm.substr(i, len))) return true;
    i += len + free;
    field = !field;
  }
  return field && i == n - 1;
}

std::string BuildIntset(const std::vector<int64_t>& members) {
  int64_t lo = members.empty() ? 0 : members.front(), hi = members.empty() ? 0 : members.back();
  uint32_t width = (lo >= INT16_MIN && hi <= INT16_MAX) ? 2 : (lo >= INT32_MIN && hi <= INT32_MAX) ? 4 : 8;
  std::string out;
  auto le = [&](uint64_t v, uint32_t bytes) {
    for (uint32_t k = 0; k < bytes; ++k) out.push_back(static_cast<char>((v >> (8 * k)) & 0xff));
  };
  le(width, 4);
  le(members.size(), 4);
  for (int64_t m : members) le(static_cast<uint64_t>(m), width);
  return out;
}

}  // namespace lapse::engine::rdb
