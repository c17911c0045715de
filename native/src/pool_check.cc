// pool_check.h: runs the pool the ways the kernels do and counts what each chunk covered.
#include "pool_check.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "pool.h"

namespace span {
namespace {

/** A pause of about us microseconds (0: none), spinning: the pool's workers may go to sleep meanwhile. */
void pause_us(unsigned us) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
  while (std::chrono::steady_clock::now() < end) {
  }
}

/** Whether all n threads are inside fn at once: each waits (up to a second) for the others. */
bool all_at_once(size_t n, std::set<std::thread::id>& ids) {
  std::atomic<size_t> inside{0};
  std::atomic<bool> ok{true};
  std::mutex mu;
  std::vector<int> runs(n, 0);
  run_on_every_thread([&](int i) {
    {
      std::lock_guard<std::mutex> lock(mu);
      ids.insert(std::this_thread::get_id());
      runs[i]++;
    }
    inside.fetch_add(1);
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    while (inside.load() < n)
      if (std::chrono::steady_clock::now() > end) return ok.store(false);
  });
  return ok.load() && ids.size() == n && std::all_of(runs.begin(), runs.end(), [](int r) { return r == 1; });
}

}  // namespace

PoolCheck check_pool(size_t jobs, unsigned seed) {
  PoolCheck r{jobs, 0, 0, 0, 0, false};
  std::set<std::thread::id> seen;
  std::mutex mu;
  unsigned s = seed;
  const auto next = [&s](unsigned m) {
    s = s * 1664525u + 1013904223u;
    return (s >> 8) % m;
  };
  const size_t threads = static_cast<size_t>(get_threads());
  for (size_t j = 0; j < jobs; j++) {
    const size_t total = next(4) == 0 ? next(4) : next(5000), grain = 1 + next(300);
    const unsigned gap = next(8) == 0 ? 300 : next(2) * 20;  // asleep, spinning, or back to back
    pause_us(gap);
    std::vector<std::atomic<int>> count(total);
    std::atomic<size_t> chunks{0};
    const bool late = next(3) == 0;  // then chunks past the first start late: a caller that returns before they end sees them missing
    parallel_for(total, grain, [&](size_t b, size_t e) {
      chunks.fetch_add(1);
      if (late && b > 0) pause_us(30);
      for (size_t i = b; i < e; i++) count[i].fetch_add(1);
      std::lock_guard<std::mutex> lock(mu);
      seen.insert(std::this_thread::get_id());
    });
    for (auto& c : count) r.missing += c.load() == 0, r.repeated += c.load() > 1;
    r.overlong += chunks.load() > threads;
  }
  r.threads_seen = seen.size();
  std::set<std::thread::id> ids;
  r.all_at_once = all_at_once(threads, ids);
  return r;
}

}  // namespace span
