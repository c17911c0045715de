// Elementwise binary ops with numpy broadcasting (tfjs Add, Sub, Multiply, RealDiv, Maximum,
// Minimum, Pow, SquaredDifference, FloorDiv; Equal … LogicalOr), float32 and int32 (bool is
// int32 0/1 on the device). Shapes are right-aligned to rank 6: d0..d5 the output's sizes,
// sa*/sb* each input's element strides along them (0 where broadcast). One thread per output
// element, grid-stride.
//
// CPU reference (tfjs-backend-cpu binary_impl.ts): out[i] = op(a[index of i in a], b[… in b]).
#define SPAN_ARGS                                                                                                           \
  long long n, long long d0, long long d1, long long d2, long long d3, long long d4, long long d5, long long sa0, long long sa1, \
      long long sa2, long long sa3, long long sa4, long long sa5, long long sb0, long long sb1, long long sb2, long long sb3,   \
      long long sb4, long long sb5

/** The offsets into a and b of output element i. */
__device__ __forceinline__ void offsets(long long i, SPAN_ARGS, long long* ia, long long* ib) {
  const long long d[6] = {d0, d1, d2, d3, d4, d5};
  const long long sa[6] = {sa0, sa1, sa2, sa3, sa4, sa5};
  const long long sb[6] = {sb0, sb1, sb2, sb3, sb4, sb5};
  long long oa = 0, ob = 0;
  for (int k = 5; k >= 0; k--) {
    const long long c = i % d[k];
    i /= d[k];
    oa += c * sa[k];
    ob += c * sb[k];
  }
  *ia = oa;
  *ib = ob;
}

__device__ __forceinline__ float arith(int op, float x, float y) {
  switch (op) {
    case 0: return x + y;
    case 1: return x - y;
    case 2: return x * y;
    case 3: return x / y;
    case 4: return (x != x || y != y) ? x + y : fmaxf(x, y);
    case 5: return (x != x || y != y) ? x + y : fminf(x, y);
    case 6: return powf(x, y);
    case 7: return (x - y) * (x - y);
    default: return floorf(x / y);
  }
}

__device__ __forceinline__ int arith(int op, int x, int y) {
  switch (op) {
    case 0: return x + y;
    case 1: return x - y;
    case 2: return x * y;
    case 3: return y == 0 ? 0 : x / y;
    case 4: return x > y ? x : y;
    case 5: return x < y ? x : y;
    case 6: return (int)powf((float)x, (float)y);
    case 7: return (x - y) * (x - y);
    default: {
      if (y == 0) return 0;
      int q = x / y;
      return (q * y != x && ((x < 0) != (y < 0))) ? q - 1 : q;
    }
  }
}

template <class T>
__device__ __forceinline__ int compare(int op, T x, T y) {
  switch (op) {
    case 0: return x == y;
    case 1: return x != y;
    case 2: return x > y;
    case 3: return x >= y;
    case 4: return x < y;
    case 5: return x <= y;
    case 6: return (x != 0) && (y != 0);
    default: return (x != 0) || (y != 0);
  }
}

#define SPAN_PASS n, d0, d1, d2, d3, d4, d5, sa0, sa1, sa2, sa3, sa4, sa5, sb0, sb1, sb2, sb3, sb4, sb5

struct Arith {
  template <class T>
  __device__ __forceinline__ T operator()(int op, T x, T y) const { return arith(op, x, y); }
};

struct Compare {
  template <class T>
  __device__ __forceinline__ int operator()(int op, T x, T y) const { return compare(op, x, y); }
};

/** out[i] = f(op, a[ia], b[ib]) for every output element (grid-stride), the four kernels' one loop. */
template <class F, class T, class U>
__device__ __forceinline__ void broadcast(F f, const T* a, const T* b, U* out, int op, SPAN_ARGS) {
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    long long ia, ib;
    offsets(i, SPAN_PASS, &ia, &ib);
    out[i] = f(op, a[ia], b[ib]);
  }
}

extern "C" __global__ void span_binary_f32(const float* a, const float* b, float* out, int op, SPAN_ARGS) { broadcast(Arith(), a, b, out, op, SPAN_PASS); }

extern "C" __global__ void span_binary_i32(const int* a, const int* b, int* out, int op, SPAN_ARGS) { broadcast(Arith(), a, b, out, op, SPAN_PASS); }

extern "C" __global__ void span_compare_f32(const float* a, const float* b, int* out, int op, SPAN_ARGS) { broadcast(Compare(), a, b, out, op, SPAN_PASS); }

extern "C" __global__ void span_compare_i32(const int* a, const int* b, int* out, int op, SPAN_ARGS) { broadcast(Compare(), a, b, out, op, SPAN_PASS); }
