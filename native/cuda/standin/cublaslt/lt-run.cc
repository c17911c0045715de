// Runs one cublasLtMatmul described by a case file against a libcublasLt opened with dlopen (the
// stand-in, or on a GPU machine the real one), for the stand-in's tests and for
// tools/gpu-check.sh's comparison of the two on the same saved cases (fixtures/cuda/).
//   lt-run LIBCUBLASLT CASEFILE OUTDIR [LIBCUDA]
// The case file has one item a line (test/native/cuda/lt-case.ts writes them):
//   desc COMPUTE SCALE                       cublasLtMatmulDescCreate
//   attr NAME VALUE                          a desc attribute by abi.h's name less the prefix (TRANSA 1, EPILOGUE 36, …)
//   rawattr ATTR NBYTES VALUE                a desc attribute with a given size (to see the size check)
//   layout X TYPE ROWS COLS LD [BATCH STRIDE [ORDER]]   X in A B C D
//   buf X FILE                               X in A B C D bias aux: contents (D's, bias's, aux's initial)
//   fill X TYPE COUNT SEED                   COUNT values uniform in [-1, 1) from SEED (splitmix64), as TYPE (0 fp32, 14 bf16)
//   const X TYPE COUNT VALUE                 COUNT copies of VALUE (a sentinel for what must stay untouched)
//   ramp X TYPE COUNT START STEP             START, START + STEP, … (a grid of inputs)
//   alias                                    D is C's buffer (in place)
//   alpha V / beta V / noalgo (pass no algo: skip the heuristic)
// Prints "heuristic STATUS COUNT", "matmul STATUS" (and "attr A status S" for an attribute the
// library refused) and writes every buffer to OUTDIR: X.in.bin before the call, X.bin after. Without LIBCUDA, device pointers are host pointers (the stand-ins' model); with it,
// buffers are allocated with cuMemAlloc and copied in and out (a real GPU).
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "../../src/abi.h"

