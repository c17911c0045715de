// A minimal fork-join pool: persistent workers sleep on a condition variable, the caller
// runs chunk 0 itself, and waits until every worker has finished its chunk.
#include "pool.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace span {
namespace {

struct Pool {
  std::vector<std::thread> workers;
  std::mutex mu;
  std::condition_variable wake, done;
  const std::function<void(int)>* job = nullptr;
  int active = 0;      // workers taking part in the current job (ids 1..active)
  int remaining = 0;   // workers still running the current job
  unsigned long generation = 0;
  bool stopping = false;

  void loop(int id) {
    unsigned long seen = 0;
    for (;;) {
      const std::function<void(int)>* fn;
      {
        std::unique_lock<std::mutex> lock(mu);
        wake.wait(lock, [&] { return stopping || generation != seen; });
        if (stopping) return;
        seen = generation;
        if (id > active) continue;
        fn = job;
      }
      (*fn)(id);
      std::lock_guard<std::mutex> lock(mu);
      if (--remaining == 0) done.notify_one();
    }
  }

  void start(int n) {
    for (int i = 1; i < n; i++) workers.emplace_back([this, i] { loop(i); });
  }

  void stop() {
    {
      std::lock_guard<std::mutex> lock(mu);
      stopping = true;
    }
    wake.notify_all();
    for (auto& t : workers) t.join();
    workers.clear();
    stopping = false;
  }

  /** Runs fn(0..n-1): 0 on the caller, the rest on workers. */
  void run(int n, const std::function<void(int)>& fn) {
    {
      std::lock_guard<std::mutex> lock(mu);
      job = &fn;
      active = n - 1;
      remaining = n - 1;
      generation++;
    }
    wake.notify_all();
    fn(0);
    std::unique_lock<std::mutex> lock(mu);
    done.wait(lock, [&] { return remaining == 0; });
  }
};

int g_threads = std::max(1u, std::thread::hardware_concurrency());
Pool* g_pool = nullptr;

Pool& pool() {
  if (!g_pool) {
    g_pool = new Pool();  // never freed: workers live as long as the process
    g_pool->start(g_threads);
  }
  return *g_pool;
}

}  // namespace

void set_threads(int n) {
  n = std::max(1, n);
  if (n == g_threads) return;
  g_threads = n;
  if (g_pool) {
    g_pool->stop();
    g_pool->start(n);
  }
}

int get_threads() { return g_threads; }

void parallel_for(size_t total, size_t grain, const std::function<void(size_t, size_t)>& fn) {
  if (total == 0) return;
  size_t chunks = std::min<size_t>(g_threads, (total + std::max<size_t>(grain, 1) - 1) / std::max<size_t>(grain, 1));
  if (chunks <= 1) {
    fn(0, total);
    return;
  }
  size_t step = (total + chunks - 1) / chunks;
  pool().run(static_cast<int>(chunks), [&](int id) {
    size_t b = id * step, e = std::min(total, b + step);
    if (b < e) fn(b, e);
  });
}

}  // namespace span
