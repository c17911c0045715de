// INFINITY is not defined under NVRTC, so it must not compile on the emulator either.
extern "C" __global__ void inf(float* x) { x[0] = INFINITY; }
