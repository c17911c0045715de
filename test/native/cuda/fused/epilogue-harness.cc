// The test driver of issue 21's fused epilogues (native/cuda/kernels/residual_layernorm.cu,
// linear_gelu.cu and bias_grad.cu) on the stand-in device (epilogue-kernels.test.ts). It is
// fused-harness.cc (its loader, launches, Report and the other scenarios) with these scenarios added:
// each output against a double CPU reference of the formula the .cu file cites, and against the
// simple kernels it replaces (bias_gelu.cu, dropout.cu, layernorm.cu, linear_backward.cu) run on the
// same inputs (`simple*` entries: the largest difference relative to the output's largest value).
//   epilogue-harness DIR KERNELS_DIR SCENARIO [ARGS...]
#define main fused_harness_main
#include "fused-harness.cc"
#undef main

namespace {

/** Launches fn on a 2-D grid and a 1-D block (timed into launchMs). */
void launch2(SPAN_CUfunction fn, unsigned gx, unsigned gy, unsigned block, std::vector<void*> params) {
  auto t0 = std::chrono::steady_clock::now();
  CHECK(A.cuLaunchKernel(fn, gx, gy, 1, block, 1, 1, 0, nullptr, params.data(), nullptr));
  CHECK(A.cuCtxSynchronize());
  launchMs += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

std::vector<double> widen(const std::vector<float>& v) { return std::vector<double>(v.begin(), v.end()); }

/** native/src/mathfn.h dropout_keeps. */
bool keeps(uint64_t base, long long i, float keep) { return keep >= 1.0f || static_cast<float>(splitmix(base + i) >> 40) * (1.0f / 16777216.0f) < keep; }

/**
 * residual_layernorm.cu: y = LN(dropout(z + bias) + residual) with s, mean, rstd, then ds, dz and
 * dg, dbeta, dbias from dy; against a double reference with the same mask (native's), and against
 * bias_add + dropout + add + layernorm (forward) and layernorm backward + dropout + bias_grad.
 */
int residualLayerNorm(long long N, int H, unsigned block, float keep, unsigned long long seed) {
  Dev dseed = upload(std::vector<unsigned long long>{seed});  // the kernels read the seed from the device (a graph replays it as data)
  const float eps = 1e-12f;
  long long n = N * H, chunks = (N + 31) / 32, HH = H;
  std::vector<float> z = randn(n, 2.0f, 0.3f), bias = randn(H, 0.5f), res = randn(n), g = randn(H, 0.1f, 1.0f), beta = randn(H, 0.1f), dy = randn(n);
  Dev dz_ = upload(z), db_ = upload(bias), dr = upload(res), dg_ = upload(g), dbe = upload(beta), ddy = upload(dy);
  Dev s = alloc(n * 4), y = alloc(n * 4), mean = alloc(N * 4), rstd = alloc(N * 4), ds = alloc(n * 4), dz = alloc(n * 4), part = alloc(chunks * 3 * H * 4);
  Dev gg = alloc(H * 4), gbe = alloc(H * 4), gbi = alloc(H * 4);
  unsigned grid = N > 0 ? std::min<long long>(N, 1000) : 1, cgrid = chunks > 0 ? std::min<long long>(chunks, 7) : 1;
  auto fn = [](const char* k) { return function("residual_layernorm.cu", k); };
  launch(fn("span_residual_layernorm_forward_f32"), grid, block, {&dz_, &db_, &dr, &dg_, &dbe, &s, &y, &mean, &rstd, &N, &H, (void*)&eps, &keep, &dseed});
  launch(fn("span_residual_layernorm_backward_f32"), cgrid, block, {&ddy, &s, &dg_, &mean, &rstd, &ds, &dz, &part, &N, &H, &keep, &dseed});
  launch(fn("span_residual_layernorm_params_f32"), 3, 64, {&part, &gg, &gbe, &gbi, &chunks, &H});
  const double launched = launchMs;
  // the reference, in double, with native's mask
  uint64_t base = splitmix(seed);
  std::vector<double> rs_(n), ry(n), rm(N), rr(N), rds(n), rdz(n), rg(H, 0.0), rbe(H, 0.0), rbi(H, 0.0);
  for (long long r = 0; r < N; r++) {
    double m = 0, v = 0, s1 = 0, s2 = 0;
    for (int j = 0; j < H; j++) {
      long long i = r * H + j;
      float pre = z[i] + bias[j];  // the GEMM output and the bias: fp32, as every backend rounds it
      rs_[i] = (keeps(base, i, keep) ? double(pre) / keep : 0.0) + res[i];
      m += rs_[i];
    }
    m /= H;
    for (int j = 0; j < H; j++) v += (rs_[r * H + j] - m) * (rs_[r * H + j] - m);
    double rstdv = 1.0 / std::sqrt(v / H + eps);
    rm[r] = m, rr[r] = rstdv;
    for (int j = 0; j < H; j++) {
      long long i = r * H + j;
      double xh = (rs_[i] - m) * rstdv, u = double(dy[i]) * g[j];
      ry[i] = xh * g[j] + beta[j];
      s1 += u, s2 += u * xh;
      rg[j] += dy[i] * xh, rbe[j] += dy[i];
    }
    for (int j = 0; j < H; j++) {
      long long i = r * H + j;
      double xh = (rs_[i] - m) * rstdv;
      rds[i] = rstdv * (double(dy[i]) * g[j] - s1 / H - xh * s2 / H);
      rdz[i] = keeps(base, i, keep) ? rds[i] / keep : 0.0;
      rbi[j] += rdz[i];
    }
  }
  Report rep;
  std::vector<float> S = download<float>(s, n), Y = download<float>(y, n), M = download<float>(mean, N), R = download<float>(rstd, N);
  std::vector<float> DS = download<float>(ds, n), DZ = download<float>(dz, n), G = download<float>(gg, H), BE = download<float>(gbe, H), BI = download<float>(gbi, H);
  rep.compare("s", S, rs_), rep.compare("y", Y, ry), rep.compare("mean", M, rm), rep.compare("rstd", R, rr);
  rep.compare("ds", DS, rds), rep.compare("dz", DZ, rdz), rep.compare("dg", G, rg), rep.compare("dbeta", BE, rbe), rep.compare("dbias", BI, rbi);
  // the simple kernels on the same inputs: bias_add, dropout, add (host), layernorm; layernorm backward, dropout, bias_grad
  Dev t = alloc(n * 4), t2 = alloc(n * 4), sy = alloc(n * 4), sm = alloc(N * 4), sr = alloc(N * 4), sdx = alloc(n * 4), sdz = alloc(n * 4);
  Dev sg = alloc(H * 4), sbe = alloc(H * 4), sbi = alloc(H * 4);
  launch(function("bias_gelu.cu", "span_bias_add_f32"), 40, 128, {&dz_, &db_, &t, &N, &HH});
  if (keep < 1.0f) launch(function("dropout.cu", "span_dropout_f32"), 40, 128, {&t, &t, &n, &keep, &dseed});
  std::vector<float> sum = download<float>(t, n);
  for (long long i = 0; i < n; i++) sum[i] += res[i];  // the census add: one fp32 addition
  if (n) CHECK(A.cuMemcpyHtoD_v2(t2, sum.data(), n * 4));
  launch(function("layernorm.cu", "span_layernorm_forward_f32"), grid, block, {&t2, &dg_, &dbe, &sy, &sm, &sr, &N, &H, (void*)&eps});
  launch(function("layernorm.cu", "span_layernorm_backward_dx_f32"), grid, block, {&ddy, &t2, &dg_, &sm, &sr, &sdx, &N, &H});
  launch(function("layernorm.cu", "span_layernorm_backward_params_f32"), 3, 128, {&ddy, &t2, &sm, &sr, &sg, &sbe, &N, &H});
  if (keep < 1.0f) launch(function("dropout.cu", "span_dropout_f32"), 40, 128, {&sdx, &sdz, &n, &keep, &dseed});
  else CHECK(A.cuMemcpyHtoD_v2(sdz, download<float>(sdx, n).data(), n * 4));
  launch(function("linear_backward.cu", "span_bias_grad_f32"), 3, 64, {&sdz, &sbi, &N, &HH});
  rep.compare("simpleS", S, widen(sum)), rep.compare("simpleY", Y, widen(download<float>(sy, n)));
  rep.compare("simpleDs", DS, widen(download<float>(sdx, n))), rep.compare("simpleDz", DZ, widen(download<float>(sdz, n)));
  rep.compare("simpleDg", G, widen(download<float>(sg, H))), rep.compare("simpleDbeta", BE, widen(download<float>(sbe, H)));
  rep.compare("simpleDbias", BI, widen(download<float>(sbi, H)));
  long long dropped = 0, maskDiffers = 0;
  for (long long i = 0; i < n; i++) {
    bool k = keeps(base, i, keep);
    dropped += !k;
    maskDiffers += (DZ[i] == 0.0f) != (!k || rds[i] == 0.0);  // dz is 0 exactly where native's mask drops
  }
  launchMs = launched;
  rep.extra = ",\"dropped\":" + std::to_string(dropped) + ",\"maskDiffers\":" + std::to_string(maskDiffers);
  return rep.print();
}

/** linear_gelu.cu: z ← z + bias, y = gelu(z); dz = dy·gelu′(z), db = Σ_rows dz; against a double reference and bias_gelu.cu + linear_backward.cu. */
int linearGelu(long long rows, long long cols, unsigned gy) {
  long long n = rows * cols, chunks = (rows + 31) / 32;
  std::vector<float> z = randn(n, 2.0f), bias = randn(cols, 0.5f), dy = randn(n);
  Dev dzin = upload(z), dz0 = upload(z), db_ = upload(bias), ddy = upload(dy), y = alloc(n * 4), dz = alloc(n * 4), part = alloc(chunks * cols * 4), db = alloc(cols * 4);
  unsigned gx = static_cast<unsigned>(std::max<long long>(1, std::min<long long>((cols + 127) / 128, 3)));
  launch(function("linear_gelu.cu", "span_bias_gelu_keep_f32"), 37, 128, {&dzin, &db_, &y, &rows, &cols});
  launch2(function("linear_gelu.cu", "span_gelu_backward_partials_f32"), gx, gy, 128, {&ddy, &dzin, &dz, &part, &rows, &cols});
  launch(function("linear_gelu.cu", "span_gelu_bias_sum_f32"), 2, 64, {&part, &db, &chunks, &cols});
  const double launched = launchMs;
  std::vector<double> rz(n), ry(n), rdz(n), rdb(cols, 0.0);
  for (long long i = 0; i < n; i++) {
    float v = z[i] + bias[i % cols];
    rz[i] = v, ry[i] = 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
    rdz[i] = dy[i] * (0.5 * (1 + std::erf(v / std::sqrt(2.0))) + v * std::exp(-0.5 * double(v) * v) / std::sqrt(2 * M_PI));
    rdb[i % cols] += rdz[i];
  }
  Report rep;
  std::vector<float> Z = download<float>(dzin, n), Y = download<float>(y, n), DZ = download<float>(dz, n), DB = download<float>(db, cols);
  rep.compare("z", Z, rz), rep.compare("y", Y, ry), rep.compare("dz", DZ, rdz), rep.compare("db", DB, rdb);
  // the simple kernels: bias_gelu + bias_add, gelu_backward + bias_grad
  Dev sy = alloc(n * 4), sz = alloc(n * 4), sdz = alloc(n * 4), sdb = alloc(cols * 4);
  launch(function("bias_gelu.cu", "span_bias_gelu_f32"), 37, 128, {&dz0, &db_, &sy, &rows, &cols});
  launch(function("bias_gelu.cu", "span_bias_add_f32"), 37, 128, {&dz0, &db_, &sz, &rows, &cols});
  launch(function("linear_backward.cu", "span_gelu_backward_f32"), 37, 128, {&ddy, &sz, &sdz, &n});
  launch(function("linear_backward.cu", "span_bias_grad_f32"), 3, 64, {&sdz, &sdb, &rows, &cols});
  std::vector<float> SZ = download<float>(sz, n), SY = download<float>(sy, n), SDZ = download<float>(sdz, n), SDB = download<float>(sdb, cols);
  rep.compare("simpleZ", Z, widen(SZ)), rep.compare("simpleY", Y, widen(SY)), rep.compare("simpleDz", DZ, widen(SDZ)), rep.compare("simpleDb", DB, widen(SDB));
  long long differ = 0;  // the same fp32 formulas elementwise: the same bits; db the same sum order
  for (long long i = 0; i < n; i++) differ += Z[i] != SZ[i] || Y[i] != SY[i] || DZ[i] != SDZ[i];
  for (long long j = 0; j < cols; j++) differ += DB[j] != SDB[j];
  launchMs = launched;
  rep.extra = ",\"bitsDiffer\":" + std::to_string(differ);
  return rep.print();
}

/** bias_grad.cu: db = Σ_rows dz by chunk partials; against a double reference and linear_backward.cu's span_bias_grad_f32 (the same bits). */
int biasGrad(long long rows, long long cols, unsigned gy) {
  long long n = rows * cols, chunks = (rows + 31) / 32;
  std::vector<float> dz = randn(n, 1.0f, 0.2f);
  Dev d = upload(dz), part = alloc(chunks * cols * 4), db = alloc(cols * 4), sdb = alloc(cols * 4);
  unsigned gx = static_cast<unsigned>(std::max<long long>(1, std::min<long long>((cols + 127) / 128, 3)));
  launch2(function("bias_grad.cu", "span_bias_grad_partials_f32"), gx, gy, 128, {&d, &part, &rows, &cols});
  launch(function("bias_grad.cu", "span_bias_grad_sum_f32"), 2, 64, {&part, &db, &chunks, &cols});
  const double launched = launchMs;
  launch(function("linear_backward.cu", "span_bias_grad_f32"), 3, 64, {&d, &sdb, &rows, &cols});
  std::vector<double> ref(cols, 0.0);
  for (long long i = 0; i < n; i++) ref[i % cols] += dz[i];
  std::vector<float> DB = download<float>(db, cols), SDB = download<float>(sdb, cols);
  Report rep;
  rep.compare("db", DB, ref), rep.compare("simpleDb", DB, widen(SDB));
  long long differ = 0;
  for (long long j = 0; j < cols; j++) differ += DB[j] != SDB[j];
  launchMs = launched;
  rep.extra = ",\"bitsDiffer\":" + std::to_string(differ);
  return rep.print();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) return fprintf(stderr, "usage: epilogue-harness DIR KERNELS_DIR SCENARIO [ARGS...]\n"), 2;
  std::string s = argv[3];
  auto arg = [&](int i, double d) { return argc > 4 + i ? atof(argv[4 + i]) : d; };
  if (s != "residual-layernorm" && s != "linear-gelu" && s != "bias-grad") return fused_harness_main(argc, argv);
  load(argv[1]);
  kernels = argv[2];
  init();
  if (s == "residual-layernorm") return residualLayerNorm(arg(0, 37), arg(1, 300), arg(2, 128), arg(3, 0.9), static_cast<unsigned long long>(arg(4, 42)));
  if (s == "bias-grad") return biasGrad(arg(0, 37), arg(1, 300), arg(2, 2));
  return linearGelu(arg(0, 37), arg(1, 300), arg(2, 2));
}
