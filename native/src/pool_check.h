// A self-check of the pool (pool.cc) that tests and `doctor` can run: every chunk exactly once.
#pragma once
#include <cstddef>

namespace span {

struct PoolCheck {
  size_t jobs;          // parallel_for calls made
  size_t missing;       // indices no chunk covered
  size_t repeated;      // indices covered more than once
  size_t overlong;      // jobs split into more chunks than threads
  size_t threads_seen;  // distinct threads that ran some chunk
  bool all_at_once;     // run_on_every_thread ran thread i's part on n distinct threads, all inside together
};

/**
 * `jobs` parallel_for calls of pseudo-random sizes and grains (seeded), some back to back, some
 * after pauses long enough for the workers to sleep, each index counted; then run_on_every_thread.
 */
PoolCheck check_pool(size_t jobs, unsigned seed);

}  // namespace span
