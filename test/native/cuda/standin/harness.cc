// The test driver of the CUDA stand-ins (test/native/cuda/standin/standins.test.ts): opens
// libcuda.so.1 and libnvrtc.so.13 of a folder with dlopen and calls them through the
// prototypes of native/cuda/src/abi.h, as the cuda addon does; compiles a kernel file of
// kernels/ with the NVRTC stand-in, runs one scenario and prints one JSON object.
//   harness DIR SCENARIO KERNELS_DIR [ARGS...]
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "abi.h"
#include "../harness-api.h"

namespace {

std::string json(const std::string& s) {
  std::string o = "\"";
  for (char c : s) o += c == '"' ? "\\\"" : c == '\\' ? "\\\\" : c == '\n' ? "\\n" : c == '\t' ? " " : std::string(1, c);
  return o + "\"";
}

std::string errName(int r) {
  const char* s = nullptr;
  A.cuGetErrorName(r, &s);
  return s ? s : std::to_string(r);
}

/** Prints the failed call as {"error", "at"} and exits 1. */
void failed(int r, const char* call) {
  printf("{\"error\":%s,\"at\":%s}\n", json(errName(r)).c_str(), json(call).c_str());
  exit(1);
}

void init() { initDevice(failed); }

std::string readFile(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

/** Compiles kernels/FILE with the NVRTC stand-in; the result code, the log, and the image (CUBIN, or PTX when ptx). */
int compile(const std::string& file, std::vector<const char*> opts, std::string& log, std::string& image, bool ptx = false) {
  std::string src = readFile(kernels + "/" + file);
  SPAN_nvrtcProgram p;
  A.nvrtcCreateProgram(&p, src.c_str(), file.c_str(), 0, nullptr, nullptr);
  opts.insert(opts.begin(), "--gpu-architecture=sm_80");
  int r = A.nvrtcCompileProgram(p, static_cast<int>(opts.size()), opts.data());
  size_t n = 0;
  A.nvrtcGetProgramLogSize(p, &n);
  log.assign(n, '\0');
  A.nvrtcGetProgramLog(p, &log[0]);
  log.resize(n ? n - 1 : 0);
  if (r) return r;
  (ptx ? A.nvrtcGetPTXSize : A.nvrtcGetCUBINSize)(p, &n);
  image.assign(n, '\0');
  (ptx ? A.nvrtcGetPTX : A.nvrtcGetCUBIN)(p, &image[0]);
  return 0;
}

SPAN_CUfunction function(const std::string& file, const char* name, std::vector<const char*> opts = {}, bool ptx = false) {
  std::string log, image;
  int r = compile(file, opts, log, image, ptx);
  if (r) printf("{\"error\":%s,\"log\":%s}\n", json(A.nvrtcGetErrorString(r)).c_str(), json(log).c_str()), exit(1);
  SPAN_CUmodule m;
  SPAN_CUfunction f;
  CHECK(A.cuModuleLoadData(&m, image.data()));
  CHECK(A.cuModuleGetFunction(&f, m, name));
  return f;
}

template <class T>
SPAN_CUdeviceptr upload(const std::vector<T>& v) {
  SPAN_CUdeviceptr d;
  CHECK(A.cuMemAlloc_v2(&d, v.size() * sizeof(T)));
  CHECK(A.cuMemcpyHtoD_v2(d, v.data(), v.size() * sizeof(T)));
  return d;
}

template <class T>
std::vector<T> download(SPAN_CUdeviceptr d, size_t n) {
  std::vector<T> v(n);
  CHECK(A.cuMemcpyDtoH_v2(v.data(), d, n * sizeof(T)));
  return v;
}

/** FNV-1a of bytes, for "the same result under every schedule". */
template <class T>
std::string digest(const std::vector<T>& v) {
  uint64_t h = 1469598103934665603ull;
  const auto* b = reinterpret_cast<const unsigned char*>(v.data());
  for (size_t i = 0; i < v.size() * sizeof(T); i++) h = (h ^ b[i]) * 1099511628211ull;
  char buf[17];
  snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

double seconds() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

/** Max |out - reference| of LayerNorm (reference in double), its launch time, and the output's digest. */
int layernorm(int N, int C, int block, bool plant) {
  std::mt19937 rng(7);
  std::normal_distribution<float> g(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(N) * C), w(C), b(C);
  for (auto& v : x) v = g(rng) * 2.0f + 0.5f;
  for (auto& v : w) v = 1.0f + 0.1f * g(rng);
  for (auto& v : b) v = 0.1f * g(rng);
  SPAN_CUfunction f = function("layernorm.cu", "layernorm_forward", plant ? std::vector<const char*>{"-DPLANT_MISSING_BARRIER"} : std::vector<const char*>{});
  SPAN_CUdeviceptr dx = upload(x), dw = upload(w), db = upload(b), dout, dmean, drstd;
  CHECK(A.cuMemAlloc_v2(&dout, x.size() * 4));
  CHECK(A.cuMemAlloc_v2(&dmean, N * 4));
  CHECK(A.cuMemAlloc_v2(&drstd, N * 4));
  void* params[] = {&dout, &dmean, &drstd, &dx, &dw, &db, &N, &C};
  CHECK(A.cuLaunchKernel(f, N, 1, 1, block, 1, 1, 0, nullptr, params, nullptr));  // the first launch maps the fibers' stacks
  double t0 = seconds();
  int reps = getenv("HARNESS_REPEAT") ? atoi(getenv("HARNESS_REPEAT")) : 3;
  for (int k = 0; k < reps; k++) CHECK(A.cuLaunchKernel(f, N, 1, 1, block, 1, 1, 0, nullptr, params, nullptr));
  double ms = (seconds() - t0) * 1e3 / reps;
  std::vector<float> out = download<float>(dout, x.size());
  double err = 0;
  for (int r = 0; r < N; r++) {
    double m = 0, v = 0;
    for (int i = 0; i < C; i++) m += x[r * C + i];
    m /= C;
    for (int i = 0; i < C; i++) v += (x[r * C + i] - m) * (x[r * C + i] - m);
    double rs = 1.0 / std::sqrt(v / C + 1e-5);
    for (int i = 0; i < C; i++) {
      double ref = (x[r * C + i] - m) * rs * w[i] + b[i];
      err = std::fmax(err, std::fabs(out[r * C + i] - ref) / std::fmax(1.0, std::fabs(ref)));
    }
  }
  printf("{\"maxRelErr\":%.3g,\"ms\":%.2f,\"digest\":\"%s\",\"launches\":%llu}\n", err, ms, digest(out).c_str(), A.launchCount());
  return 0;
}

int warpOps() {
  const int T = 48;
  std::vector<int> in(T);
  for (int i = 0; i < T; i++) in[i] = i * 7 + 1;
  SPAN_CUfunction f = function("warp.cu", "warp_ops");
  SPAN_CUdeviceptr din = upload(in), dout;
  CHECK(A.cuMemAlloc_v2(&dout, T * 10 * 4));
  void* params[] = {&din, &dout};
  CHECK(A.cuLaunchKernel(f, 1, 1, 1, T, 1, 1, 0, nullptr, params, nullptr));
  std::vector<int> out = download<int>(dout, T * 10);
  printf("{\"out\":[");
  for (int i = 0; i < T * 10; i++) printf("%s%d", i ? "," : "", out[i]);
  printf("],\"digest\":\"%s\"}\n", digest(out).c_str());
  return 0;
}

int atomics(int n, int grid, int block) {
  std::vector<float> x(n);
  double sum = 0;
  for (int i = 0; i < n; i++) sum += x[i] = static_cast<float>((i * 37) % 101) / 8.0f;  // exact in float: any order sums the same
  SPAN_CUfunction f = function("atomics.cu", "atomics");
  SPAN_CUdeviceptr dx = upload(x), fsum = upload(std::vector<float>{0}), count = upload(std::vector<int>{0}), umax = upload(std::vector<unsigned>{0});
  SPAN_CUdeviceptr imin = upload(std::vector<int>{0}), total = upload(std::vector<unsigned long long>{0}), fmax = upload(std::vector<float>{-1e30f});
  void* params[] = {&dx, &n, &fsum, &count, &umax, &imin, &total, &fmax};
  CHECK(A.cuLaunchKernel(f, grid, 1, 1, block, 1, 1, 0, nullptr, params, nullptr));
  printf("{\"fsum\":%.9g,\"expected\":%.9g,\"count\":%d,\"umax\":%u,\"imin\":%d,\"total\":%llu,\"fmax\":%g}\n", download<float>(fsum, 1)[0], sum,
         download<int>(count, 1)[0], download<unsigned>(umax, 1)[0], download<int>(imin, 1)[0], download<unsigned long long>(total, 1)[0],
         download<float>(fmax, 1)[0]);
  return 0;
}

int dynsmem(int n, int block, int big, bool ptx) {
  std::vector<float> in(n);
  for (int i = 0; i < n; i++) in[i] = static_cast<float>(i);
  SPAN_CUfunction f = function("dynsmem.cu", "reverse_block", {}, ptx);
  if (big == 1) CHECK(A.cuFuncSetAttribute(f, SPAN_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 96 * 1024));
  SPAN_CUdeviceptr din = upload(in), dout;
  CHECK(A.cuMemAlloc_v2(&dout, n * 4));
  CHECK(A.cuMemsetD32_v2(dout, 0, n));
  void* params[] = {&din, &dout, &n};
  unsigned smem = big ? 64 * 1024 : block * 4;  // big: 64 KiB, above the default 48 KiB (raised first when big == 1)
  int r = A.cuLaunchKernel(f, (n + block - 1) / block, 1, 1, block, 1, 1, smem, nullptr, params, nullptr);
  if (r) return printf("{\"launch\":%s,\"message\":%s}\n", json(errName(r)).c_str(), json(A.lastError()).c_str()), 0;
  std::vector<float> out = download<float>(dout, n);
  int bad = 0;
  for (int i = 0; i < n; i++) {
    int base = i / block * block, src = base + block - 1 - (i - base);
    bad += src < n && out[i] != in[src];
  }
  printf("{\"launch\":\"CUDA_SUCCESS\",\"bad\":%d}\n", bad);
  return 0;
}

/** d = 2·(a·b + c) by wmma_gemm (wmma.cu) on bf16 a [16, 32], b [32, 16]: the largest difference from
 *  the emulator's stated rounding (fp32 sums, k ascending, from c: bit for bit) and from a double reference. */
int wmmaGemm(int bcol, int dcol) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  auto bf = [](float x) {
    uint32_t b;
    memcpy(&b, &x, 4);
    b = (b + 0x7fffu + ((b >> 16) & 1u)) & 0xffff0000u;  // round to nearest even (no NaN here)
    memcpy(&x, &b, 4);
    return x;
  };
  std::vector<float> a(512), b(512), c(256);
  for (auto& x : a) x = bf(u(rng));
  for (auto& x : b) x = bf(u(rng));
  for (auto& x : c) x = u(rng);
  std::vector<uint16_t> ah(512), bh(512);
  for (int i = 0; i < 512; i++) {
    uint32_t bits;
    memcpy(&bits, &a[i], 4), ah[i] = static_cast<uint16_t>(bits >> 16);
    int k = i / 16, n = i % 16;  // b[k][n] row-major; column-major stores it at n·32 + k
    memcpy(&bits, &b[i], 4), bh[bcol ? n * 32 + k : i] = static_cast<uint16_t>(bits >> 16);
  }
  SPAN_CUfunction f = function("wmma.cu", "wmma_gemm");
  SPAN_CUdeviceptr da = upload(ah), db = upload(bh), dc = upload(c), dd;
  CHECK(A.cuMemAlloc_v2(&dd, 256 * 4));
  void* params[] = {&da, &db, &dc, &dd, &bcol, &dcol};
  int r = A.cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr);
  if (r) return printf("{\"launch\":%s,\"message\":%s}\n", json(errName(r)).c_str(), json(A.lastError()).c_str()), 0;
  std::vector<float> d = download<float>(dd, 256);
  int bad = 0;
  double err = 0;
  for (int i = 0; i < 16; i++)
    for (int j = 0; j < 16; j++) {
      float acc = c[i * 16 + j];
      double exact = acc;
      for (int k = 0; k < 32; k++) acc = static_cast<float>(static_cast<double>(acc) + static_cast<double>(a[i * 32 + k]) * b[k * 16 + j]), exact += static_cast<double>(a[i * 32 + k]) * b[k * 16 + j];
      float got = d[dcol ? j * 16 + i : i * 16 + j];
      bad += got != 2.0f * acc;
      err = std::max(err, std::fabs(got - 2.0 * exact) / std::max(1.0, std::fabs(2.0 * exact)));
    }
  printf("{\"launch\":\"CUDA_SUCCESS\",\"bad\":%d,\"relErr\":%.3g,\"digest\":\"%s\"}\n", bad, err, digest(d).c_str());
  return 0;
}

/** d = a·b + c by wmma_gemm_tf32 on fp32 a, b [16, 16]: the largest difference from the emulator's stated rounding
 *  (inputs to tf32 by cvt.rna: nearest, ties away; fp32 sums, k ascending, from c: bit for bit) and from a double reference. */
int wmmaGemmTf32() {
  std::mt19937 rng(13);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  auto tf32 = [](float x) {
    uint32_t b;
    memcpy(&b, &x, 4);
    b = (b + 0x1000u) & ~0x1fffu;
    memcpy(&x, &b, 4);
    return x;
  };
  std::vector<float> a(256), b(256), c(256);
  for (auto& x : a) x = u(rng);
  for (auto& x : b) x = u(rng);
  for (auto& x : c) x = u(rng);
  a[0] = 1.0f + 0x1000 * std::ldexp(1.0f, -23);  // a tie: away from zero, to 1 + 2^-10
  SPAN_CUfunction f = function("wmma.cu", "wmma_gemm_tf32");
  SPAN_CUdeviceptr da = upload(a), db = upload(b), dc = upload(c), dd;
  CHECK(A.cuMemAlloc_v2(&dd, 256 * 4));
  void* params[] = {&da, &db, &dc, &dd};
  int r = A.cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr);
  if (r) return printf("{\"launch\":%s,\"message\":%s}\n", json(errName(r)).c_str(), json(A.lastError()).c_str()), 0;
  std::vector<float> d = download<float>(dd, 256);
  int bad = 0;
  double err = 0;
  for (int i = 0; i < 16; i++)
    for (int j = 0; j < 16; j++) {
      float acc = c[i * 16 + j];
      double exact = acc;
      for (int k = 0; k < 16; k++) {
        const double p = static_cast<double>(tf32(a[i * 16 + k])) * tf32(b[k * 16 + j]);
        acc = static_cast<float>(acc + p), exact += static_cast<double>(a[i * 16 + k]) * b[k * 16 + j];
      }
      bad += d[i * 16 + j] != acc;
      err = std::max(err, std::fabs(d[i * 16 + j] - exact) / std::max(1.0, std::fabs(exact)));
    }
  printf("{\"launch\":\"CUDA_SUCCESS\",\"bad\":%d,\"relErr\":%.3g,\"tie\":%.17g}\n", bad, err, tf32(a[0]));
  return 0;
}

