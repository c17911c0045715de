// The test driver of native/cuda/kernels/adamw_multi.cu on the stand-in device (adamw-multi.test.ts):
// fused-harness.cc's loading, launching and Report (included, its main renamed), and one scenario:
//   adamw-multi-harness DIR KERNELS_DIR STEP WD MAXNORM GRID BLOCK CHUNK SIZE...
// tensors of the given sizes (0 allowed), every other one exempt from decay, each with its own
// learning rate: the squared global norm and the clipping factor in one launch, then every update
// in one launch, against a double CPU reference, and against adamw.cu's per-tensor kernel run with
// the same device factor (bitsDiffer: elements of p, m, v whose bits differ from it).
#define main fused_harness_main
#include "fused-harness.cc"
#undef main

namespace {

struct Entry {
  unsigned long long p, m, v, g;
  long long n, chunk0;
  float lr, wd;
};
static_assert(sizeof(Entry) == 56, "adamw_multi.cu's SpanTensorEntry");

int adamwMulti(int t, float wd, float maxNorm, unsigned grid, unsigned block, long long chunk, const std::vector<long long>& sizes) {
  const float b1 = 0.9f, b2 = 0.999f, eps = 1e-8f, bc1 = 1 - std::pow(b1, t), bc2 = 1 - std::pow(b2, t);
  std::vector<std::vector<float>> P, M, V, G;
  std::vector<Entry> table, twin;  // twin: copies updated by the per-tensor kernel
  long long chunks = 0;
  double ref = 0;
  for (size_t k = 0; k < sizes.size(); k++) {
    long long n = sizes[k];
    P.push_back(randn(n)), M.push_back(randn(n, 0.01f)), V.push_back(randn(n, 0.001f)), G.push_back(randn(n, 0.02f + 0.05f * (k % 3)));
    for (auto& x : V.back()) x = std::fabs(x);
    for (float x : G.back()) ref += double(x) * x;
    float lr = 1e-3f * (1 + k % 2), w = k % 2 ? 0.0f : wd;
    if (n == 0) continue;  // the caller leaves empty tensors out
    table.push_back({upload(P[k]), upload(M[k]), upload(V[k]), upload(G[k]), n, chunks, lr, w});
    twin.push_back({upload(P[k]), upload(M[k]), upload(V[k]), table.back().g, n, chunks, lr, w});
    chunks += (n + chunk - 1) / chunk;
  }
  int count = static_cast<int>(table.size());
  Dev dtable = upload(table), dbc = upload(std::vector<float>{bc1, bc2}), partials = alloc(grid * 8), ticket = alloc(4), sumsq = alloc(4), factor = alloc(4);
  launch(function("adamw_multi.cu", "span_multi_sum_squares_clip_f32"), grid, block,
         {&dtable, &count, &chunk, &chunks, &partials, &ticket, &maxNorm, &sumsq, &factor});
  launch(function("adamw_multi.cu", "span_adamw_multi_f32"), grid, block, {&dtable, &count, &chunk, &chunks, (void*)&b1, (void*)&b2, (void*)&eps, &dbc, &factor});
  const float f = download<float>(factor, 1)[0];
  double coef = maxNorm / (std::sqrt(double(static_cast<float>(ref))) + 1e-6), rf = coef < 1 ? coef : 1.0;
  Report rep;
  rep.compare("sumsq", download<float>(sumsq, 1), {ref}), rep.compare("factor", {f}, {rf});
  long long differ = 0;
  std::vector<float> outP, outM, outV;
  std::vector<double> rp, rm, rv;
  for (size_t k = 0, e = 0; k < sizes.size(); k++) {
    long long n = sizes[k];
    if (n == 0) continue;
    const Entry& x = table[e];
    Entry& y = twin[e++];
    float lr = x.lr, w = x.wd;
    launch(function("adamw.cu", "span_adamw_f32"), 7, 64, {&y.p, &y.m, &y.v, &y.g, &y.p, &y.m, &y.v, &n, &lr, (void*)&b1, (void*)&b2, (void*)&eps, &w, (void*)&bc1, (void*)&bc2, &factor});
    std::vector<float> gp = download<float>(x.p, n), gm = download<float>(x.m, n), gv = download<float>(x.v, n);
    std::vector<float> tp = download<float>(y.p, n), tm = download<float>(y.m, n), tv = download<float>(y.v, n);
    differ += memcmp(gp.data(), tp.data(), n * 4) != 0 || memcmp(gm.data(), tm.data(), n * 4) != 0 || memcmp(gv.data(), tv.data(), n * 4) != 0;
    for (long long i = 0; i < n; i++) {
      double gi = double(G[k][i]) * f, mi = b1 * double(M[k][i]) + (1 - double(b1)) * gi, vi = b2 * double(V[k][i]) + (1 - double(b2)) * gi * gi;
      rm.push_back(mi), rv.push_back(vi), rp.push_back(P[k][i] * (1 - double(lr) * w) - double(lr) / bc1 * (mi / (std::sqrt(vi / bc2) + eps)));
    }
    outP.insert(outP.end(), gp.begin(), gp.end()), outM.insert(outM.end(), gm.begin(), gm.end()), outV.insert(outV.end(), gv.begin(), gv.end());
  }
  rep.compare("p", outP, rp), rep.compare("m", outM, rm), rep.compare("v", outV, rv);
  rep.extra = ",\"tensorsDifferFromPerTensor\":" + std::to_string(differ) + ",\"ticket\":" + std::to_string(download<unsigned>(ticket, 1)[0]);
  return rep.print();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 10) return fprintf(stderr, "usage: adamw-multi-harness DIR KERNELS_DIR STEP WD MAXNORM GRID BLOCK CHUNK SIZE...\n"), 2;
  load(argv[1]);
  kernels = argv[2];
  init();
  std::vector<long long> sizes;
  for (int i = 9; i < argc; i++) sizes.push_back(atoll(argv[i]));
  return adamwMulti(atoi(argv[3]), atof(argv[4]), atof(argv[5]), atoi(argv[6]), atoi(argv[7]), atoll(argv[8]), sizes);
}
