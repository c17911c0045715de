// oneDNN matmul primitives (oneDNN 2.x C API: dnnl_matmul_desc_init; see the developer guide's
// "MatMul" page and examples/primitives/matmul.cpp of oneDNN v2.6). One primitive per distinct
// product (shape, transposes, strides, precision, beta), created on first use and kept in a
// bounded per-thread LRU together with its memory objects, so that threads never share a
// stream, a memory object or a scratchpad; each thread has one scratchpad buffer, as large as
// its largest product needs (the packed copy of B, for the biggest), that its primitives share. oneDNN runs single-threaded inside
// the addon's pool: with its OpenMP runtime, omp_set_num_threads(1) on each calling thread.
#include "gemm_dnnl.h"

#if defined(SPAN_DNNL) || defined(SPAN_DNNL_OMP)
#include <dnnl.h>

#include <cstdio>
#include <cstring>
#include <list>
#include <string>
#include <vector>

#if defined(SPAN_DNNL_OMP)
extern "C" void omp_set_num_threads(int);
#endif

namespace span {
namespace {

constexpr size_t kCacheSize = 64;  // primitives per thread: a base step uses about 20 shapes

struct Key {
  size_t v[14];
  bool operator==(const Key& o) const { return std::memcmp(v, o.v, sizeof v) == 0; }
};

Key key_of(const DnnlProduct& p) {
  return Key{{p.batch, p.M, p.N, p.K, (size_t)p.transA, (size_t)p.transB, (size_t)p.bf16, (size_t)(p.beta != 0.0f),
              p.lda, p.ldb, p.ldc, p.strideA, p.strideB, p.strideC}};
}

struct Entry {
  Key key;
  dnnl_primitive_t prim = nullptr;  // null: oneDNN has no implementation (the caller falls back)
  dnnl_memory_t a = nullptr, b = nullptr, c = nullptr, pad = nullptr;
  size_t pad_bytes = 0;
  ~Entry() {
    for (dnnl_memory_t m : {a, b, c, pad})
      if (m) dnnl_memory_destroy(m);
    if (prim) dnnl_primitive_destroy(prim);
  }
};

dnnl_engine_t engine() {
  static dnnl_engine_t e = [] {
    dnnl_engine_t x = nullptr;
    if (dnnl_engine_create(&x, dnnl_cpu, 0) != dnnl_success) x = nullptr;
    return x;
  }();
  return e;
}

/** The calling thread's stream (oneDNN single-threaded on it). */
dnnl_stream_t stream() {
  thread_local dnnl_stream_t s = [] {
#if defined(SPAN_DNNL_OMP)
    omp_set_num_threads(1);  // this thread's OpenMP ICV only: oneDNN runs its loops inline
#endif
    dnnl_stream_t x = nullptr;
    if (dnnl_stream_create(&x, engine(), dnnl_stream_default_flags) != dnnl_success) x = nullptr;
    return x;
  }();
  return s;
}

/** [batch?, rows, cols] row-major with leading dimension ld (or its transpose when trans). */
dnnl_memory_desc_t desc(size_t batch, size_t stride, size_t rows, size_t cols, size_t ld, bool trans, dnnl_data_type_t t) {
  dnnl_memory_desc_t md;
  dnnl_dims_t dims = {(dnnl_dim_t)batch, (dnnl_dim_t)rows, (dnnl_dim_t)cols};
  dnnl_dims_t strides = {(dnnl_dim_t)(stride ? stride : rows * cols), trans ? 1 : (dnnl_dim_t)ld, trans ? (dnnl_dim_t)ld : 1};
  dnnl_memory_desc_init_by_strides(&md, 3, dims, t, strides);
  return md;
}

dnnl_primitive_desc_t make_pd(const DnnlProduct& p) {
  dnnl_data_type_t t = p.bf16 ? dnnl_bf16 : dnnl_f32;
  // src [bA, M, K], weights [bB, K, N], dst [batch, M, N]; a batch of 1 broadcasts
  dnnl_memory_desc_t a = desc(p.strideA ? p.batch : 1, p.strideA, p.M, p.K, p.lda, p.transA, t);
  dnnl_memory_desc_t b = desc(p.strideB ? p.batch : 1, p.strideB, p.K, p.N, p.ldb, p.transB, t);
  dnnl_memory_desc_t c = desc(p.batch, p.strideC, p.M, p.N, p.ldc, false, dnnl_f32);
  dnnl_matmul_desc_t md;
  if (dnnl_matmul_desc_init(&md, &a, &b, nullptr, &c) != dnnl_success) return nullptr;
  dnnl_primitive_attr_t attr;
  dnnl_primitive_attr_create(&attr);
  dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user);
  dnnl_post_ops_t ops = nullptr;
  if (p.beta != 0.0f) {  // C += A·B: oneDNN's sum post-op
    dnnl_post_ops_create(&ops);
    dnnl_post_ops_append_sum(ops, 1.0f);
    dnnl_primitive_attr_set_post_ops(attr, ops);
  }
  dnnl_primitive_desc_t pd = nullptr;
  if (dnnl_primitive_desc_create(&pd, &md, attr, engine(), nullptr) != dnnl_success) pd = nullptr;
  if (ops) dnnl_post_ops_destroy(ops);
  dnnl_primitive_attr_destroy(attr);
  return pd;
}

/** The primitive and its memory objects for p (data handles set at each run). */
void build(Entry& e, const DnnlProduct& p) {
  dnnl_primitive_desc_t pd = make_pd(p);
  if (!pd) return;
  auto md = [&](dnnl_query_t q) { return dnnl_primitive_desc_query_md(pd, q, 0); };
  bool ok = dnnl_primitive_create(&e.prim, pd) == dnnl_success;
  ok = ok && dnnl_memory_create(&e.a, md(dnnl_query_src_md), engine(), DNNL_MEMORY_NONE) == dnnl_success;
  ok = ok && dnnl_memory_create(&e.b, md(dnnl_query_weights_md), engine(), DNNL_MEMORY_NONE) == dnnl_success;
  ok = ok && dnnl_memory_create(&e.c, md(dnnl_query_dst_md), engine(), DNNL_MEMORY_NONE) == dnnl_success;
  const dnnl_memory_desc_t* pad = md(dnnl_query_scratchpad_md);
  e.pad_bytes = pad ? dnnl_memory_desc_get_size(pad) : 0;
  if (ok && e.pad_bytes) ok = dnnl_memory_create(&e.pad, pad, engine(), DNNL_MEMORY_NONE) == dnnl_success;
  dnnl_primitive_desc_destroy(pd);
  if (!ok && e.prim) {
    dnnl_primitive_destroy(e.prim);
    e.prim = nullptr;
  }
}

/** The calling thread's entry for p: found (moved to the front) or built (the oldest dropped). */
Entry& lookup(const DnnlProduct& p) {
  thread_local std::list<Entry> cache;
  Key k = key_of(p);
  for (auto it = cache.begin(); it != cache.end(); ++it)
    if (it->key == k) {
      cache.splice(cache.begin(), cache, it);
      return cache.front();
    }
  if (cache.size() >= kCacheSize) cache.pop_back();
  cache.emplace_front();
  cache.front().key = k;
  build(cache.front(), p);
  return cache.front();
}

}  // namespace

