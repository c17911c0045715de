// Matrix products, on one of three paths (gemm.h GemmPath), the fastest found at build time by
// default: oneDNN's matmul primitive (gemm_dnnl.cc; detect-dnnl.mjs), a CBLAS' sgemm
// (detect-blas.mjs), or a cache-blocked kernel of our own. Work is split across the addon's
// pool: whole batch entries when there are enough of them, else row (or column) stripes of C;
// oneDNN and the BLAS run single-threaded inside it. bf16 products round the operands with
// bf16.cc; oneDNN then runs bf16 primitives, the other paths the fp32 kernel on the rounded copies.
#include "gemm.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#include "bf16.h"
#include "gemm_dnnl.h"
#include "gemm_span.h"
#include "pool.h"

#if defined(SPAN_BLAS_ACCELERATE)
#include <Accelerate/Accelerate.h>
#define SPAN_HAVE_CBLAS 1
#elif defined(SPAN_BLAS_OPENBLAS) || defined(SPAN_BLAS_BLIS) || defined(SPAN_BLAS_CBLAS)
#include <cblas.h>
#define SPAN_HAVE_CBLAS 1
#endif

#if defined(SPAN_BLAS_OPENBLAS)
extern "C" void openblas_set_num_threads(int);
extern "C" char* openblas_get_corename(void);
#endif
#if defined(SPAN_BLAS_BLIS)
extern "C" void bli_thread_set_num_threads(long);
#endif

