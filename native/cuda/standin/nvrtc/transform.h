// The NVRTC stand-in's one source rewrite before g++ sees a program: extern __shared__ arrays
// become pointers into the block's dynamic shared memory, and the extern "C" __global__
// kernels are listed for the module's kernel table. Line numbers are kept. Test-only code.
#ifndef SPAN_NVRTC_TRANSFORM_H
#define SPAN_NVRTC_TRANSFORM_H

#include <string>
#include <vector>

namespace span_nvrtc {

struct Transformed {
  std::string text;                  // the program with extern __shared__ rewritten
  std::vector<std::string> kernels;  // extern "C" __global__ functions, in order, once each
  std::string error;                 // what the emulator cannot take (reported as a compile error)
};

/** Rewrites `source` (named `name` in messages) for the emulator and appends nothing: see tableSource. */
Transformed transform(const std::string& source, const std::string& name);

/** The kernel table the module exports (span_emu_kernels), to append after the program. */
std::string tableSource(const std::vector<std::string>& kernels);

}  // namespace span_nvrtc

#endif