namespace {

// Driver entry points for device buffers (cuda.h; CUDA 3.2+ _v2 names).
typedef SPAN_CUresult (*memAlloc_t)(SPAN_CUdeviceptr*, size_t);
typedef SPAN_CUresult (*memcpyHtoD_t)(SPAN_CUdeviceptr, const void*, size_t);
typedef SPAN_CUresult (*memcpyDtoH_t)(void*, SPAN_CUdeviceptr, size_t);
typedef SPAN_CUresult (*ctxSynchronize_t)(void);

struct Lt {
  span_cublasLtCreate_t create;
  span_cublasLtMatmulDescCreate_t descCreate;
  span_cublasLtMatmulDescSetAttribute_t descSet;
  span_cublasLtMatrixLayoutCreate_t layoutCreate;
  span_cublasLtMatrixLayoutSetAttribute_t layoutSet;
  span_cublasLtMatmulPreferenceCreate_t prefCreate;
  span_cublasLtMatmulAlgoGetHeuristic_t heuristic;
  span_cublasLtMatmul_t matmul;
};

template <class F>
void sym(void* lib, const char* name, F& out) {
  out = reinterpret_cast<F>(dlsym(lib, name));
  if (!out) std::fprintf(stderr, "lt-run: %s missing\n", name), std::exit(2);
}

const std::map<std::string, std::pair<int, int>> kDescAttrs = {
    // name → (attribute, bytes)
    {"TRANSA", {SPAN_CUBLASLT_MATMUL_DESC_TRANSA, 4}},
    {"TRANSB", {SPAN_CUBLASLT_MATMUL_DESC_TRANSB, 4}},
    {"TRANSC", {SPAN_CUBLASLT_MATMUL_DESC_TRANSC, 4}},
    {"EPILOGUE", {SPAN_CUBLASLT_MATMUL_DESC_EPILOGUE, 4}},
    {"POINTER_MODE", {SPAN_CUBLASLT_MATMUL_DESC_POINTER_MODE, 4}},
    {"BIAS_BATCH_STRIDE", {SPAN_CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, 8}},
    {"EPILOGUE_AUX_LD", {SPAN_CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, 8}},
    {"EPILOGUE_AUX_BATCH_STRIDE", {SPAN_CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE, 8}},
    {"EPILOGUE_AUX_DATA_TYPE", {SPAN_CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE, 4}},
    {"BIAS_DATA_TYPE", {SPAN_CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, 4}},
};

struct Case {
  int compute = SPAN_CUBLAS_COMPUTE_32F, scale = SPAN_CUDA_R_32F;
  std::vector<std::pair<int, std::pair<int, long long>>> attrs;  // (attr, (bytes, value))
  std::map<std::string, std::vector<long long>> layouts;
  std::map<std::string, std::vector<char>> bufs;
  bool alias = false, noalgo = false;
  float alpha = 1, beta = 0;
};

/** splitmix64 (Steele et al. 2014): the stream of a seed, the same in every build. */
uint64_t splitmix(uint64_t& s) {
  uint64_t z = (s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/** COUNT elements of TYPE: uniform in [-1, 1) from SEED (seeded), or v + i·step. */
std::vector<char> values(int type, long long count, bool seeded, double v, double step = 0) {
  const size_t size = type == SPAN_CUDA_R_16BF ? 2 : 4;
  std::vector<char> out(size * (size_t)count);
  uint64_t state = (uint64_t)v;
  for (long long i = 0; i < count; i++) {
    float f = seeded ? (float)((double)(splitmix(state) >> 40) / (double)(1ull << 24) * 2.0 - 1.0) : (float)(v + (double)i * step);
    if (size == 2) {
      uint32_t x;
      std::memcpy(&x, &f, 4);
      const uint32_t rest = x << 16, r = x >> 16;  // round to nearest even (values are finite)
      const uint16_t h = (uint16_t)((rest > 0x80000000u || (rest == 0x80000000u && (r & 1u))) ? r + 1 : r);
      std::memcpy(&out[2 * i], &h, 2);
    } else {
      std::memcpy(&out[4 * i], &f, 4);
    }
  }
  return out;
}

std::vector<char> readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) std::fprintf(stderr, "lt-run: cannot read %s\n", path.c_str()), std::exit(2);
  return std::vector<char>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

/** A buffer line: buf X FILE, fill X TYPE COUNT SEED, const X TYPE COUNT VALUE, ramp X TYPE COUNT START STEP. */
void parseBuffer(Case& c, const std::string& w, std::istringstream& s) {
  std::string x, v, step;  // numbers through strtod: "nan" too
  int type = 0;
  long long count = 0;
  if (w == "buf") {
    s >> x >> v;
    c.bufs[x] = readFile(v);
    return;
  }
  s >> x >> type >> count >> v >> step;
  const double a = std::strtod(v.c_str(), nullptr), b = std::strtod(step.c_str(), nullptr);
  c.bufs[x] = values(type, count, w == "fill", a, w == "ramp" ? b : 0);
}

/** A descriptor attribute line: attr NAME VALUE or rawattr ATTR NBYTES VALUE. */
void parseAttr(Case& c, const std::string& w, std::istringstream& s) {
  long long v = 0;
  if (w == "rawattr") {
    int attr = 0, bytes = 0;
    s >> attr >> bytes >> v;
    c.attrs.push_back({attr, {bytes, v}});
    return;
  }
  std::string name;
  s >> name >> v;
  auto it = kDescAttrs.find(name);
  if (it == kDescAttrs.end()) std::fprintf(stderr, "lt-run: unknown attr %s\n", name.c_str()), std::exit(2);
  c.attrs.push_back({it->second.first, {it->second.second, v}});
}

Case parse(const std::string& path) {
  Case c;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream s(line);
    std::string w;
    s >> w;
    if (w == "desc") s >> c.compute >> c.scale;
    else if (w == "attr" || w == "rawattr") parseAttr(c, w, s);
    else if (w == "layout") {
      std::string x;
      long long v;
      s >> x;
      while (s >> v) c.layouts[x].push_back(v);
    } else if (w == "buf" || w == "fill" || w == "const" || w == "ramp") parseBuffer(c, w, s);
    else if (w == "alias") c.alias = true;
    else if (w == "noalgo") c.noalgo = true;
    else if (w == "alpha") s >> c.alpha;
    else if (w == "beta") s >> c.beta;
  }
  return c;
}

/** Device buffers: host memory (the stand-ins), or cuMemAlloc'd copies on a real GPU. */
struct Device {
  void* cuda = nullptr;
  std::map<std::string, SPAN_CUdeviceptr> ptrs;