namespace span {

const char* blas_name() {
#if defined(SPAN_BLAS_OPENBLAS)
  static char name[64];
  snprintf(name, sizeof name, "openblas (%s)", openblas_get_corename());  // the kernel set OpenBLAS picked
  return name;
#elif defined(SPAN_BLAS_BLIS)
  return "blis";
#elif defined(SPAN_BLAS_ACCELERATE)
  return "accelerate";
#elif defined(SPAN_BLAS_CBLAS)
  return "cblas";
#else
  return "builtin";
#endif
}

void blas_single_thread() {
#if defined(SPAN_BLAS_OPENBLAS)
  openblas_set_num_threads(1);
#elif defined(SPAN_BLAS_BLIS)
  bli_thread_set_num_threads(1);
#endif
}

namespace {

/** One product C = op(A)·op(B), row-major with leading dimensions lda, ldb, ldc. */
struct Gemm {
  const float* a;
  const float* b;
  float* c;
  size_t M, N, K;
  bool transA, transB;
  float beta;  // 0: C = op(A)·op(B); 1: C += op(A)·op(B)
  size_t lda, ldb, ldc;
};

/** A product over contiguous operands (leading dimensions from the shapes). */
Gemm dense_gemm(const float* a, const float* b, float* c, size_t M, size_t N, size_t K, bool transA, bool transB,
                float beta) {
  return Gemm{a, b, c, M, N, K, transA, transB, beta, transA ? M : K, transB ? K : N, N};
}

#ifdef SPAN_HAVE_CBLAS
void blas_block(const Gemm& g, size_t m0, size_t m1, size_t n0, size_t n1) {
  const float* a = g.transA ? g.a + m0 : g.a + m0 * g.lda;
  const float* b = g.transB ? g.b + n0 * g.ldb : g.b + n0;
  cblas_sgemm(CblasRowMajor, g.transA ? CblasTrans : CblasNoTrans, g.transB ? CblasTrans : CblasNoTrans,
              (int)(m1 - m0), (int)(n1 - n0), (int)g.K, 1.0f, a, (int)g.lda, b, (int)g.ldb, g.beta,
              g.c + m0 * g.ldc + n0, (int)g.ldc);
}
#endif

// Builtin kernel (no BLAS): op(B)'s column stripe is packed row-major into [K, n] panels of
// kNc columns, then four rows of C at a time accumulate a[i,k] * Bpanel[k, :] (the inner
// loop is a contiguous axpy the compiler vectorises).
constexpr size_t kKc = 256, kNc = 512;

inline float at_a(const Gemm& g, size_t i, size_t k) { return g.transA ? g.a[k * g.lda + i] : g.a[i * g.lda + k]; }
inline float at_b(const Gemm& g, size_t k, size_t j) { return g.transB ? g.b[j * g.ldb + k] : g.b[k * g.ldb + j]; }

void builtin_block(const Gemm& g, size_t m0, size_t m1, size_t n0, size_t n1) {
  std::vector<float> panel(kKc * kNc), arow(4 * kKc);
  if (g.beta == 0.0f)
    for (size_t i = m0; i < m1; i++) std::memset(g.c + i * g.ldc + n0, 0, (n1 - n0) * sizeof(float));
  for (size_t j0 = n0; j0 < n1; j0 += kNc) {
    size_t nc = std::min(kNc, n1 - j0);
    for (size_t k0 = 0; k0 < g.K; k0 += kKc) {
      size_t kc = std::min(kKc, g.K - k0);
      for (size_t k = 0; k < kc; k++)
        for (size_t j = 0; j < nc; j++) panel[k * nc + j] = at_b(g, k0 + k, j0 + j);
      size_t i = m0;
      for (; i + 4 <= m1; i += 4) {
        for (size_t r = 0; r < 4; r++)
          for (size_t k = 0; k < kc; k++) arow[r * kc + k] = at_a(g, i + r, k0 + k);
        float* c0 = g.c + i * g.ldc + j0;
        float* c1 = c0 + g.ldc;
        float* c2 = c1 + g.ldc;
        float* c3 = c2 + g.ldc;
        for (size_t k = 0; k < kc; k++) {
          const float* p = &panel[k * nc];
          float a0 = arow[k], a1 = arow[kc + k], a2 = arow[2 * kc + k], a3 = arow[3 * kc + k];
          for (size_t j = 0; j < nc; j++) {
            float bj = p[j];
            c0[j] += a0 * bj;
            c1[j] += a1 * bj;
            c2[j] += a2 * bj;
            c3[j] += a3 * bj;
          }
        }
      }
      for (; i < m1; i++) {
        float* c0 = g.c + i * g.ldc + j0;
        for (size_t k = 0; k < kc; k++) {
          float a0 = at_a(g, i, k0 + k);
          const float* p = &panel[k * nc];
          for (size_t j = 0; j < nc; j++) c0[j] += a0 * p[j];
        }
      }
    }
  }
}

/** Whether this build (and CPU) has path p. */
bool path_available(GemmPath p) {
  if (p == GemmPath::onednn) return dnnl_ready();
  if (p == GemmPath::avx512) return span_gemm_fp32_ready();
#ifndef SPAN_HAVE_CBLAS
  if (p == GemmPath::blas) return false;
#endif
  return true;
}

/**
 * The default path (SPAN_GEMM_PATH names another: avx512, onednn, blas, builtin): oneDNN when linked and
 * started, else span's own AVX-512 kernel where the CPU has AVX-512, else the BLAS, else the builtin
 * kernel. oneDNN first: on the quiet 2-core Zen 5 a whole base training step ran faster on it than on
 * span's kernel in every round (fp32 4-19%, bf16 1-11%) and a mini step level (bench/gemm-paths-step.mjs),
 * the single products being level (bench/gemm.mjs); span's kernel is 7-15x the builtin one where oneDNN
 * is absent (the portable bundle, a build without libdnnl).
 */
GemmPath default_path() {
  if (const char* v = std::getenv("SPAN_GEMM_PATH")) {  // a path this build and CPU have, else the default
    for (GemmPath p : {GemmPath::avx512, GemmPath::onednn, GemmPath::blas, GemmPath::builtin})
      if (std::strcmp(v, gemm_path_name(p)) == 0 && path_available(p)) return p;
  }
  if (dnnl_ready()) return GemmPath::onednn;
  if (span_gemm_fp32_ready()) return GemmPath::avx512;
#ifdef SPAN_HAVE_CBLAS
  return GemmPath::blas;
#else
  return GemmPath::builtin;
#endif
}

Precision g_precision = Precision::fp32;
GemmPath g_path = GemmPath::builtin;  // set by init_path() before the first product
bool g_path_set = false;
std::atomic<size_t> g_fallbacks{0};  // products oneDNN had no primitive for (gemm_fallbacks())

GemmPath path() {
  if (!g_path_set) {
    g_path = default_path();
    g_path_set = true;
  }
  return g_path;
}

/** The fp32 product on the BLAS when the addon has one and it is not turned off, else the builtin kernel. */
void gemm_block(const Gemm& g, size_t m0, size_t m1, size_t n0, size_t n1) {
#ifdef SPAN_HAVE_CBLAS
  if (path() != GemmPath::builtin) return blas_block(g, m0, m1, n0, n1);
#endif
  builtin_block(g, m0, m1, n0, n1);
}

/** Rows [r0, r1) × columns [c0, c1) of a row-major operand with leading dimension ld, rounded to bf16 into out. */
void round_rows(const float* x, size_t ld, size_t r0, size_t r1, size_t c0, size_t c1, std::vector<float>& out) {
  size_t w = c1 - c0;
  out.resize((r1 - r0) * w);
  for (size_t r = r0; r < r1; r++)
    for (size_t c = c0; c < c1; c++) out[(r - r0) * w + (c - c0)] = round_bf16(x[r * ld + c]);
}

/** The same block as bf16 bits (bf16.h's vectorised conversion, bit-identical to round_bf16). */
void bf16_rows(const float* x, size_t ld, size_t r0, size_t r1, size_t c0, size_t c1, std::vector<uint16_t>& out) {
  size_t w = c1 - c0;
  out.resize((r1 - r0) * w);
  for (size_t r = r0; r < r1; r++) to_bf16(x + r * ld + c0, &out[(r - r0) * w], w);
}

/**
 * The bf16 reference product: the A rows and B columns this block reads, rounded to bf16, then the
 * fp32 kernel on the copies (products of bf16 values are exact in fp32, so only the summation order
 * can differ from a bf16 dot-product instruction's).
 */
void gemm_block_bf16(const Gemm& g, size_t m0, size_t m1, size_t n0, size_t n1) {
  thread_local std::vector<float> ra, rb;
  Gemm r = g;
  // A: [M, K] rows m0..m1, or [K, M] columns m0..m1 when transA
  if (g.transA) round_rows(g.a, g.lda, 0, g.K, m0, m1, ra); else round_rows(g.a, g.lda, m0, m1, 0, g.K, ra);
  r.a = ra.data();
  r.lda = g.transA ? m1 - m0 : g.K;
  // B: [K, N] columns n0..n1, or [N, K] rows n0..n1 when transB
  if (g.transB) round_rows(g.b, g.ldb, n0, n1, 0, g.K, rb); else round_rows(g.b, g.ldb, 0, g.K, n0, n1, rb);
  r.b = rb.data();
  r.ldb = g.transB ? g.K : n1 - n0;
  r.c = g.c + m0 * g.ldc + n0;
  gemm_block(r, 0, m1 - m0, 0, n1 - n0);
}

/** One product on oneDNN: fp32 operands as they are, bf16 ones rounded from the block this call reads. */
bool dnnl_block(const Gemm& g, size_t m0, size_t m1, size_t n0, size_t n1) {
  DnnlProduct p{nullptr, nullptr, g.c + m0 * g.ldc + n0, 1, m1 - m0, n1 - n0, g.K, g.transA, g.transB, false, g.beta,
                g.lda, g.ldb, g.ldc, 0, 0, 0};
  if (g_precision == Precision::fp32) {
    p.a = g.transA ? g.a + m0 : g.a + m0 * g.lda;
    p.b = g.transB ? g.b + n0 * g.ldb : g.b + n0;
    return dnnl_matmul(p);
  }
  thread_local std::vector<uint16_t> ua, ub;
  if (g.transA) bf16_rows(g.a, g.lda, 0, g.K, m0, m1, ua); else bf16_rows(g.a, g.lda, m0, m1, 0, g.K, ua);
  if (g.transB) bf16_rows(g.b, g.ldb, n0, n1, 0, g.K, ub); else bf16_rows(g.b, g.ldb, 0, g.K, n0, n1, ub);
  p.bf16 = true;
  p.a = ua.data();
  p.b = ub.data();
  p.lda = g.transA ? m1 - m0 : g.K;
  p.ldb = g.transB ? g.K : n1 - n0;
  return dnnl_matmul(p);
}

/** Whether span's own kernel runs the products at this precision (bf16 needs the CPU's bf16 dot products). */
bool own_ready() { return g_precision == Precision::bf16 ? span_gemm_bf16_ready() : span_gemm_fp32_ready(); }
bool own_bf16() { return g_precision == Precision::bf16; }
/**
 * Whether span's kernel takes a product of depth K: not the attention's per-head products (K = the head
 * size, 64), where packing both operands costs more than the product and oneDNN's kernel (which reads
 * them in place) measured 1.3-1.5× faster (bench/gemm.mjs, attn rows); those go to oneDNN when linked.
 */
bool own_takes(size_t K) {
  static const bool all = [] {  // SPAN_GEMM_SMALL_K=avx512: span's kernel takes those too (its tests, bench/gemm.mjs)
    const char* v = std::getenv("SPAN_GEMM_SMALL_K");
    return v && std::strcmp(v, "avx512") == 0;
  }();
  return own_ready() && (K > 64 || all || !dnnl_ready());
}

/** Rows [m0, m1) × columns [n0, n1) of g as span's kernel takes a product. */
SpanProduct own_product(const Gemm& g, size_t m0, size_t m1, size_t n0, size_t n1) {
  return SpanProduct{g.transA, g.transB, m1 - m0, n1 - n0, g.K, g.transA ? g.a + m0 : g.a + m0 * g.lda, g.lda,
                     g.transB ? g.b + n0 * g.ldb : g.b + n0, g.ldb, g.c + m0 * g.ldc + n0, g.ldc, g.beta};
}

void gemm_one(const Gemm& g, size_t m0, size_t m1, size_t n0, size_t n1) {
  if (m1 <= m0 || n1 <= n0) return;
  if (g.K == 0) {
    if (g.beta != 0.0f) return;
    for (size_t i = m0; i < m1; i++) std::memset(g.c + i * g.ldc + n0, 0, (n1 - n0) * sizeof(float));
    return;
  }
  if (path() == GemmPath::avx512 && own_takes(g.K)) return span_gemm(own_product(g, m0, m1, n0, n1), own_bf16(), false);
  if (path() == GemmPath::onednn || path() == GemmPath::avx512) {  // avx512 without bf16 dot products: oneDNN's
    if (dnnl_block(g, m0, m1, n0, n1)) return;
    g_fallbacks++;
  }
  if (g_precision == Precision::bf16) return gemm_block_bf16(g, m0, m1, n0, n1);
  gemm_block(g, m0, m1, n0, n1);
}

/** Both operands of a batch product in bf16 at once (in parallel), for oneDNN's bf16 primitives. */
struct Bf16Operands {
  std::vector<uint16_t> a, b;
  void fill(const float* x, size_t n, std::vector<uint16_t>& out) {
    out.resize(n);
    parallel_for(n, 1u << 15, [&](size_t i0, size_t i1) { to_bf16(x + i0, out.data() + i0, i1 - i0); });
  }
};

/** The product on the BLAS or builtin kernel, for a part oneDNN has no primitive for. */
void fallback(const Gemm& g, size_t m0, size_t m1, size_t n0, size_t n1) {
  g_fallbacks++;
  if (g_precision == Precision::bf16) return gemm_block_bf16(g, m0, m1, n0, n1);
  gemm_block(g, m0, m1, n0, n1);
}

/** One batch product as oneDNN runs it: operands (bf16 copies or the fp32 originals) and the whole-batch product. */
struct DnnlBatch {
  DnnlProduct p;
  const char *A, *B;  // operands as oneDNN reads them
  size_t es;          // their element size
  std::function<Gemm(size_t)> entry;  // entry i on the fp32 originals, for fallback()