bool dnnl_ready() { return engine() != nullptr; }

bool dnnl_matmul(const DnnlProduct& p) {
  if (!engine() || !stream()) return false;
  Entry& e = lookup(p);
  if (!e.prim) return false;
  dnnl_memory_set_data_handle(e.a, const_cast<void*>(p.a));
  dnnl_memory_set_data_handle(e.b, const_cast<void*>(p.b));
  dnnl_memory_set_data_handle(e.c, p.c);
  if (e.pad) {
    thread_local std::vector<char> scratch;  // this thread's scratchpad, shared by its primitives
    if (scratch.size() < e.pad_bytes) scratch.resize(e.pad_bytes);
    dnnl_memory_set_data_handle(e.pad, scratch.data());
  }
  dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, e.a}, {DNNL_ARG_WEIGHTS, e.b}, {DNNL_ARG_DST, e.c}, {DNNL_ARG_SCRATCHPAD, e.pad}};
  if (dnnl_primitive_execute(e.prim, stream(), e.pad ? 4 : 3, args) != dnnl_success) return false;
  return dnnl_stream_wait(stream()) == dnnl_success;
}

const char* dnnl_version_name() {
  static char v[32];
  const dnnl_version_t* x = dnnl_version();
  snprintf(v, sizeof v, "%d.%d.%d", x->major, x->minor, x->patch);
  return v;
}

const char* dnnl_isa_name() {
  switch (dnnl_get_effective_cpu_isa()) {
    case dnnl_cpu_isa_sse41: return "sse41";
    case dnnl_cpu_isa_avx: return "avx";
    case dnnl_cpu_isa_avx2: return "avx2";
    case dnnl_cpu_isa_avx2_vnni: return "avx2_vnni";
    case dnnl_cpu_isa_avx512_core: return "avx512_core";
    case dnnl_cpu_isa_avx512_core_vnni: return "avx512_core_vnni";
    case dnnl_cpu_isa_avx512_core_bf16: return "avx512_core_bf16";
    case dnnl_cpu_isa_avx512_core_amx: return "avx512_core_amx";
    default: return "other";
  }
}

const char* dnnl_impl_name(bool bf16) {
  static std::string names[2];
  std::string& out = names[bf16 ? 1 : 0];
  if (!out.empty() || !engine()) return out.c_str();
  DnnlProduct p{nullptr, nullptr, nullptr, 1, 256, 256, 256, false, false, bf16, 0.0f, 256, 256, 256, 0, 0, 0};
  stream();  // this thread single-threaded first: the implementation is chosen for one thread
  dnnl_primitive_desc_t pd = make_pd(p);
  const char* s = nullptr;
  if (pd && dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &s) == dnnl_success && s) out = s;
  if (pd) dnnl_primitive_desc_destroy(pd);
  return out.c_str();
}

}  // namespace span

#else  // without oneDNN

namespace span {
bool dnnl_ready() { return false; }
bool dnnl_matmul(const DnnlProduct&) { return false; }
const char* dnnl_version_name() { return ""; }
const char* dnnl_isa_name() { return ""; }
const char* dnnl_impl_name(bool) { return ""; }
}  // namespace span

#endif