/** The emulator's fragment layout (wmma_layout): whether the 256 elements are spread over the 32 lanes × 8 exactly once, and whether in row-major order (they must not be). */
int wmmaLayout() {
  std::vector<uint16_t> a(256);
  for (int i = 0; i < 256; i++) {
    float f = static_cast<float>(i);  // exact in bf16 (8 significant bits)
    uint32_t bits;
    memcpy(&bits, &f, 4);
    a[i] = static_cast<uint16_t>(bits >> 16);
  }
  SPAN_CUfunction f = function("wmma.cu", "wmma_layout");
  SPAN_CUdeviceptr da = upload(a), dout;
  CHECK(A.cuMemAlloc_v2(&dout, 256 * 4));
  void* params[] = {&da, &dout};
  CHECK(A.cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr));
  std::vector<float> out = download<float>(dout, 256);
  std::vector<int> seen(256, 0);
  bool inOrder = true;
  for (int i = 0; i < 256; i++) {
    int v = static_cast<int>(out[i]);
    if (v >= 0 && v < 256) seen[v]++;
    inOrder = inOrder && v == i;
  }
  int once = 0;
  for (int c : seen) once += c == 1;
  printf("{\"once\":%d,\"inOrder\":%s}\n", once, inOrder ? "true" : "false");
  return 0;
}