  /** Entries [b0, b1) as one batched primitive. */
  void entries(size_t b0, size_t b1) {
    DnnlProduct q = p;
    q.batch = b1 - b0;
    q.a = A + b0 * p.strideA * es, q.b = B + b0 * p.strideB * es, q.c = p.c + b0 * p.strideC;
    if (dnnl_matmul(q)) return;
    for (size_t i = b0; i < b1; i++) fallback(entry(i), 0, p.M, 0, p.N);
  }

  /** Rows [s0, s1) of entry i (columns when !rows). */
  void stripe(size_t i, bool rows, size_t s0, size_t s1) {
    DnnlProduct q = p;
    q.batch = 1;
    q.a = A + (i * p.strideA + (rows ? (p.transA ? s0 : s0 * p.lda) : 0)) * es;
    q.b = B + (i * p.strideB + (rows ? 0 : (p.transB ? s0 * p.ldb : s0))) * es;
    q.c = p.c + i * p.strideC + (rows ? s0 * p.ldc : s0);
    (rows ? q.M : q.N) = s1 - s0;
    if (dnnl_matmul(q)) return;
    if (rows) fallback(entry(i), s0, s1, 0, p.N); else fallback(entry(i), 0, p.M, s0, s1);
  }
};

/**
 * batch_matmul on oneDNN: chunks of whole entries as one batched primitive each (the addon's
 * pool splitting the batch), or row (column) stripes of each entry; bf16 operands converted once,
 * in parallel. A part oneDNN has no primitive for runs on fallback(), nothing written before.
 */
void dnnl_batch(const float* a, const float* b, float* c, size_t batchA, size_t batchB, size_t M, size_t N, size_t K,
                bool transA, bool transB, float beta, const std::function<Gemm(size_t)>& entry) {
  size_t batch = std::max(batchA, batchB), flops = 2 * M * N * K, threads = get_threads();
  bool bf16 = g_precision == Precision::bf16;
  thread_local Bf16Operands ops;
  if (bf16) ops.fill(a, batchA * M * K, ops.a), ops.fill(b, batchB * K * N, ops.b);
  DnnlBatch d{{nullptr, nullptr, c, batch, M, N, K, transA, transB, bf16, beta, transA ? M : K, transB ? K : N, N,
               batchA == 1 ? 0 : M * K, batchB == 1 ? 0 : K * N, M * N},
              bf16 ? (const char*)ops.a.data() : (const char*)a, bf16 ? (const char*)ops.b.data() : (const char*)b,
              bf16 ? 2u : 4u, entry};
  if (batch >= threads * 2 || batch * flops < (1u << 18)) {
    parallel_for(batch, std::max<size_t>(1, (1u << 18) / flops), [&](size_t b0, size_t b1) { d.entries(b0, b1); });
    return;
  }
  bool rows = M >= N || M >= 64 * threads;
  for (size_t i = 0; i < batch; i++)
    parallel_for(rows ? M : N, rows ? 16 : 64, [&](size_t s0, size_t s1) { d.stripe(i, rows, s0, s1); });
}

/** batch_matmul on span's kernel: whole entries per thread when there are enough, else each entry split over the pool. */
void own_batch(size_t batch, size_t M, size_t N, size_t K, const std::function<Gemm(size_t)>& entry) {
  size_t flops = 2 * M * N * K, threads = get_threads();
  if (batch >= threads * 2 || batch * flops < (1u << 18)) {
    parallel_for(batch, std::max<size_t>(1, (1u << 18) / flops), [&](size_t b0, size_t b1) {
      for (size_t i = b0; i < b1; i++) span_gemm(own_product(entry(i), 0, M, 0, N), own_bf16(), false);
    });
    return;
  }
  for (size_t i = 0; i < batch; i++) span_gemm(own_product(entry(i), 0, M, 0, N), own_bf16(), true);
}

}  // namespace

void set_gemm_precision(Precision p) { g_precision = p; }
Precision gemm_precision() { return g_precision; }

bool set_gemm_path(GemmPath p) {
  if (!path_available(p)) return false;
  g_path = p;
  g_path_set = true;
  return true;
}

GemmPath gemm_path() { return path(); }
size_t gemm_fallbacks() { return g_fallbacks; }

const char* gemm_path_name(GemmPath p) {
  switch (p) {
    case GemmPath::avx512: return "avx512";
    case GemmPath::onednn: return "onednn";
    case GemmPath::blas: return "blas";
    default: return "builtin";
  }
}

const char* gemm_description() {
  static char s[96];
  switch (path()) {
    case GemmPath::avx512:
      snprintf(s, sizeof s, "span avx512 (%s)", span_gemm_bf16_ready() ? "avx512f, avx512_bf16" : "avx512f");
      break;
    case GemmPath::onednn: snprintf(s, sizeof s, "onednn %s (%s)", dnnl_version_name(), dnnl_isa_name()); break;
    case GemmPath::blas: snprintf(s, sizeof s, "%s", blas_name()); break;
    default: snprintf(s, sizeof s, "builtin"); break;
  }
  return s;
}

const char* gemm_isa() {
  switch (path()) {
    case GemmPath::avx512: return span_gemm_bf16_ready() ? "avx512_bf16" : "avx512f";
    case GemmPath::onednn: return dnnl_isa_name();
#if defined(SPAN_BLAS_OPENBLAS)
    case GemmPath::blas: return openblas_get_corename();  // its kernel set: Haswell (AVX2), SkylakeX (AVX-512), ...
#endif
    default: break;
  }
#if defined(__AVX512F__)
  return "avx512f (compiled)";  // the builtin kernel (or another BLAS): what the compiler vectorised for
#elif defined(__AVX2__)
  return "avx2 (compiled)";
#elif defined(__ARM_NEON)
  return "neon (compiled)";
#else
  return "sse2 (compiled)";
#endif
}

float round_bf16(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) u = 0x7fff0000u;  // every NaN to the canonical one, as cvt.rn.bf16.f32
  else u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;  // ties to even; past the largest bf16 to ±inf
  float y;
  std::memcpy(&y, &u, 4);
  return y;
}

