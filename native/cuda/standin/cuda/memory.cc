// See memory.h. Freed ranges are remembered (until a new allocation overlaps them) so that a
// stale pointer is reported as "freed" rather than "not device memory".
#include "memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>

namespace span_standin {
namespace {

struct Alloc {
  size_t bytes;
  bool host;
  uintptr_t mapBase = 0;  // guarded: the mapping, its last page inaccessible
  size_t mapBytes = 0;
};

const size_t kPage = 4096;

std::map<uintptr_t, Alloc> live;
std::map<uintptr_t, size_t> freed;
std::map<uintptr_t, std::pair<uintptr_t, size_t>> freedMaps;  // guarded: map base → (allocation, bytes), kept inaccessible
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

bool guarded() {
  const char* g = getenv("SPAN_STANDIN_GUARD");
  return !(g && g[0] == '0' && !g[1]);
}

/** A guarded allocation: its (256-aligned) end at an inaccessible page. */
uintptr_t mapGuarded(size_t bytes, Alloc& a) {
  size_t span = (bytes + 255) & ~size_t(255);
  a.mapBytes = ((span + kPage - 1) & ~(kPage - 1)) + kPage;
  void* m = mmap(nullptr, a.mapBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED) return 0;
  a.mapBase = reinterpret_cast<uintptr_t>(m);
  mprotect(reinterpret_cast<char*>(m) + a.mapBytes - kPage, kPage, PROT_NONE);
  return a.mapBase + a.mapBytes - kPage - span;
}

uintptr_t allocate(size_t bytes, bool hostPinned) {
  if (bytes == 0 || (!hostPinned && used + bytes > totalBytes())) return 0;
  Alloc a{bytes, hostPinned};
  uintptr_t p = !hostPinned && guarded() ? mapGuarded(bytes, a) : reinterpret_cast<uintptr_t>(aligned_alloc(256, (bytes + 255) & ~size_t(255)));
  if (!p) return 0;
  live[p] = a;
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
  if (it->second.mapBase) {  // never reused: a kernel touching it faults
    madvise(reinterpret_cast<void*>(it->second.mapBase), it->second.mapBytes, MADV_DONTNEED);
    mprotect(reinterpret_cast<void*>(it->second.mapBase), it->second.mapBytes, PROT_NONE);
    freedMaps[it->second.mapBase] = {p, it->second.bytes};
  } else {
    free(reinterpret_cast<void*>(p));
  }
  live.erase(it);
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

std::string describeFault(uintptr_t a) {
  for (const auto& [p, al] : live)
    if (al.mapBase && a >= al.mapBase + al.mapBytes - kPage && a < al.mapBase + al.mapBytes)
      return "an access at " + hex(a) + ", " + std::to_string(a - p - al.bytes) + " bytes past the end of the allocation at " + hex(p) + " of " +
             std::to_string(al.bytes) + " bytes";
  auto it = freedMaps.upper_bound(a);
  if (it == freedMaps.begin()) return "";
  --it;
  size_t mapBytes = (((it->second.second + 255) & ~size_t(255)) + kPage - 1) / kPage * kPage + kPage;
  if (a >= it->first + mapBytes) return "";
  return "an access at " + hex(a) + " into freed memory (the allocation at " + hex(it->second.first) + " of " + std::to_string(it->second.second) + " bytes)";
}

size_t liveBytes() { return used; }
size_t liveCount() {
  size_t n = 0;
  for (const auto& a : live) n += !a.second.host;
  return n;
}

}  // namespace span_standin
