// A kernel with a syntax error on line 3: the NVRTC stand-in must report it through the log.
extern "C" __global__ void broken(float* x) {
  x[threadIdx.x] = 1.0f +;
}