void batch_matmul(const float* a, const float* b, float* c, size_t batchA, size_t batchB, size_t M, size_t N,
                  size_t K, bool transA, bool transB, float beta) {
  size_t batch = std::max(batchA, batchB);
  if (batch == 0 || M == 0 || N == 0) return;
  auto entry = [&](size_t i) {
    return dense_gemm(a + (batchA == 1 ? 0 : i) * M * K, b + (batchB == 1 ? 0 : i) * K * N, c + i * M * N, M, N, K,
                      transA, transB, beta);
  };
  if (K > 0 && path() == GemmPath::avx512 && own_takes(K)) return own_batch(batch, M, N, K, entry);
  if (K > 0 && (path() == GemmPath::onednn || path() == GemmPath::avx512) && dnnl_ready())
    return dnnl_batch(a, b, c, batchA, batchB, M, N, K, transA, transB, beta, entry);
  size_t flops = 2 * M * N * std::max<size_t>(K, 1);
  size_t threads = get_threads();
  if (batch >= threads * 2 || batch * flops < (1u << 18)) {
    // enough independent products: one chunk of batch entries per thread
    size_t grain = std::max<size_t>(1, (1u << 18) / flops);
    parallel_for(batch, grain, [&](size_t b0, size_t b1) {
      for (size_t i = b0; i < b1; i++) gemm_one(entry(i), 0, M, 0, N);
    });
    return;
  }
  // few, large products: split each into stripes of rows (or columns when M is small)
  for (size_t i = 0; i < batch; i++) {
    Gemm g = entry(i);
    if (M >= N || M >= 64 * threads) {
      parallel_for(M, 16, [&](size_t m0, size_t m1) { gemm_one(g, m0, m1, 0, N); });
    } else {
      parallel_for(N, 64, [&](size_t n0, size_t n1) { gemm_one(g, 0, M, n0, n1); });
    }
  }
}

void gemm_ld(bool transA, bool transB, size_t M, size_t N, size_t K, const float* a, size_t lda, const float* b,
             size_t ldb, float* c, size_t ldc, float beta) {
  if (M == 0 || N == 0) return;
  gemm_one(Gemm{a, b, c, M, N, K, transA, transB, beta, lda, ldb, ldc}, 0, M, 0, N);
}

}  // namespace span