  void init(const char* libcuda) {
    cuda = dlopen(libcuda, RTLD_NOW | RTLD_GLOBAL);
    if (!cuda) std::fprintf(stderr, "lt-run: %s\n", dlerror()), std::exit(2);
    span_cuInit_t init;
    span_cuDevicePrimaryCtxRetain_t retain;
    span_cuCtxSetCurrent_t setCurrent;
    sym(cuda, "cuInit", init), sym(cuda, "cuDevicePrimaryCtxRetain", retain), sym(cuda, "cuCtxSetCurrent", setCurrent);
    SPAN_CUcontext ctx = nullptr;
    if (init(0) != 0 || retain(&ctx, 0) != 0 || setCurrent(ctx) != 0) std::fprintf(stderr, "lt-run: no CUDA context\n"), std::exit(2);
  }

  void* in(const std::string& name, std::vector<char>& host) {
    if (!cuda) return host.data();
    memAlloc_t alloc;
    memcpyHtoD_t h2d;
    sym(cuda, "cuMemAlloc_v2", alloc), sym(cuda, "cuMemcpyHtoD_v2", h2d);
    SPAN_CUdeviceptr p = 0;
    if (alloc(&p, host.size() ? host.size() : 1) != 0 || h2d(p, host.data(), host.size()) != 0) std::fprintf(stderr, "lt-run: cuMemAlloc\n"), std::exit(2);
    ptrs[name] = p;
    return reinterpret_cast<void*>(p);
  }

  void out(const std::string& name, std::vector<char>& host) {
    if (!cuda) return;
    ctxSynchronize_t sync;
    memcpyDtoH_t d2h;
    sym(cuda, "cuCtxSynchronize", sync), sym(cuda, "cuMemcpyDtoH_v2", d2h);
    if (sync() != 0 || d2h(host.data(), ptrs[name], host.size()) != 0) std::fprintf(stderr, "lt-run: cuMemcpyDtoH\n"), std::exit(2);
  }
};

SPAN_cublasLtMatrixLayout_t layout(const Lt& lt, const Case& c, const char* x) {
  auto it = c.layouts.find(x);
  if (it == c.layouts.end()) return nullptr;
  const std::vector<long long>& v = it->second;
  SPAN_cublasLtMatrixLayout_t l = nullptr;
  if (lt.layoutCreate(&l, (int)v[0], (uint64_t)v[1], (uint64_t)v[2], (int64_t)v[3]) != 0) std::fprintf(stderr, "lt-run: layout %s\n", x), std::exit(2);
  int32_t batch = v.size() > 4 ? (int32_t)v[4] : 1, order = v.size() > 6 ? (int32_t)v[6] : 0;
  int64_t stride = v.size() > 5 ? (int64_t)v[5] : 0;
  if (v.size() > 4) lt.layoutSet(l, SPAN_CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof(batch));
  if (v.size() > 5) lt.layoutSet(l, SPAN_CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride));
  if (v.size() > 6) lt.layoutSet(l, SPAN_CUBLASLT_MATRIX_LAYOUT_ORDER, &order, sizeof(order));
  return l;
}

