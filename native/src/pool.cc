// A fork-join pool: persistent workers, the caller takes part, chunks claimed dynamically.
//
// Waking a sleeping thread is slow on a virtual machine (measured here, quiet: 25 µs per empty
// parallel_for, 60 µs when the worker had slept 200 µs: the idle vCPU halts and is woken by an
// interrupt through the hypervisor), and a training step runs thousands of kernels with a few
// tens of µs of JavaScript between them. So a worker that finishes a job spins for a while
// (SPAN_POOL_SPIN_US, default 50 µs) watching for the next one before it sleeps on the
// condition variable, as OpenMP runtimes do (libgomp's GOMP_SPINCOUNT, Intel's KMP_BLOCKTIME).
//
// Spinning is only safe if nobody waits for a thread that is not running: on a loaded machine
// a spinning worker gets descheduled. So a job's chunks are claimed, not assigned: each thread
// takes its own chunk first (the rows it had in the kernels before, in its own caches), then any
// chunk no other thread has started, and the caller waits only for chunks already claimed. A
// worker that wakes late finds nothing to do. run_on_all keeps chunk i on thread i, all at once,
// for what must load every core together (peak.cc).
#include "pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#define SPAN_PAUSE() _mm_pause()
#else
#define SPAN_PAUSE() std::this_thread::yield()
#endif

namespace span {
namespace {

/** How long a thread spins for its next event before it sleeps: SPAN_POOL_SPIN_US (0: never spins). */
long spin_window_us() {
  static const long us = [] {
    const char* v = std::getenv("SPAN_POOL_SPIN_US");
    const long n = v ? std::atol(v) : 50;  // docs/algorithms.md#the-addons-thread-pool: 20 too short, 100 no better
    return std::max(0L, std::min(n, 100000L));
  }();
  return us;
}

/**
 * Spins until ready() or the window has passed; whether ready() held. Every 64 pauses the spinner
 * yields (another thread of ours waiting for this core runs now) and looks at the clock; one that
 * finds itself descheduled meanwhile (a gap over kPreempted: another process wants this core) stops
 * spinning for kBackOff. Measured with the second core kept busy by another process (a 2-thread job
 * of 2 × 50 µs after 20 µs of serial work): 137-148 µs a job spinning without the yield, 94-104 with
 * it, 107 for the old pool that never spun; quiet: 53-56 µs against 76 for the old pool.
 */
constexpr auto kPreempted = std::chrono::microseconds(50);
constexpr auto kBackOff = std::chrono::milliseconds(20);

template <class Ready>
bool spin_until(Ready ready) {
  using clock = std::chrono::steady_clock;
  thread_local clock::time_point quiet_after{};  // this thread spins again from then on
  if (ready()) return true;
  const long us = spin_window_us();
  if (us == 0) return false;
  auto last = clock::now();
  if (last < quiet_after) return false;
  const auto end = last + std::chrono::microseconds(us);
  for (unsigned n = 1;; n++) {
    SPAN_PAUSE();
    if (ready()) return true;
    if ((n & 63) != 0) continue;
    std::this_thread::yield();
    const auto now = clock::now();
    if (now - last > kPreempted) {
      quiet_after = now + kBackOff;
      return ready();
    }
    if (now > end) return ready();
    last = now;
  }
}

struct Pool {
  std::vector<std::thread> workers;
  std::mutex mu;
  std::condition_variable wake, done;
  /**
   * A job: its function, chunk count (≤ the pool's threads) and whether chunk i is thread i's alone
   * (run_on_all). Two slots, by the generation's parity: a worker still reading job g's while the
   * caller publishes g + 1 reads the other slot, and the caller cannot publish g + 2 while any worker
   * is counted in `running` (a worker counts itself, then checks the generation is still g).
   */
  struct Job {
    const std::function<void(int)>* fn = nullptr;
    int chunks = 0;
    bool pinned = false;
  };
  Job slots[2];
  std::atomic<uint64_t> generation{0};         // the job's number, raised by each publish
  std::vector<std::atomic<uint64_t>> claimed;  // per chunk: the last generation that claimed it
  std::atomic<int> running{0};                 // workers inside a job (pinned or not)
  std::atomic<int> pending{0};                 // run_on_all: workers yet to run their chunk
  std::atomic<int> sleepers{0};                // workers blocked on `wake`
  std::atomic<bool> caller_waits{false};       // the caller blocked on `done`
  std::atomic<bool> stopping{false};

