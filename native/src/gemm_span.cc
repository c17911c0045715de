// span's own matrix products for AVX-512 CPUs (issue 32: the products at the machine's peak). The
// structure is Goto and van de Geijn's ("Anatomy of High-Performance Matrix Multiplication", ACM TOMS
// 34(3), 2008, §4-§6; docs/algorithms.md#the-cpu-matrix-products): B packed once per product in panels
// of 32 columns (shared by the pool's threads), A packed a block of rows at a time as 12-row tiles
// (or, stored transposed, all at once), and one register-blocked microkernel per precision that keeps
// a 12 × 32 tile of C in 24 zmm accumulators while it runs over up to 1024 k units:
//   fp32: per k two vector loads of the B panel and 12 broadcasts of the A tile, 24 FMAs;
//   bf16: the same over k pairs with vdpbf16ps: A and B rounded to bf16 as they are packed (bf16.h's
//         round16: the bits of round_bf16), B as [k/2][32] pair words, A's (k, k+1) pairs broadcast.
// The products are exact in fp32 (fp32 FMA; bf16 × bf16 fits fp32's mantissa); what differs from
// the reference kernels is only the order of the sums (and vdpbf16ps' flush of bf16 subnormals, as on
// oneDNN's bf16 kernels: docs/precision.md).
#include "gemm_span.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <utility>

#include "bf16.h"
#include "pool.h"

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#define SPAN_GEMM_X86 1
#endif