/** A kernel of faults.cu: the launch's result and message, then whether the context stays failed. */
int fault(const char* name, int block, const char* file = "faults.cu") {
  SPAN_CUfunction f = function(file, name);
  std::vector<int> init(block, 1);
  if (strcmp(name, "asserts") == 0) init[block - 1] = -1;
  SPAN_CUdeviceptr d = upload(init);
  if (strcmp(name, "touch") == 0) CHECK(A.cuMemFree_v2(d));
  void* params[] = {&d};
  int r = A.cuLaunchKernel(f, 1, 1, 1, block, 1, 1, 0, nullptr, params, nullptr);
  int after = A.cuCtxSynchronize();
  printf("{\"launch\":%s,\"message\":%s,\"after\":%s}\n", json(errName(r)).c_str(), json(A.lastError()).c_str(), json(errName(after)).c_str());
  return 0;
}

/** Copies and memsets outside live allocations: each call's result and message. */
int copies() {
  SPAN_CUdeviceptr d, e;
  CHECK(A.cuMemAlloc_v2(&d, 1000));
  CHECK(A.cuMemAlloc_v2(&e, 64));
  std::vector<char> host(2000);
  printf("{");
  auto report = [&](const char* what, int r, bool last = false) { printf("%s:[%s,%s]%s", json(what).c_str(), json(errName(r)).c_str(), json(r ? A.lastError() : "").c_str(), last ? "" : ","); };
  report("inside", A.cuMemcpyHtoD_v2(d + 100, host.data(), 900));
  report("pastEnd", A.cuMemcpyHtoD_v2(d + 100, host.data(), 901));
  report("memsetPastEnd", A.cuMemsetD32_v2(d, 0, 251));
  report("hostPointer", A.cuMemcpyDtoH_v2(host.data(), reinterpret_cast<SPAN_CUdeviceptr>(host.data()), 10));
  CHECK(A.cuMemFree_v2(e));
  report("freed", A.cuMemcpyDtoH_v2(host.data(), e, 8));
  report("doubleFree", A.cuMemFree_v2(e), true);
  printf("}\n");
  return 0;
}

