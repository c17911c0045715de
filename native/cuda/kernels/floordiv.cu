// tfjs FloorDiv of float32 inputs on the cuda backend, as tfjs-backend-cpu computes it
// (kernels/FloorDiv.ts: Math.floor(a / b) in double, the result stored in an Int32Array: the
// output dtype is int32, NaN and ±Infinity become 0, other values wrap modulo 2³² as JavaScript's
// ToInt32 does). The quotient is taken in double, not float: a float quotient can round up to the
// next integer (floor then differs). Numpy broadcasting right-aligned to rank 6 as binary.cu:
// d0..d5 the output's sizes, sa*/sb* each input's element strides (0 where broadcast). int32
// inputs go through binary.cu's span_binary_i32 (op 8). One thread per element, grid-stride.
//
// CPU reference: out[i] = ToInt32(floor((double)a[ia(i)] / (double)b[ib(i)])).
extern "C" __global__ void span_floordiv_f32_i32(const float* __restrict__ a, const float* __restrict__ b, int* __restrict__ out, long long n,
                                                 long long d0, long long d1, long long d2, long long d3, long long d4, long long d5, long long sa0,
                                                 long long sa1, long long sa2, long long sa3, long long sa4, long long sa5, long long sb0,
                                                 long long sb1, long long sb2, long long sb3, long long sb4, long long sb5) {
  const long long d[6] = {d0, d1, d2, d3, d4, d5};
  const long long sa[6] = {sa0, sa1, sa2, sa3, sa4, sa5};
  const long long sb[6] = {sb0, sb1, sb2, sb3, sb4, sb5};
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    long long r = i, ia = 0, ib = 0;
    for (int k = 5; k >= 0; k--) {
      const long long c = r % d[k];
      r /= d[k];
      ia += c * sa[k];
      ib += c * sb[k];
    }
    const double q = floor((double)a[ia] / (double)b[ib]);
    if (!(q == q) || q == 1.0 / 0.0 || q == -1.0 / 0.0) {
      out[i] = 0;
      continue;
    }
    double m = fmod(q, 4294967296.0);  // ToInt32: modulo 2³², then into [−2³¹, 2³¹)
    if (m < 0) m += 4294967296.0;
    out[i] = (int)(m >= 2147483648.0 ? m - 4294967296.0 : m);
  }
}