/** The descriptor with the case's attributes and the bias/aux pointers of its buffers. */
SPAN_cublasLtMatmulDesc_t descriptor(const Lt& lt, Case& c, std::map<std::string, void*>& dev) {
  SPAN_cublasLtMatmulDesc_t d = nullptr;
  if (lt.descCreate(&d, c.compute, c.scale) != 0) std::fprintf(stderr, "lt-run: desc\n"), std::exit(2);
  for (auto& a : c.attrs) {
    long long v = a.second.second;
    int32_t v32 = (int32_t)v;
    int s = lt.descSet(d, a.first, a.second.first == 4 ? (const void*)&v32 : (const void*)&v, (size_t)a.second.first);
    if (s != 0) std::printf("attr %d status %d\n", a.first, s);
  }
  for (const char* x : {"bias", "aux"}) {
    if (!dev.count(x)) continue;
    void* p = dev[x];
    int attr = x[0] == 'b' ? SPAN_CUBLASLT_MATMUL_DESC_BIAS_POINTER : SPAN_CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER;
    lt.descSet(d, attr, &p, sizeof(p));
  }
  return d;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) return std::fprintf(stderr, "usage: lt-run LIBCUBLASLT CASEFILE OUTDIR [LIBCUDA]\n"), 2;
  Device device;
  if (argc > 4) device.init(argv[4]);
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) return std::fprintf(stderr, "lt-run: %s\n", dlerror()), 2;
  Lt lt;
  sym(lib, "cublasLtCreate", lt.create), sym(lib, "cublasLtMatmulDescCreate", lt.descCreate), sym(lib, "cublasLtMatmulDescSetAttribute", lt.descSet);
  sym(lib, "cublasLtMatrixLayoutCreate", lt.layoutCreate), sym(lib, "cublasLtMatrixLayoutSetAttribute", lt.layoutSet);
  sym(lib, "cublasLtMatmulPreferenceCreate", lt.prefCreate), sym(lib, "cublasLtMatmulAlgoGetHeuristic", lt.heuristic), sym(lib, "cublasLtMatmul", lt.matmul);
  Case c = parse(argv[2]);
  std::map<std::string, void*> dev;
  for (auto& b : c.bufs) {
    std::ofstream o(std::string(argv[3]) + "/" + b.first + ".in.bin", std::ios::binary);
    o.write(b.second.data(), (std::streamsize)b.second.size());
    dev[b.first] = device.in(b.first, b.second);
  }
  auto ptr = [&](const char* x) { return dev.count(x) ? dev[x] : nullptr; };
  SPAN_cublasLtHandle_t h = nullptr;
  if (lt.create(&h) != 0) return std::fprintf(stderr, "lt-run: cublasLtCreate failed\n"), 2;
  SPAN_cublasLtMatmulDesc_t desc = descriptor(lt, c, dev);
  SPAN_cublasLtMatrixLayout_t A = layout(lt, c, "A"), B = layout(lt, c, "B"), C = layout(lt, c, "C"), D = layout(lt, c, "D");
  SPAN_cublasLtMatmulPreference_t pref = nullptr;
  lt.prefCreate(&pref);
  uint64_t ws = 0;
  SPAN_cublasLtMatmulHeuristicResult_t res[1];
  std::memset(res, 0, sizeof(res));
  int count = 0, hs = -1;
  if (!c.noalgo) hs = lt.heuristic(h, desc, A, B, C, D, pref, 1, res, &count);
  std::printf("heuristic %d %d\n", hs, count);
  void* Dp = c.alias ? ptr("C") : ptr("D");
  int s = lt.matmul(h, desc, &c.alpha, ptr("A"), A, ptr("B"), B, &c.beta, ptr("C"), C, Dp, D, count > 0 ? &res[0].algo : nullptr, nullptr, ws, nullptr);
  std::printf("matmul %d\n", s);
  for (auto& b : c.bufs) {
    device.out(b.first, b.second);
    std::ofstream o(std::string(argv[3]) + "/" + b.first + ".bin", std::ios::binary);
    o.write(b.second.data(), (std::streamsize)b.second.size());
  }
  return 0;
}