/** NVRTC's refusals: a compile error (through the log), an unknown option, INFINITY (which NVRTC lacks). */
int compileErrors() {
  std::string log, image;
  int syntax = compile("../broken/syntax.cu", {}, log, image);
  std::string syntaxLog = log;
  int option = compile("warp.cu", {"--no-such-option"}, log, image);
  std::string optionLog = log;
  int inf = compile("../broken/infinity.cu", {}, log, image);
  printf("{\"syntax\":[%s,%s],\"option\":[%s,%s],\"infinity\":[%s,%s]}\n", json(A.nvrtcGetErrorString(syntax)).c_str(), json(syntaxLog).c_str(),
         json(A.nvrtcGetErrorString(option)).c_str(), json(optionLog).c_str(), json(A.nvrtcGetErrorString(inf)).c_str(), json(log).c_str());
  return 0;
}

/** A launch and an async read on a stream: the host buffer before and after the event says the work is done. */
int deferred() {
  SPAN_CUfunction f = function("faults.cu", "touch");
  SPAN_CUdeviceptr d = upload(std::vector<float>(64, 0.0f));
  SPAN_CUstream st;
  SPAN_CUevent ev;
  CHECK(A.cuStreamCreate(&st, 0));
  CHECK(A.cuEventCreate(&ev, 0));
  void* params[] = {&d};
  CHECK(A.cuLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, st, params, nullptr));
  std::vector<float> out(64, -1.0f);
  CHECK(A.cuMemcpyDtoHAsync_v2(out.data(), d, 64 * 4, st));
  float before = out[0];
  CHECK(A.cuEventRecord(ev, st));
  int q1 = A.cuEventQuery(ev), q2 = A.cuEventQuery(ev);
  printf("{\"before\":%g,\"query1\":%s,\"query2\":%s,\"after\":%g}\n", before, json(errName(q1)).c_str(), json(errName(q2)).c_str(), out[63]);
  return 0;
}