namespace span {

#ifdef SPAN_GEMM_X86
namespace {

#define SPAN_AVX512 __attribute__((target("avx512f")))
#define SPAN_AVX512BF16 __attribute__((target("avx512f,avx512bw,avx512bf16")))
#define SPAN_AVX512BW __attribute__((target("avx512f,avx512bw,avx512vl")))
#define SPAN_INLINE inline __attribute__((always_inline))

constexpr size_t kMr = 12;   // rows of the C tile
constexpr size_t kNr = 32;   // columns of the C tile: two zmm
// Blocks chosen by measurement (bench/gemm.mjs's shapes, one core of a Zen 5 EPYC): up to 1024 k units
// at once (a training step's products at H = 768 load and store each C tile once, as brgemm's batch
// reduce), so a panel's block (≤ 1024 × 32 words: 128 KiB) and A's block (≥ 48 rows) stream from L2.
constexpr size_t kAblock = 48 * 1024 * 4;  // bytes of packed A per block: 48 rows at 1024 k units (fewer k, more rows)
constexpr size_t kKc = 1024;               // k units (fp32 elements, bf16 pairs) per block
// Products of at most this many rows (the MLM decoder's [masked tokens, 30522] ones) split over the
// panels of B, each thread taking all the rows in one block, so that every thread streams only its half
// of B (94 MB in fp32 for the decoder), once: +13-34% on them, A/B interleaved, 2 threads.
constexpr size_t kSmallM = 192;
// How far ahead on each row the transposing packers prefetch, in 32-bit elements (512 bytes: measured
// against 256 and 1024 bytes on bench/gemm.mjs's base shapes, +3-4% on a product against none).
constexpr size_t kAhead = 128;

/** A 64-byte aligned scratch buffer that grows and is kept (one per thread, per role). */
struct Scratch {
  void* p = nullptr;
  size_t bytes = 0;
  void* get(size_t n) {
    if (n > bytes) {
      std::free(p);
      bytes = (n + 63) / 64 * 64;
      p = std::aligned_alloc(64, bytes);
    }
    return p;
  }
  ~Scratch() { std::free(p); }
};

/** What a microkernel writes: C's tile (rows < mr, columns by the masks), and whether it adds to C. */
struct Tile {
  float* c;
  size_t ldc;
  size_t mr;
  bool acc;
  __mmask16 m0, m1;
  bool full;  // all 32 columns (m0 = m1 = all)
};

/** The finished tile into C; the rows past mr (zero rows of packed A) are dropped. */
SPAN_AVX512 SPAN_INLINE void store_tile(const __m512 (&c0)[kMr], const __m512 (&c1)[kMr], const Tile& t) {
#pragma GCC unroll 12
  for (size_t i = 0; i < kMr; i++) {
    if (i >= t.mr) break;
    float* row = t.c + i * t.ldc;
    __m512 v0 = c0[i], v1 = c1[i];
    if (t.full) {  // plain loads and stores: masked ones are slow on some CPUs (AMD Zen 4 and 5)
      if (t.acc) v0 = _mm512_add_ps(v0, _mm512_loadu_ps(row)), v1 = _mm512_add_ps(v1, _mm512_loadu_ps(row + 16));
      _mm512_storeu_ps(row, v0);
      _mm512_storeu_ps(row + 16, v1);
      continue;
    }
    if (t.acc) {
      v0 = _mm512_add_ps(v0, _mm512_maskz_loadu_ps(t.m0, row));
      v1 = _mm512_add_ps(v1, _mm512_maskz_loadu_ps(t.m1, row + 16));
    }
    _mm512_mask_storeu_ps(row, t.m0, v0);
    _mm512_mask_storeu_ps(row + 16, t.m1, v1);
  }
}

/** The C tile's lines on their way to L1 while the tile is computed (its rows are ldc apart: else a miss each). */
SPAN_INLINE void prefetch_tile(const Tile& t) {
  for (size_t i = 0; i < t.mr; i++) {
    _mm_prefetch(reinterpret_cast<const char*>(t.c + i * t.ldc), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(t.c + i * t.ldc + 16), _MM_HINT_T0);
  }
}

/** fp32 microkernel: C[12, 32] (+)= Ap[kc][12]ᵀ · Bp[kc][32], both packed (12 and 32 floats per k). */
SPAN_AVX512 void ukr_f32(size_t kc, const float* ap, const float* bp, const Tile& t) {
  __m512 c0[kMr], c1[kMr];  // [12, 32]
#pragma GCC unroll 12
  for (size_t i = 0; i < kMr; i++) c0[i] = c1[i] = _mm512_setzero_ps();
  prefetch_tile(t);
  for (size_t k = 0; k < kc; k++, ap += kMr, bp += kNr) {
    const __m512 b0 = _mm512_load_ps(bp), b1 = _mm512_load_ps(bp + 16);
#pragma GCC unroll 12
    for (size_t i = 0; i < kMr; i++) {
      const __m512 ai = _mm512_set1_ps(ap[i]);
      c0[i] = _mm512_fmadd_ps(ai, b0, c0[i]);
      c1[i] = _mm512_fmadd_ps(ai, b1, c1[i]);
    }
  }
  store_tile(c0, c1, t);
}

/** bf16 microkernel: the same over kc2 k pairs; Ap and Bp hold bf16 (k, k+1) pairs as 32-bit words. */
SPAN_AVX512BF16 void ukr_bf16(size_t kc2, const uint32_t* ap, const uint32_t* bp, const Tile& t) {
  __m512 c0[kMr], c1[kMr];  // [12, 32]
#pragma GCC unroll 12
  for (size_t i = 0; i < kMr; i++) c0[i] = c1[i] = _mm512_setzero_ps();
  prefetch_tile(t);
  for (size_t k = 0; k < kc2; k++, ap += kMr, bp += kNr) {
    const __m512bh b0 = (__m512bh)_mm512_load_si512(bp), b1 = (__m512bh)_mm512_load_si512(bp + 16);
#pragma GCC unroll 12
    for (size_t i = 0; i < kMr; i++) {
      const __m512bh ai = (__m512bh)_mm512_set1_epi32((int)ap[i]);
      c0[i] = _mm512_dpbf16_ps(c0[i], ai, b0);
      c1[i] = _mm512_dpbf16_ps(c1[i], ai, b1);
    }
  }
  store_tile(c0, c1, t);
}

/** permutex2var indices of transpose16's stages: kSwap[s][0] keeps the low block, [1] the high (d = 8 >> s). */
struct SwapIndex {
  alignas(64) int32_t v[4][2][16];
  SwapIndex() {
    for (int s = 0, d = 8; s < 4; s++, d /= 2)
      for (int l = 0; l < 16; l++) {
        v[s][0][l] = (l & d) ? 16 + (l - d) : l;
        v[s][1][l] = (l & d) ? 16 + l : l + d;
      }
  }
};
const SwapIndex kSwap;

/**
 * 16 × 16 transpose of 32-bit lanes in four block-swap stages (d = 8, 4, 2, 1): rows i and i + d
 * exchange their off-diagonal d-wide blocks, so after every level r[k][j] holds the old r[j][k].
 */
SPAN_AVX512 SPAN_INLINE void transpose16(__m512i (&r)[16]) {
#pragma GCC unroll 4
  for (int s = 0; s < 4; s++) {
    const int d = 8 >> s;
    const __m512i lo = _mm512_load_si512(kSwap.v[s][0]), hi = _mm512_load_si512(kSwap.v[s][1]);
#pragma GCC unroll 16
    for (int i = 0; i < 16; i++) {
      if (i & d) continue;
      const __m512i x = r[i], y = r[i + d];
      r[i] = _mm512_permutex2var_epi32(x, lo, y);
      r[i + d] = _mm512_permutex2var_epi32(x, hi, y);
    }
  }
}

/**
 * dst[k·ldd + j] = src[j·ld + k] for j < w rows, k < K 32-bit words; lanes j in [w, width) are zero.
 * width is 32 (a B panel: ldd 32) or 12 (an A tile: ldd 12). src: B stored [N, K], A [M, K], or bf16 pairs of such rows.
 */
SPAN_AVX512 void pack_transposed(const uint32_t* src, size_t ld, size_t K, size_t w, size_t width, uint32_t* dst,
                                 size_t ldd, bool stream = false) {
  for (size_t j0 = 0; j0 < width; j0 += 16) {
    const size_t jn = std::min<size_t>(16, width - j0);
    const __mmask16 store = (__mmask16)((1u << jn) - 1);
    for (size_t k0 = 0; k0 < K; k0 += 16) {
      const size_t kn = std::min<size_t>(16, K - k0);
      const __mmask16 mask = (__mmask16)((1u << kn) - 1);
      __m512i r[16];
      for (size_t j = 0; j < 16 && j0 + j < w; j++)  // 512 bytes ahead on each row: the loads waited on memory
        _mm_prefetch(reinterpret_cast<const char*>(src + (j0 + j) * ld + k0 + kAhead), _MM_HINT_T0);
      for (size_t j = 0; j < 16; j++)
        r[j] = j0 + j < w ? _mm512_maskz_loadu_epi32(mask, src + (j0 + j) * ld + k0) : _mm512_setzero_si512();
      transpose16(r);
      if (stream && jn == 16)
        for (size_t k = 0; k < kn; k++) _mm512_stream_si512(reinterpret_cast<__m512i*>(dst + (k0 + k) * ldd + j0), r[k]);
      else if (jn == 16)
        for (size_t k = 0; k < kn; k++) _mm512_storeu_si512(dst + (k0 + k) * ldd + j0, r[k]);
      else
        for (size_t k = 0; k < kn; k++) _mm512_mask_storeu_epi32(dst + (k0 + k) * ldd + j0, store, r[k]);
    }
  }
}

/** dst[k·ldd + j] = src[k·ld + j] for j < w, zero for j in [w, width): B stored [K, N], A stored [K, M]. */
SPAN_AVX512 void pack_rows(const uint32_t* src, size_t ld, size_t K, size_t w, size_t width, uint32_t* dst, size_t ldd) {
  const __mmask16 l0 = (__mmask16)((1u << std::min<size_t>(w, 16)) - 1);
  const __mmask16 l1 = (__mmask16)((1u << (w > 16 ? std::min<size_t>(w - 16, 16) : 0)) - 1);
  const __mmask16 s0 = (__mmask16)((1u << std::min<size_t>(width, 16)) - 1);
  const __mmask16 s1 = (__mmask16)((1u << (width > 16 ? width - 16 : 0)) - 1);
  for (size_t k = 0; k < K; k++) {
    const uint32_t* x = src + k * ld;
    _mm512_mask_storeu_epi32(dst + k * ldd, s0, _mm512_maskz_loadu_epi32(l0, x));
    if (s1) _mm512_mask_storeu_epi32(dst + k * ldd + 16, s1, _mm512_maskz_loadu_epi32(l1, x + 16));
  }
}

/** 32 floats (pairs k, k+1 of a row) as 16 bf16 pair words, rounded as round_bf16. */
SPAN_AVX512BW SPAN_INLINE __m512i pairs32(const float* x, __mmask16 m0, __mmask16 m1) {
  const __m256i lo = round16(_mm512_maskz_loadu_ps(m0, x)), hi = round16(_mm512_maskz_loadu_ps(m1, x + 16));
  return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
}

/**
 * pack_transposed from fp32 rows, converting on the way: dst[kk·ldd + j] = the bf16 pair (src[j][2kk],
 * src[j][2kk+1]) for j < w rows, kk < ceil(K/2); a missing odd element and lanes j ≥ w are zero.
 */
SPAN_AVX512BW void pack_transposed_bf16(const float* src, size_t ld, size_t K, size_t w, size_t width, uint32_t* dst,
                                        size_t ldd, bool stream = false) {
  const size_t units = (K + 1) / 2;
  for (size_t j0 = 0; j0 < width; j0 += 16) {
    const __mmask16 store = (__mmask16)((1u << std::min<size_t>(16, width - j0)) - 1);
    for (size_t k0 = 0; k0 < units; k0 += 16) {  // 16 pairs: 32 floats of each row
      const size_t kn = std::min<size_t>(16, units - k0), f = std::min<size_t>(32, K - 2 * k0);
      const __mmask16 m0 = (__mmask16)((1u << std::min<size_t>(16, f)) - 1);
      const __mmask16 m1 = (__mmask16)((1u << (f > 16 ? f - 16 : 0)) - 1);
      __m512i r[16];
      for (size_t j = 0; j < 16 && j0 + j < w; j++) {  // 512 bytes ahead on each row: the loads waited on memory
        _mm_prefetch(reinterpret_cast<const char*>(src + (j0 + j) * ld + 2 * k0 + kAhead), _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char*>(src + (j0 + j) * ld + 2 * k0 + kAhead + 16), _MM_HINT_T0);
      }
      for (size_t j = 0; j < 16; j++)
        r[j] = j0 + j < w ? pairs32(src + (j0 + j) * ld + 2 * k0, m0, m1) : _mm512_setzero_si512();
      transpose16(r);
      if (stream && store == 0xffff)
        for (size_t k = 0; k < kn; k++) _mm512_stream_si512(reinterpret_cast<__m512i*>(dst + (k0 + k) * ldd + j0), r[k]);
      else
        for (size_t k = 0; k < kn; k++) _mm512_mask_storeu_epi32(dst + (k0 + k) * ldd + j0, store, r[k]);
    }
  }
}

/**
 * bf16 pairs of rows, converted on the way: dst[kk·ldd + j] = bf16(src[2kk][j]) | bf16(src[2kk+1][j]) << 16
 * for j < w, kk < ceil(K/2); a missing odd row and columns w..pad are zero. src: fp32 [K, ·], leading ld.
 */
SPAN_AVX512BW void pack_pairs_f32(const float* src, size_t ld, size_t K, size_t w, size_t pad, uint32_t* dst, size_t ldd) {
  for (size_t kk = 0; kk < (K + 1) / 2; kk++) {
    const float* r0 = src + 2 * kk * ld;
    const float* r1 = 2 * kk + 1 < K ? r0 + ld : nullptr;
    for (size_t j0 = 0; j0 < pad; j0 += 16) {
      const __mmask16 m = (__mmask16)((1u << (j0 < w ? std::min<size_t>(16, w - j0) : 0)) - 1);
      const __m512i l = _mm512_cvtepu16_epi32(round16(_mm512_maskz_loadu_ps(m, r0 + j0)));
      const __m512i h = r1 ? _mm512_cvtepu16_epi32(round16(_mm512_maskz_loadu_ps(m, r1 + j0))) : _mm512_setzero_si512();
      const __mmask16 store = (__mmask16)((1u << std::min<size_t>(16, pad - j0)) - 1);
      _mm512_mask_storeu_epi32(dst + kk * ldd + j0, store, _mm512_or_si512(l, _mm512_slli_epi32(h, 16)));
    }
  }
}

using Each = std::function<void(size_t, size_t, const std::function<void(size_t, size_t)>&)>;

/** A product as the kernel runs it: B packed; A packed a block at a time, or (transA) all at once. */
struct Run {
  const SpanProduct& p;
  bool bf16;
  size_t units;            // k units: K (fp32) or ceil(K / 2) pairs (bf16)
  size_t panels;           // ceil(N / 32)
  const uint32_t* bp;      // packed B: [panels][units][32] words
  const uint32_t* tiles;   // transA: packed A, [tiles][units][12] words; else null
};

/**
 * B stored [N, K]: panel q (B's rows 32q..32q + 31) packed into dst, [units][32] words. The whole packed
 * B is written with streaming stores (here and in pack_b_unit): read by every thread after the join, it
 * is better in memory than as dirty lines in the packing core's L2 (+2-3% on base's products, 2 threads).
 */
void pack_panel(const Run& r, size_t q, uint32_t* dst) {
  const SpanProduct& p = r.p;
  const size_t j0 = q * kNr, w = std::min(kNr, p.N - j0);
  if (r.bf16) return pack_transposed_bf16(p.b + j0 * p.ldb, p.ldb, p.K, w, kNr, dst, kNr, true);
  pack_transposed(reinterpret_cast<const uint32_t*>(p.b) + j0 * p.ldb, p.ldb, p.K, w, kNr, dst, kNr, true);
}

/** 16 bf16 pair words: (x0[j], x1[j]) for 16 columns, rounded as round_bf16 (x1 null: an odd K's last row, zero). */
SPAN_AVX512BW SPAN_INLINE __m512i pair_words(const float* x0, const float* x1) {
  const __m512i l = _mm512_cvtepu16_epi32(round16(_mm512_loadu_ps(x0)));
  if (!x1) return l;
  return _mm512_or_si512(l, _mm512_slli_epi32(_mm512_cvtepu16_epi32(round16(_mm512_loadu_ps(x1))), 16));
}

/**
 * B stored [K, N]: k unit u of the first `full` panels (all 32 columns present), without masks: fp32
 * B's row u, bf16 rows 2u and 2u + 1 paired. A tenth of a product's time at [1024, 3072]·[3072, 768]
 * went to the masked per-panel path before (bench/gemm.mjs's ffn dx).
 */
SPAN_AVX512BW void pack_b_unit(const Run& r, size_t u, size_t full, uint32_t* bp) {
  const SpanProduct& p = r.p;
  uint32_t* dst = bp + u * kNr;
  const size_t step = r.units * kNr;  // words between panels
  if (!r.bf16) {
    const float* x = p.b + u * p.ldb;
    for (size_t q = 0; q < full; q++, x += kNr, dst += step) {
      _mm512_stream_si512(reinterpret_cast<__m512i*>(dst), _mm512_castps_si512(_mm512_loadu_ps(x)));
      _mm512_stream_si512(reinterpret_cast<__m512i*>(dst + 16), _mm512_castps_si512(_mm512_loadu_ps(x + 16)));
    }
    return;
  }
  const float* x0 = p.b + 2 * u * p.ldb;
  const float* x1 = 2 * u + 1 < p.K ? x0 + p.ldb : nullptr;
  for (size_t q = 0; q < full; q++, dst += step) {
    const size_t j = q * kNr;
    _mm512_stream_si512(reinterpret_cast<__m512i*>(dst), pair_words(x0 + j, x1 ? x1 + j : nullptr));
    _mm512_stream_si512(reinterpret_cast<__m512i*>(dst + 16), pair_words(x0 + j + 16, x1 ? x1 + j + 16 : nullptr));
  }
}

/** B stored [K, N]: k units [u0, u1) of every panel, B's rows read once each in order (not a page per row per panel). */
void pack_b_rows(const Run& r, size_t u0, size_t u1, uint32_t* bp) {
  const SpanProduct& p = r.p;
  const size_t full = p.N / kNr;
  for (size_t u = u0; u < u1; u++) {
    pack_b_unit(r, u, full, bp);
    for (size_t q = full; q < r.panels; q++) {  // the last panel, partly filled
      const size_t j0 = q * kNr, w = std::min(kNr, p.N - j0);
      uint32_t* dst = bp + (q * r.units + u) * kNr;
      if (r.bf16) pack_pairs_f32(p.b + 2 * u * p.ldb + j0, p.ldb, std::min<size_t>(2, p.K - 2 * u), w, kNr, dst, kNr);
      else pack_rows(reinterpret_cast<const uint32_t*>(p.b) + u * p.ldb + j0, p.ldb, 1, w, kNr, dst, kNr);
    }
  }
}

/**
 * A stored [K, M] (transA): the whole of A packed once as 12-row tiles, [tiles][units][12] words (bf16:
 * rows 2kk and 2kk + 1 paired as they are converted), reading A's rows in order: a column block of A
 * per tile would touch a page per k-row, A's row stride being M.
 */
SPAN_AVX512BW void prepack_a_rows(const Run& r, size_t u0, size_t u1, uint32_t* dst) {
  const SpanProduct& p = r.p;
  constexpr size_t kRows = 8;  // k units per pass: each tile takes 8 × 48 contiguous bytes (tiles lie units × 48 B apart)
  for (size_t ub = u0; ub < u1; ub += kRows)
    for (size_t i = 0; i < p.M; i += kMr) {
      const __mmask16 m = (__mmask16)((1u << std::min(kMr, p.M - i)) - 1);
      for (size_t u = ub; u < std::min(ub + kRows, u1); u++) {
        const float* r0 = p.a + (r.bf16 ? 2 * u : u) * p.lda + i;
        __m512i w = _mm512_maskz_loadu_epi32(m, r0);
        if (r.bf16) {
          const __m512i h = 2 * u + 1 < p.K ? _mm512_cvtepu16_epi32(round16(_mm512_maskz_loadu_ps(m, r0 + p.lda)))
                                            : _mm512_setzero_si512();
          w = _mm512_or_si512(_mm512_cvtepu16_epi32(round16(_mm512_castsi512_ps(w))), _mm512_slli_epi32(h, 16));
        }
        _mm512_mask_storeu_epi32(dst + ((i / kMr) * r.units + u) * kMr, 0x0fff, w);
      }
    }
}

/** A's block (rows [ic, ie), k units [pc, pc + kc)) packed as 12-row tiles: [tile][kc][12] words, zero rows past ie. */
void pack_a(const Run& r, size_t ic, size_t ie, size_t pc, size_t kc, uint32_t* dst) {
  const SpanProduct& p = r.p;
  for (size_t i = ic; i < ie; i += kMr) {
    const size_t mr = std::min(kMr, ie - i);
    if (r.bf16)  // A [M, K] fp32: rows' k pairs [2pc, 2(pc + kc)) converted as they are packed
      pack_transposed_bf16(p.a + i * p.lda + 2 * pc, p.lda, std::min(2 * kc, p.K - 2 * pc), mr, kMr, dst + (i - ic) * kc,
                           kMr);
    else
      pack_transposed(reinterpret_cast<const uint32_t*>(p.a) + i * p.lda + pc, p.lda, kc, mr, kMr, dst + (i - ic) * kc,
                      kMr);
  }
}

/** B's panel q, k units [pc, pc + kc) only, into dst ([kc][32] words): a product that packs B as it goes. */
SPAN_AVX512BW void pack_panel_block(const Run& r, size_t q, size_t pc, size_t kc, uint32_t* dst) {
  const SpanProduct& p = r.p;
  const size_t j0 = q * kNr, w = std::min(kNr, p.N - j0);
  const uint32_t* b32 = reinterpret_cast<const uint32_t*>(p.b);
  const size_t floats = r.bf16 ? std::min(2 * kc, p.K - 2 * pc) : kc;  // B's k rows (or columns) in the block
  if (p.transB && r.bf16) return pack_transposed_bf16(p.b + j0 * p.ldb + 2 * pc, p.ldb, floats, w, kNr, dst, kNr);
  if (p.transB) return pack_transposed(b32 + j0 * p.ldb + pc, p.ldb, kc, w, kNr, dst, kNr);
  if (w < kNr && r.bf16) return pack_pairs_f32(p.b + 2 * pc * p.ldb + j0, p.ldb, floats, w, kNr, dst, kNr);
  if (w < kNr) return pack_rows(b32 + pc * p.ldb + j0, p.ldb, kc, w, kNr, dst, kNr);
  for (size_t u = 0; u < kc; u++, dst += kNr) {  // a full panel: no masks
    const size_t k = r.bf16 ? 2 * (pc + u) : pc + u;
    const float* x0 = p.b + k * p.ldb + j0;
    if (!r.bf16) {
      _mm512_store_si512(dst, _mm512_castps_si512(_mm512_loadu_ps(x0)));
      _mm512_store_si512(dst + 16, _mm512_castps_si512(_mm512_loadu_ps(x0 + 16)));
      continue;
    }
    const float* x1 = k + 1 < p.K ? x0 + p.ldb : nullptr;
    _mm512_store_si512(dst, pair_words(x0, x1));
    _mm512_store_si512(dst + 16, pair_words(x0 + 16, x1 ? x1 + 16 : nullptr));
  }
}

/** Rows [i0, i1) of C × panels [q0, q1): A's row blocks, K blocks (A packed), panels, then 12-row tiles. */
void compute(const Run& r, size_t i0, size_t i1, size_t q0, size_t q1) {
  const SpanProduct& p = r.p;
  thread_local Scratch sa;
  size_t mc = std::max<size_t>(1, kAblock / (std::min(kKc, r.units) * 4 * kMr)) * kMr;  // rows per block
  if (i1 - i0 <= kSmallM) mc = (i1 - i0 + kMr - 1) / kMr * kMr;  // a few rows: one block, B streamed once
  uint32_t* ap = static_cast<uint32_t*>(sa.get((mc + kMr) * std::min(kKc, r.units) * 4));
  for (size_t ic = i0; ic < i1; ic += mc) {
    const size_t ie = std::min(ic + mc, i1);
    for (size_t pc = 0; pc < r.units; pc += kKc) {
      const size_t kc = std::min(kKc, r.units - pc);
      if (!r.tiles) pack_a(r, ic, ie, pc, kc, ap);
      for (size_t q = q0; q < q1; q++) {
        const size_t w = std::min(kNr, p.N - q * kNr);
        Tile t{nullptr, p.ldc, 0, pc > 0 || p.beta != 0.0f, (__mmask16)((1u << std::min<size_t>(w, 16)) - 1),
               (__mmask16)((1u << (w > 16 ? w - 16 : 0)) - 1), w == kNr};
        const uint32_t* bq = r.bp ? r.bp + (q * r.units + pc) * kNr : nullptr;
        if (!bq) {  // B packed as it goes: this block of the panel is used here only
          thread_local Scratch sq;
          uint32_t* own = static_cast<uint32_t*>(sq.get(kc * kNr * 4));
          pack_panel_block(r, q, pc, kc, own);
          bq = own;
        }
        for (size_t i = ic; i < ie; i += kMr) {
          t.c = p.c + i * p.ldc + q * kNr, t.mr = std::min(kMr, ie - i);
          const uint32_t* at = r.tiles ? r.tiles + ((i / kMr) * r.units + pc) * kMr : ap + (i - ic) * kc;
          if (r.bf16) ukr_bf16(kc, at, bq, t);
          else ukr_f32(kc, reinterpret_cast<const float*>(at), reinterpret_cast<const float*>(bq), t);
        }
      }
    }
  }
}

}  // namespace

bool span_gemm_fp32_ready() { return cpu_has_avx512(); }
bool span_gemm_bf16_ready() { return cpu_has_avx512_bf16(); }

void span_gemm(const SpanProduct& p, bool bf16, bool parallel) {
  if (p.M == 0 || p.N == 0) return;
  if (p.K == 0) {
    if (p.beta == 0.0f)
      for (size_t i = 0; i < p.M; i++) std::memset(p.c + i * p.ldc, 0, p.N * sizeof(float));
    return;
  }
  thread_local Scratch sb;
  Run r{p, bf16, bf16 ? (p.K + 1) / 2 : p.K, (p.N + kNr - 1) / kNr, nullptr, nullptr};
  const size_t threads = parallel ? (size_t)get_threads() : 1;
  const Each each = [&](size_t n, size_t grain, const std::function<void(size_t, size_t)>& fn) {
    if (threads > 1) parallel_for(n, grain, fn); else fn(0, n);
  };
  const size_t tiles = (p.M + kMr - 1) / kMr;
  const bool by_panels = threads > 1 && (tiles < 4 * threads || p.M <= kSmallM) && r.panels >= threads;
  // A few rows, each thread with all of them (one block): every block of B's panels is used once, so it
  // is packed where it is used, in L1/L2, not written to memory whole and read back (94 MB each way
  // for the decoder's [145, 768]·[768, 30522]).
  const bool as_it_goes = p.M <= kSmallM && (threads == 1 || by_panels);
  uint32_t* bp = as_it_goes ? nullptr : static_cast<uint32_t*>(sb.get(r.panels * r.units * kNr * 4));
  if (bp && p.transB)
    each(r.panels, 1, [&](size_t q0, size_t q1) {
      for (size_t q = q0; q < q1; q++) pack_panel(r, q, bp + q * r.units * kNr);
      _mm_sfence();  // the streaming stores, seen by the other threads after the join
    });
  else if (bp)
    each(r.units, 16, [&](size_t u0, size_t u1) {
      pack_b_rows(r, u0, u1, bp);
      _mm_sfence();
    });
  r.bp = bp;
  if (p.transA) {
    thread_local Scratch st;
    uint32_t* t = static_cast<uint32_t*>(st.get(tiles * r.units * kMr * 4));
    each(r.units, 16, [&](size_t u0, size_t u1) { prepack_a_rows(r, u0, u1, t); });
    r.tiles = t;
  }
  if (by_panels)  // each thread streams half of B
    return parallel_for(r.panels, 1, [&](size_t q0, size_t q1) { compute(r, 0, p.M, q0, q1); });
  each(tiles, 1, [&](size_t t0, size_t t1) { compute(r, t0 * kMr, std::min(t1 * kMr, p.M), 0, r.panels); });
}

#else
bool span_gemm_fp32_ready() { return false; }
bool span_gemm_bf16_ready() { return false; }
void span_gemm(const SpanProduct&, bool, bool) {}
#endif

}  // namespace span
