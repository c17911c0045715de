// One thread pool for every kernel of the addon: the caller's thread plus (threads - 1)
// workers. BLAS is pinned to one thread (see gemm.cc) so that this pool is the only source
// of parallelism and the two never oversubscribe the cores.
#pragma once
#include <cstddef>
#include <functional>

namespace span {

/** Sets the number of threads (>= 1); workers are (re)started lazily. */
void set_threads(int n);
int get_threads();

/**
 * Runs fn(begin, end) over [0, total) split into at most get_threads() contiguous chunks,
 * none smaller than `grain` items (so small jobs stay on the calling thread).
 */
void parallel_for(size_t total, size_t grain, const std::function<void(size_t, size_t)>& fn);

/** Runs fn(i) on every thread of the pool at once, i in [0, get_threads()): 0 on the caller (peak.cc's loops). */
void run_on_every_thread(const std::function<void(int)>& fn);

}  // namespace span