/** Kernels reading or writing outside live memory: past an allocation's end, and through a stored pointer to freed memory. */
int guard(const char* what) {
  SPAN_CUdeviceptr x;
  CHECK(A.cuMemAlloc_v2(&x, 1000 * 4));
  int r;
  if (strcmp(what, "overrun") == 0) {
    void* params[] = {&x};
    r = A.cuLaunchKernel(function("faults.cu", "overrun"), 2, 1, 1, 1024, 1, 1, 0, nullptr, params, nullptr);
  } else {
    SPAN_CUdeviceptr table = upload(std::vector<SPAN_CUdeviceptr>{x});
    CHECK(A.cuMemFree_v2(x));
    void* params[] = {&table};
    r = A.cuLaunchKernel(function("faults.cu", "indirect"), 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr);
  }
  printf("{\"launch\":%s,\"message\":%s,\"after\":%s}\n", json(errName(r)).c_str(), json(r ? A.lastError() : "").c_str(), json(errName(A.cuCtxSynchronize())).c_str());
  return 0;
}

/** early_exit (64 threads, 24 return before the barrier) and grid2d (grid 3×2, block 16×4): how many outputs are wrong. */
int shapes() {
  SPAN_CUdeviceptr out;
  CHECK(A.cuMemAlloc_v2(&out, 384 * 4));
  void* params[] = {&out};
  CHECK(A.cuLaunchKernel(function("shapes.cu", "early_exit"), 1, 1, 1, 64, 1, 1, 0, nullptr, params, nullptr));
  std::vector<int> e = download<int>(out, 40);
  int earlyBad = 0, gridBad = 0;
  for (int t = 0; t < 40; t++) earlyBad += e[t] != 39 - t;
  CHECK(A.cuLaunchKernel(function("shapes.cu", "grid2d"), 3, 2, 1, 16, 4, 1, 0, nullptr, params, nullptr));
  std::vector<int> g = download<int>(out, 384);
  for (int by = 0; by < 2; by++)
    for (int bx = 0; bx < 3; bx++)
      for (int ty = 0; ty < 4; ty++)
        for (int tx = 0; tx < 16; tx++) gridBad += g[(by * 3 + bx) * 64 + ty * 16 + tx] != bx * 1000000 + by * 10000 + ty * 100 + tx;
  CHECK(A.cuLaunchKernel(function("shapes.cu", "stale_shared"), 2, 1, 1, 64, 1, 1, 0, nullptr, params, nullptr));
  std::vector<float> st = download<float>(out, 128);
  int staleNaN = 0;
  for (int t = 0; t < 64; t++) staleNaN += (st[t] == 1.0f) + 2 * std::isnan(st[64 + t]);
  printf("{\"earlyBad\":%d,\"gridBad\":%d,\"staleShared\":%d}\n", earlyBad, gridBad, staleNaN);
  return 0;
}