  /** Claims chunk c for generation g (once per generation: generations only grow). */
  bool claim(int c, uint64_t g) {
    uint64_t v = claimed[c].load();
    while (v < g)
      if (claimed[c].compare_exchange_weak(v, g)) return true;
    return false;
  }

  /**
   * Thread id's part of job g: its own chunk first (the same rows as in the previous kernels, in
   * its own caches), then any another thread has not started (pinned: its own only).
   */
  void take(int id, uint64_t g, int n, const std::function<void(int)>& fn, bool pin) {
    if (id < n && claim(id, g)) fn(id);
    if (pin) return;
    for (int k = 1; k < n; k++) {
      const int c = (id + k) % n;
      if (claim(c, g)) fn(c);
    }
  }

  /** Worker id in job g: nothing if the job is already another (the caller cannot move on while we are counted). */
  void work(int id, uint64_t g) {
    running.fetch_add(1);
    if (generation.load() == g) {
      const Job& j = slots[g & 1];
      take(id, g, j.chunks, *j.fn, j.pinned);
      if (j.pinned && id < j.chunks) finish(pending);
    }
    finish(running);
  }

  /** One fewer in `count`; the last one wakes a caller that sleeps on it. */
  void finish(std::atomic<int>& count) {
    if (count.fetch_sub(1) == 1 && caller_waits.load()) {
      std::lock_guard<std::mutex> lock(mu);
      done.notify_one();
    }
  }

  /** Worker id's life: seen is the generation current when it was started (jobs before it are not its). */
  void loop(int id, uint64_t seen) {
    for (;;) {
      const auto fresh = [&] { return stopping.load() || generation.load() != seen; };
      if (!spin_until(fresh)) {
        std::unique_lock<std::mutex> lock(mu);
        sleepers.fetch_add(1);  // then the predicate: a caller that missed it sees us (both seq_cst)
        wake.wait(lock, fresh);
        sleepers.fetch_sub(1);
      }
      if (stopping.load()) return;
      seen = generation.load();
      work(id, seen);
    }
  }

  void start(int n) {
    claimed = std::vector<std::atomic<uint64_t>>(n);
    for (auto& c : claimed) c.store(generation.load());
    const uint64_t now = generation.load();  // read here, on the caller: a worker's first look may come after the next job
    for (int i = 1; i < n; i++) workers.emplace_back([this, i, now] { loop(i, now); });
  }

  void stop() {
    {
      std::lock_guard<std::mutex> lock(mu);
      stopping.store(true);
    }
    wake.notify_all();
    for (auto& t : workers) t.join();
    workers.clear();
    stopping.store(false);
  }

  /** Publishes job fn of n chunks as a new generation and wakes sleeping workers; the generation. */
  uint64_t publish(int n, const std::function<void(int)>& fn, bool pin) {
    const uint64_t g = generation.load() + 1;  // only the caller raises it
    slots[g & 1] = Job{&fn, n, pin};
    generation.store(g);
    if (sleepers.load() > 0) {
      { std::lock_guard<std::mutex> lock(mu); }  // a worker between its predicate and its sleep has finished both
      wake.notify_all();
    }
    return g;
  }

  /** Waits until count is 0: spinning, then on `done`. */
  void join(std::atomic<int>& count) {
    if (spin_until([&] { return count.load() == 0; })) return;
    std::unique_lock<std::mutex> lock(mu);
    caller_waits.store(true);
    done.wait(lock, [&] { return count.load() == 0; });
    caller_waits.store(false);
  }

  /** Runs fn(0..n-1), each chunk once, on whichever threads claim them (the caller among them). */
  void run(int n, const std::function<void(int)>& fn) {
    take(0, publish(n, fn, false), n, fn, false);
    join(running);
  }

  /** Runs fn(i) on thread i for i < n (0: the caller), all at once. */
  void run_on_all(int n, const std::function<void(int)>& fn) {
    pending.store(n - 1);
    take(0, publish(n, fn, true), n, fn, true);
    join(pending);
    join(running);
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
  n = std::max(1, std::min(n, 4096));
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

void run_on_every_thread(const std::function<void(int)>& fn) {
  if (g_threads == 1) return fn(0);
  pool().run_on_all(g_threads, fn);
}

}  // namespace span
