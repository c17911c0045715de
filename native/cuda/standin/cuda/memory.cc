// See memory.h. Freed ranges are remembered (until a new allocation overlaps them) so that a
// stale pointer is reported as "freed" rather than "not device memory".
#include "memory.h"

#include <cstdio>
#include <cstdlib>
#include <map>

namespace span_standin {
namespace {

struct Alloc {
  size_t bytes;
  bool host;
};

std::map<uintptr_t, Alloc> live;
std::map<uintptr_t, size_t> freed;
size_t used = 0;

std::string hex(uintptr_t p) {
  char b[32];
  snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(p));
  return b;
}

/** The live allocation containing p (p == end counts when `end` is true), or live.end(). */
std::map<uintptr_t, Alloc>::const_iterator find(uintptr_t p, bool end) {
  auto it = live.upper_bound(p);
  if (it == live.begin()) return live.end();
  --it;
  return p < it->first + it->second.bytes || (end && p == it->first + it->second.bytes) ? it : live.end();
}

std::string whyNot(uintptr_t p) {
  auto it = freed.upper_bound(p);
  if (it != freed.begin()) {
    --it;
    if (p < it->first + it->second)
      return hex(p) + " points into freed memory (the allocation at " + hex(it->first) + " of " + std::to_string(it->second) + " bytes)";
  }
  return hex(p) + " is not device memory (no live allocation holds it)";
}

}  // namespace

size_t totalBytes() {
  const char* mb = getenv("SPAN_STANDIN_MEM_MB");
  size_t v = mb ? strtoull(mb, nullptr, 10) : 0;
  return (v ? v : 16384) << 20;
}

uintptr_t allocate(size_t bytes, bool hostPinned) {
  if (bytes == 0 || (!hostPinned && used + bytes > totalBytes())) return 0;
  void* m = aligned_alloc(256, (bytes + 255) & ~size_t(255));
  if (!m) return 0;
  auto p = reinterpret_cast<uintptr_t>(m);
  live[p] = Alloc{bytes, hostPinned};
  if (!hostPinned) used += bytes;
  for (auto it = freed.lower_bound(p > (1u << 30) ? p - (1u << 30) : 0); it != freed.end() && it->first < p + bytes;)
    it = it->first + it->second > p ? freed.erase(it) : std::next(it);
  return p;
}

bool release(uintptr_t p, bool hostPinned) {
  auto it = live.find(p);
  if (it == live.end() || it->second.host != hostPinned) return false;
  if (!hostPinned) used -= it->second.bytes;
  freed[p] = it->second.bytes;
  live.erase(it);
  free(reinterpret_cast<void*>(p));
  return true;
}

std::string checkRange(uintptr_t p, size_t bytes) {
  if (bytes == 0) return "";
  auto it = find(p, false);
  if (it == live.end()) return whyNot(p);
  if (p + bytes > it->first + it->second.bytes)
    return "[" + hex(p) + ", +" + std::to_string(bytes) + ") runs past the end of the allocation at " + hex(it->first) + " of " +
           std::to_string(it->second.bytes) + " bytes";
  return "";
}

std::string checkPointer(uintptr_t p) { return p == 0 || find(p, true) != live.end() ? "" : whyNot(p); }

size_t liveBytes() { return used; }
size_t liveCount() {
  size_t n = 0;
  for (const auto& a : live) n += !a.second.host;
  return n;
}

}  // namespace span_standin