/** math_ops against double references (error relative to max(1, |reference|)), and bf16_ops' shuffled bits and atomic sum. */
int math() {
  const int n = 1000;
  std::vector<float> x(n);
  for (int i = 0; i < n; i++) x[i] = (i - 500) / 61.0f;
  SPAN_CUdeviceptr dx = upload(x), out;
  CHECK(A.cuMemAlloc_v2(&out, n * 6 * 4));
  int nn = n;
  void* params[] = {&dx, &out, &nn};
  CHECK(A.cuLaunchKernel(function("shapes.cu", "math_ops"), (n + 127) / 128, 1, 1, 128, 1, 1, 0, nullptr, params, nullptr));
  std::vector<float> o = download<float>(out, n * 6);
  double err = 0;
  for (int i = 0; i < n; i++) {
    double v = x[i], ref[6] = {std::exp(v), 0.5 * v * (1 + std::erf(v * 0.70710678)), std::tanh(v), 1 / std::sqrt(std::fabs(v) + 1), std::exp(-v),
                                std::fmax(v, 0) + std::fmin(v, 0) * 0.5};
    for (int k = 0; k < 6; k++) err = std::fmax(err, std::fabs(o[i * 6 + k] - ref[k]) / std::fmax(1.0, std::fabs(ref[k])));
  }
  std::vector<float> y(32);
  for (int i = 0; i < 32; i++) y[i] = 1.0f + i / 256.0f + 1.0f / 512.0f;  // odd i round up, even i down (bf16's step at 1 is 1/128)
  SPAN_CUdeviceptr dy = upload(y), bout, bsum = upload(std::vector<uint16_t>{0});
  CHECK(A.cuMemAlloc_v2(&bout, 64));
  void* p2[] = {&dy, &bout, &bsum};
  CHECK(A.cuLaunchKernel(function("shapes.cu", "bf16_ops"), 1, 1, 1, 32, 1, 1, 0, nullptr, p2, nullptr));
  std::vector<uint16_t> b = download<uint16_t>(bout, 32);
  printf("{\"mathMaxRelErr\":%.3g,\"bf16\":[%u,%u,%u],\"bf16Sum\":%u}\n", err, b[0], b[1], b[2], download<uint16_t>(bsum, 1)[0]);
  return 0;
}

