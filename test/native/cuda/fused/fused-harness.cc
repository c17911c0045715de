// The test driver of the fused kernels (native/cuda/kernels/*.cu) on the stand-in device
// (test/native/cuda/fused/fused-kernels.test.ts): opens the libcuda and libnvrtc stand-ins of a
// folder through the prototypes of native/cuda/src/abi.h, as the cuda addon does, compiles a
// kernel file with the NVRTC stand-in, runs one scenario on random inputs and compares every
// output with a CPU reference written here in double (the formulas the .cu files cite). Prints
// one JSON object: the largest error of each output relative to that output's largest |value|,
// a digest of all output bytes (equal under every schedule for deterministic kernels) and the
// milliseconds the launches took.
//   fused-harness DIR KERNELS_DIR SCENARIO [ARGS...]
#include <dlfcn.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "abi.h"
#include "../harness-api.h"

namespace {

using Dev = SPAN_CUdeviceptr;

/** Prints the failed call as {"error"} and exits 1. */
void failed(int r, const char* call) {
  printf("{\"error\":\"%s failed (%d): %s\"}\n", call, r, A.lastError ? A.lastError() : "");
  exit(1);
}

void init() { initDevice(failed); }

/** Kernel `name` of native/cuda/kernels/FILE, compiled for sm_80 with -D defines (modules cached per file and defines). */
SPAN_CUfunction function(const std::string& file, const char* name, const std::vector<std::string>& defines = {}) {
  static std::map<std::string, SPAN_CUmodule> modules;
  std::string key = file;
  for (const auto& d : defines) key += " " + d;
  if (!modules.count(key)) {
    std::ifstream f(kernels + "/" + file);
    std::stringstream ss;
    ss << f.rdbuf();
    std::string src = ss.str(), image, log;
    SPAN_nvrtcProgram p;
    A.nvrtcCreateProgram(&p, src.c_str(), file.c_str(), 0, nullptr, nullptr);
    std::vector<const char*> opts{"--gpu-architecture=sm_80"};
    for (const auto& d : defines) opts.push_back(d.c_str());
    int r = A.nvrtcCompileProgram(p, static_cast<int>(opts.size()), opts.data());
    size_t n = 0;
    A.nvrtcGetProgramLogSize(p, &n);
    log.assign(n, '\0');
    A.nvrtcGetProgramLog(p, &log[0]);
    if (r) printf("{\"error\":\"compile %s\"}\n", file.c_str()), fprintf(stderr, "%s\n", log.c_str()), exit(1);
    A.nvrtcGetCUBINSize(p, &n);
    image.assign(n, '\0');
    A.nvrtcGetCUBIN(p, &image[0]);
    CHECK(A.cuModuleLoadData(&modules[key], image.data()));
  }
  SPAN_CUfunction fn;
  CHECK(A.cuModuleGetFunction(&fn, modules[key], name));
  return fn;
}

double launchMs = 0;

/** Launches fn on a grid (x, y, z) and a 1-D block (timed into launchMs). */
void launch(SPAN_CUfunction fn, unsigned grid, unsigned block, std::vector<void*> params, unsigned gy = 1, unsigned gz = 1) {
  auto t0 = std::chrono::steady_clock::now();
  CHECK(A.cuLaunchKernel(fn, grid, gy, gz, block, 1, 1, 0, nullptr, params.data(), nullptr));
  CHECK(A.cuCtxSynchronize());
  launchMs += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

/** A device copy of v (at least 4 bytes allocated, so empty tensors still have an address). */
template <class T>
Dev upload(const std::vector<T>& v) {
  Dev d;
  CHECK(A.cuMemAlloc_v2(&d, std::max<size_t>(4, v.size() * sizeof(T))));
  if (!v.empty()) CHECK(A.cuMemcpyHtoD_v2(d, v.data(), v.size() * sizeof(T)));
  return d;
}

Dev alloc(size_t bytes) { return upload(std::vector<char>(bytes, 0)); }

template <class T>
std::vector<T> download(Dev d, size_t n) {
  std::vector<T> v(n);
  if (n) CHECK(A.cuMemcpyDtoH_v2(v.data(), d, n * sizeof(T)));
  return v;
}

std::mt19937 rng(11);
std::vector<float> randn(size_t n, float scale = 1.0f, float shift = 0.0f) {
  std::normal_distribution<float> g(0.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = g(rng) * scale + shift;
  return v;
}

/** The outputs' errors and bytes, printed as the scenario's JSON line. */
struct Report {
  std::vector<std::pair<std::string, double>> errs;
  uint64_t hash = 1469598103934665603ull;
  std::string extra;
  /** max |out − ref| / max |ref| (or the absolute error where the reference is all zero) */
  void compare(const std::string& name, const std::vector<float>& out, const std::vector<double>& ref) {
    double scale = 0, worst = 0;
    for (double r : ref) scale = std::fmax(scale, std::fabs(r));
    for (size_t i = 0; i < out.size(); i++) worst = std::fmax(worst, std::isnan(out[i]) != std::isnan(ref[i]) ? INFINITY : std::isnan(ref[i]) ? 0 : std::fabs(out[i] - ref[i]));
    errs.emplace_back(name, scale > 0 ? worst / scale : worst);
    const auto* b = reinterpret_cast<const unsigned char*>(out.data());
    for (size_t i = 0; i < out.size() * 4; i++) hash = (hash ^ b[i]) * 1099511628211ull;
  }
  int print() {
    printf("{\"errors\":{");
    for (size_t i = 0; i < errs.size(); i++) printf("%s\"%s\":%.3g", i ? "," : "", errs[i].first.c_str(), std::isinf(errs[i].second) ? 1e300 : errs[i].second);
    printf("},\"digest\":\"%016llx\",\"ms\":%.2f%s}\n", static_cast<unsigned long long>(hash), launchMs, extra.c_str());
    return 0;
  }
};

/** layernorm.cu: forward (y, mean, rstd) and backward (dx, dg, db) of N rows of H. */
int layernorm(long long N, int H, unsigned block) {
  const float eps = 1e-12f;
  std::vector<float> x = randn(N * H, 2.0f, 0.5f), g = randn(H, 0.1f, 1.0f), b = randn(H, 0.1f), dy = randn(N * H);
  Dev dx_ = upload(x), dg_ = upload(g), db_ = upload(b), ddy = upload(dy), y = alloc(N * H * 4), mean = alloc(N * 4), rstd = alloc(N * 4);
  Dev gx = alloc(N * H * 4), gg = alloc(H * 4), gb = alloc(H * 4);
  unsigned grid = N > 0 ? std::min<long long>(N, 1000) : 1, cgrid = (H + 127) / 128 ? (H + 127) / 128 : 1;
  launch(function("layernorm.cu", "span_layernorm_forward_f32"), grid, block, {&dx_, &dg_, &db_, &y, &mean, &rstd, &N, &H, (void*)&eps});
  launch(function("layernorm.cu", "span_layernorm_backward_dx_f32"), grid, block, {&ddy, &dx_, &dg_, &mean, &rstd, &gx, &N, &H});
  launch(function("layernorm.cu", "span_layernorm_backward_params_f32"), cgrid, 128, {&ddy, &dx_, &mean, &rstd, &gg, &gb, &N, &H});
  std::vector<double> ry(N * H), rm(N), rr(N), rdx(N * H), rdg(H, 0.0), rdb(H, 0.0);
  for (long long r = 0; r < N; r++) {
    const float* xr = &x[r * H];
    double m = 0, v = 0, s1 = 0, s2 = 0;
    for (int j = 0; j < H; j++) m += xr[j];
    m /= H;
    for (int j = 0; j < H; j++) v += (xr[j] - m) * (xr[j] - m);
    double rs = 1.0 / std::sqrt(v / H + eps);
    rm[r] = m, rr[r] = rs;
    for (int j = 0; j < H; j++) {
      double xh = (xr[j] - m) * rs, u = double(dy[r * H + j]) * g[j];
      ry[r * H + j] = xh * g[j] + b[j];
      s1 += u, s2 += u * xh;
      rdg[j] += dy[r * H + j] * xh, rdb[j] += dy[r * H + j];
    }
    for (int j = 0; j < H; j++) rdx[r * H + j] = rs * (double(dy[r * H + j]) * g[j] - s1 / H - (xr[j] - m) * rs * s2 / H);
  }
  Report rep;
  rep.compare("y", download<float>(y, N * H), ry), rep.compare("mean", download<float>(mean, N), rm), rep.compare("rstd", download<float>(rstd, N), rr);
  rep.compare("dx", download<float>(gx, N * H), rdx), rep.compare("dg", download<float>(gg, H), rdg), rep.compare("db", download<float>(gb, H), rdb);
  return rep.print();
}

/**
 * cross_entropy.cu: lse, the summed loss and dlogits of N rows of C; label C (out of range) on row
 * `bad` (≥ 0) makes the loss NaN; label −1 on row `pad` (≥ 0) is a padding row: loss and dlogits 0.
 */
int crossEntropy(long long N, int C, unsigned block, long long bad, long long pad) {
  std::vector<float> x = randn(N * C, 3.0f);
  std::vector<int> labels(N);
  for (long long n = 0; n < N; n++) labels[n] = static_cast<int>((n * 7919) % C);
  if (bad >= 0 && bad < N) labels[bad] = C;
  if (pad >= 0 && pad < N) labels[pad] = -1;
  std::vector<float> dyv{0.37f};
  Dev dx = upload(x), dl = upload(labels), lse = alloc(N * 4), rows = alloc(N * 4), loss = alloc(4), dy = upload(dyv), dlog = alloc(N * C * 4);
  long long CC = C;
  launch(function("cross_entropy.cu", "span_cross_entropy_rows_f32"), N > 0 ? std::min<long long>(N, 1000) : 1, block, {&dx, &dl, &lse, &rows, &N, &C});
  launch(function("cross_entropy.cu", "span_cross_entropy_total_f32"), 1, 256, {&rows, &loss, &N});
  launch(function("cross_entropy.cu", "span_cross_entropy_backward_f32"), 64, 128, {&dx, &dl, &lse, &dy, &dlog, &N, &CC});
  std::vector<double> rl(N), rt(1, 0.0), rd(N * C);
  for (long long n = 0; n < N; n++) {
    double mx = -1e300, s = 0;
    for (int j = 0; j < C; j++) mx = std::fmax(mx, x[n * C + j]);
    for (int j = 0; j < C; j++) s += std::exp(x[n * C + j] - mx);
    rl[n] = mx + std::log(s);
    const bool padding = labels[n] == -1;
    rt[0] += padding ? 0.0 : labels[n] < 0 || labels[n] >= C ? NAN : rl[n] - x[n * C + labels[n]];
    for (int j = 0; j < C; j++) rd[n * C + j] = padding ? 0.0 : dyv[0] * (std::exp(x[n * C + j] - rl[n]) - (j == labels[n]));
  }
  Report rep;
  rep.compare("lse", download<float>(lse, N), rl), rep.compare("loss", download<float>(loss, 1), rt), rep.compare("dlogits", download<float>(dlog, N * C), rd);
  rep.extra = std::string(",\"lossIsNaN\":") + (std::isnan(download<float>(loss, 1)[0]) ? "true" : "false");
  return rep.print();
}

/** sum_squares.cu: Σ x² over tensors of the given sizes (0 allowed), then the clipping factor for maxNorm. */
int sumSquares(std::vector<long long> sizes, float maxNorm) {
  std::vector<std::vector<float>> xs;
  std::vector<Dev> ds;
  std::vector<unsigned> grids;
  long long count = 0;
  double ref = 0;
  for (long long n : sizes) {
    xs.push_back(randn(n, 0.05f));
    for (float v : xs.back()) ref += double(v) * v;
    ds.push_back(upload(xs.back()));
    grids.push_back(static_cast<unsigned>(std::max<long long>(1, std::min<long long>((n + 255) / 256, 64))));
    count += grids.back();
  }
  Dev partials = alloc(count * 8), out = alloc(4), factor = alloc(4);
  long long off = 0;
  for (size_t t = 0; t < sizes.size(); t++) {
    Dev p = partials + off * 8;
    launch(function("sum_squares.cu", "span_sum_squares_partial_f32"), grids[t], 256, {&ds[t], &sizes[t], &p});
    off += grids[t];
  }
  launch(function("sum_squares.cu", "span_sum_partials_f32"), 1, 128, {&partials, &count, &out});
  launch(function("sum_squares.cu", "span_clip_factor_f32"), 1, 1, {&out, &maxNorm, &factor});
  double norm = std::sqrt(ref), coef = maxNorm / (norm + 1e-6);
  Report rep;
  rep.compare("sumsq", download<float>(out, 1), {ref}), rep.compare("factor", download<float>(factor, 1), {coef < 1 ? coef : 1.0});
  return rep.print();
}

/** adamw.cu: one update of n elements (step t, decay wd) with the clipping factor on the device, in place. */
int adamw(long long n, int t, float wd, float scale) {
  float lr = 1e-3f, b1 = 0.9f, b2 = 0.999f, eps = 1e-8f, bc1 = 1 - std::pow(b1, t), bc2 = 1 - std::pow(b2, t);
  std::vector<float> p = randn(n), m = randn(n, 0.01f), v = randn(n, 0.001f), g = randn(n, 0.1f), s{scale};
  for (auto& x : v) x = std::fabs(x);
  Dev dp = upload(p), dm = upload(m), dv = upload(v), dg = upload(g), ds = upload(s);
  launch(function("adamw.cu", "span_adamw_f32"), 40, 128, {&dp, &dm, &dv, &dg, &dp, &dm, &dv, &n, &lr, &b1, &b2, &eps, &wd, &bc1, &bc2, &ds});
  std::vector<double> rp(n), rm(n), rv(n);
  for (long long i = 0; i < n; i++) {
    double gi = double(g[i]) * scale;
    rm[i] = b1 * double(m[i]) + (1 - double(b1)) * gi;
    rv[i] = b2 * double(v[i]) + (1 - double(b2)) * gi * gi;
    rp[i] = p[i] * (1 - double(lr) * wd) - double(lr) / bc1 * (rm[i] / (std::sqrt(rv[i] / bc2) + eps));
  }
  Report rep;
  rep.compare("p", download<float>(dp, n), rp), rep.compare("m", download<float>(dm, n), rm), rep.compare("v", download<float>(dv, n), rv);
  return rep.print();
}

uint64_t splitmix(uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/** dropout.cu against native/src/mathfn.h's mask (bit-exact: any difference is a different mask), and the kept fraction. */
int dropout(long long n, float keep, unsigned long long seed) {
  Dev dseed = upload(std::vector<unsigned long long>{seed});  // the kernels read the seed from the device (a graph replays it as data)
  std::vector<float> x = randn(n);
  Dev dx = upload(x), out = alloc(n * 4);
  launch(function("dropout.cu", "span_dropout_f32"), 50, 128, {&dx, &out, &n, &keep, &dseed});
  std::vector<double> ref(n);
  uint64_t base = splitmix(seed);
  long long kept = 0, differ = 0;
  for (long long i = 0; i < n; i++) {
    bool k = static_cast<float>(splitmix(base + i) >> 40) * (1.0f / 16777216.0f) < keep;
    kept += k;
    ref[i] = k ? x[i] * (1.0f / keep) : 0.0f;
  }
  std::vector<float> o = download<float>(out, n);
  for (long long i = 0; i < n; i++) differ += o[i] != static_cast<float>(ref[i]);
  Report rep;
  rep.compare("out", o, ref);
  rep.extra = ",\"keptFraction\":" + std::to_string(n ? double(kept) / n : 0) + ",\"bitsDiffer\":" + std::to_string(differ);
  return rep.print();
}

/** linear_backward.cu: dz = dy·gelu′(z) and db = Σ_rows dz over [rows, cols]. */
int linearBackward(long long rows, long long cols) {
  long long n = rows * cols;
  std::vector<float> dy = randn(n), z = randn(n, 2.0f);
  Dev ddy = upload(dy), dz_ = upload(z), dz = alloc(n * 4), db = alloc(cols * 4);
  launch(function("linear_backward.cu", "span_gelu_backward_f32"), 37, 128, {&ddy, &dz_, &dz, &n});
  launch(function("linear_backward.cu", "span_bias_grad_f32"), 3, 64, {&dz, &db, &rows, &cols});
  std::vector<double> rz(n), rb(cols, 0.0);
  for (long long i = 0; i < n; i++) {
    double v = z[i];
    rz[i] = dy[i] * (0.5 * (1 + std::erf(v / std::sqrt(2.0))) + v * std::exp(-0.5 * v * v) / std::sqrt(2 * M_PI));
    rb[i % cols] += rz[i];
  }
  Report rep;
  rep.compare("dz", download<float>(dz, n), rz), rep.compare("db", download<float>(db, cols), rb);
  return rep.print();
}

/** attention_softmax.cu: P = softmax(S·scale + mask) over [B, A, T, T] with padded keys, and dS from dP. */
int attention(long long B, int A, int T, unsigned block) {
  long long rows = B * A * T, n = rows * T;
  float scale = 1.0f / std::sqrt(64.0f);
  std::vector<float> s = randn(n, 8.0f), dp = randn(n), mask(B * T, 0.0f);
  for (long long b = 0; b < B; b++)
    for (int t = T - static_cast<int>(b % 3) * T / 4; t < T; t++) mask[b * T + t] = -10000.0f;  // padding as BERT's extended mask
  Dev ds = upload(s), dm = upload(mask), dP = alloc(n * 4), ddp = upload(dp), dS = alloc(n * 4);
  unsigned grid = rows > 0 ? std::min<long long>(rows, 1000) : 1;
  launch(function("attention_softmax.cu", "span_attention_softmax_f32"), grid, block, {&ds, &dm, &dP, &B, &A, &T, &scale});
  std::vector<float> P = download<float>(dP, n);
  launch(function("attention_softmax.cu", "span_attention_softmax_backward_f32"), grid, block, {&dP, &ddp, &dS, &rows, &T, &scale});
  std::vector<double> rp(n), rs(n);
  for (long long r = 0; r < rows; r++) {
    const float* mr = &mask[(r / (A * T)) * T];
    double mx = -1e300, sum = 0, dot = 0;
    for (int j = 0; j < T; j++) mx = std::fmax(mx, double(s[r * T + j]) * scale + mr[j]);
    for (int j = 0; j < T; j++) sum += std::exp(double(s[r * T + j]) * scale + mr[j] - mx);
    for (int j = 0; j < T; j++) rp[r * T + j] = std::exp(double(s[r * T + j]) * scale + mr[j] - mx) / sum;
    for (int j = 0; j < T; j++) dot += double(dp[r * T + j]) * P[r * T + j];  // the backward from the kernel's own P
    for (int j = 0; j < T; j++) rs[r * T + j] = P[r * T + j] * (dp[r * T + j] - dot) * scale;
  }
  Report rep;
  rep.compare("probs", P, rp), rep.compare("dscores", download<float>(dS, n), rs);
  return rep.print();
}

/**
 * flash_attention_forward.cu and flash_attention_backward.cu: ctx and lse, then dq, dk, dv, over
 * q, k, v [B, T, A·d] with padded keys (batch entry b pads the last (b % 3)·T/4 keys) and dropout at
 * `keep` from `seed`, against a double reference of the full [T, T] formula (native's mask bits):
 * a dropout mask that differed in one element between the passes would show in ctx or the grads.
 */
int flashAttention(long long B, int A, int T, int d, int N, float keep, unsigned long long seed) {
  Dev dseed = upload(std::vector<unsigned long long>{seed});  // the kernels read the seed from the device (a graph replays it as data)
  const long long H = static_cast<long long>(A) * d, n = B * T * H;
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  std::vector<float> q = randn(n), k = randn(n), v = randn(n), dO = randn(n), mask(B * T, 0.0f);
  for (long long b = 0; b < B; b++)
    for (int t = T - static_cast<int>(b % 3) * T / 4; t < T; t++) mask[b * T + t] = -10000.0f;
  Dev dq_ = upload(q), dk_ = upload(k), dv_ = upload(v), ddO = upload(dO), dm = upload(mask);
  Dev ctx = alloc(n * 4), lse = alloc(B * A * T * 4), gq = alloc(n * 4), gk = alloc(n * 4), gv = alloc(n * 4);
  const std::vector<std::string> defs{"-DSPAN_FA_D=" + std::to_string(d), "-DSPAN_FA_N=" + std::to_string(N)};
  const unsigned gx = static_cast<unsigned>((T + N - 1) / N);
  launch(function("flash_attention_forward.cu", "span_flash_attention_forward_f32", defs), gx, N,
         {&dq_, &dk_, &dv_, &dm, &ctx, &lse, &T, &A, (void*)&scale, &keep, &dseed}, A, B);
  launch(function("flash_attention_backward.cu", "span_flash_attention_backward_dq_f32", defs), gx, N,
         {&ddO, &dq_, &dk_, &dv_, &ctx, &dm, &lse, &gq, &T, &A, (void*)&scale, &keep, &dseed}, A, B);
  launch(function("flash_attention_backward.cu", "span_flash_attention_backward_dkdv_f32", defs), gx, N,
         {&ddO, &dq_, &dk_, &dv_, &ctx, &dm, &lse, &gk, &gv, &T, &A, (void*)&scale, &keep, &dseed}, A, B);
  std::vector<double> rc(n, 0.0), rl(B * A * T), rq(n, 0.0), rk(n, 0.0), rv(n, 0.0), P(T), z(T), dS(T);
  const uint64_t base = splitmix(seed);
  for (long long b = 0; b < B; b++)
    for (int h = 0; h < A; h++)
      for (int t = 0; t < T; t++) {
        auto at = [&](const std::vector<float>& x, int r, int c) { return double(x[(b * T + r) * H + h * d + c]); };
        double mx = -1e300, sum = 0, D = 0;
        for (int s = 0; s < T; s++) {
          double u = 0;
          for (int c = 0; c < d; c++) u += at(q, t, c) * at(k, s, c);
          P[s] = u * scale + mask[b * T + s], mx = std::fmax(mx, P[s]);
          const uint64_t i = ((static_cast<uint64_t>(b) * A + h) * T + t) * T + s;
          z[s] = keep >= 1 ? 1.0 : static_cast<float>(splitmix(base + i) >> 40) * (1.0f / 16777216.0f) < keep ? 1.0 / keep : 0.0;
        }
        for (int s = 0; s < T; s++) sum += std::exp(P[s] - mx);
        rl[(b * A + h) * T + t] = mx + std::log(sum);
        for (int s = 0; s < T; s++) P[s] = std::exp(P[s] - mx) / sum;
        double* c0 = &rc[(b * T + t) * H + h * d];
        for (int s = 0; s < T; s++)
          for (int c = 0; c < d; c++) c0[c] += P[s] * z[s] * at(v, s, c);
        for (int s = 0; s < T; s++) {
          double dp = 0;
          for (int c = 0; c < d; c++) dp += at(dO, t, c) * at(v, s, c);
          dS[s] = dp * z[s], D += dS[s] * P[s];
        }
        for (int s = 0; s < T; s++) {
          dS[s] = P[s] * (dS[s] - D) * scale;
          for (int c = 0; c < d; c++) {
            rq[(b * T + t) * H + h * d + c] += dS[s] * at(k, s, c);
            rk[(b * T + s) * H + h * d + c] += dS[s] * at(q, t, c);
            rv[(b * T + s) * H + h * d + c] += P[s] * z[s] * at(dO, t, c);
          }
        }
      }
  Report rep;
  rep.compare("ctx", download<float>(ctx, n), rc), rep.compare("lse", download<float>(lse, B * A * T), rl);
  rep.compare("dq", download<float>(gq, n), rq), rep.compare("dk", download<float>(gk, n), rk), rep.compare("dv", download<float>(gv, n), rv);
  return rep.print();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) return fprintf(stderr, "usage: fused-harness DIR KERNELS_DIR SCENARIO [ARGS...]\n"), 2;
  load(argv[1]);
  kernels = argv[2];
  std::string s = argv[3];
  auto arg = [&](int i, double d) { return argc > 4 + i ? atof(argv[4 + i]) : d; };
  init();
  if (s == "layernorm") return layernorm(arg(0, 37), arg(1, 300), arg(2, 128));
  if (s == "cross-entropy") return crossEntropy(arg(0, 37), arg(1, 1001), arg(2, 128), arg(3, -1), arg(4, -1));
  if (s == "sum-squares") {
    std::vector<long long> sizes;
    for (int i = 5; i < argc; i++) sizes.push_back(atoll(argv[i]));
    return sumSquares(sizes, arg(0, 1.0));
  }
  if (s == "adamw") return adamw(arg(0, 1001), arg(1, 3), arg(2, 0.01), arg(3, 0.5));
  if (s == "dropout") return dropout(arg(0, 10007), arg(1, 0.9), static_cast<unsigned long long>(arg(2, 42)));
  if (s == "linear-backward") return linearBackward(arg(0, 37), arg(1, 300));
  if (s == "flash-attention")
    return flashAttention(arg(0, 2), arg(1, 2), arg(2, 37), arg(3, 16), arg(4, 32), arg(5, 1), static_cast<unsigned long long>(arg(6, 42)));
  if (s == "attention") return attention(arg(0, 3), arg(1, 2), arg(2, 37), arg(3, 64));
  printf("{\"error\":\"unknown scenario %s\"}\n", s.c_str());
  return 2;
}