/** sum_and_squares of 8 blocks × 256 small integers (exact in float): how many of the 16 results are wrong. */
int reduceTwice(bool plant) {
  std::vector<float> x(8 * 256);
  for (size_t i = 0; i < x.size(); i++) x[i] = static_cast<float>((i * 7) % 13);
  SPAN_CUfunction f = function("reduce_twice.cu", "sum_and_squares", plant ? std::vector<const char*>{"-DPLANT_MISSING_BARRIER"} : std::vector<const char*>{});
  SPAN_CUdeviceptr dx = upload(x), out;
  CHECK(A.cuMemAlloc_v2(&out, 16 * 4));
  void* params[] = {&dx, &out};
  CHECK(A.cuLaunchKernel(f, 8, 1, 1, 256, 1, 1, 0, nullptr, params, nullptr));
  std::vector<float> o = download<float>(out, 16);
  int bad = 0;
  for (int b = 0; b < 8; b++) {
    double s = 0, q = 0;
    for (int i = 0; i < 256; i++) s += x[b * 256 + i], q += x[b * 256 + i] * x[b * 256 + i];
    bad += (o[2 * b] != s) + (o[2 * b + 1] != q);
  }
  printf("{\"bad\":%d}\n", bad);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) return fprintf(stderr, "usage: harness DIR SCENARIO KERNELS_DIR [ARGS...]\n"), 2;
  load(argv[1]);
  kernels = argv[3];
  std::string s = argv[2];
  auto arg = [&](int i, int d) { return argc > 4 + i ? atoi(argv[4 + i]) : d; };
  if (s == "compile-errors") return compileErrors();
  init();
  if (s == "layernorm") return layernorm(arg(0, 64), arg(1, 768), arg(2, 256), arg(3, 0) != 0);
  if (s == "warp") return warpOps();
  if (s == "atomics") return atomics(arg(0, 10000), arg(1, 20), arg(2, 128));
  if (s == "dynsmem") return dynsmem(arg(0, 1000), arg(1, 128), arg(2, 0), arg(3, 0) != 0);
  if (s == "copies") return copies();
  if (s == "deferred") return deferred();
  if (s == "shapes") return shapes();
  if (s == "math") return math();
  if (s == "reduce-twice") return reduceTwice(arg(0, 0) != 0);
  if (s == "guard") return guard(argv[4]);
  if (s == "fault") return fault(argv[4], arg(1, 64));
  if (s == "wmma") return wmmaGemm(arg(0, 0), arg(1, 0));
  if (s == "wmma-layout") return wmmaLayout();
  if (s == "wmma-tf32") return wmmaGemmTf32();
  if (s == "wmma-fault") return fault(argv[4], arg(1, 32), "wmma.cu");
  fprintf(stderr, "unknown scenario %s\n", s.c_str());
  return 2;
}
