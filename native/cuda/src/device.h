// The cuda backend's device runtime: one context on device N with one stream, a caching
// allocator, copies, NVRTC modules, launches with typed arguments and cuBLASLt matmuls, all
// through abi.h's dlopened prototypes (no CUDA headers at build time). Every call returns an
// empty string on success, else one line naming the API and the error (addon.cc throws it).
#ifndef SPAN_CUDA_DEVICE_H
#define SPAN_CUDA_DEVICE_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace span_cuda {

/** Opens the context on `ordinal` with the three libraries already dlopened; "" or why not. */
std::string deviceOpen(void* libcuda, void* libnvrtc, void* libcublasLt, int ordinal);
bool deviceIsOpen();

/** Caching allocator: a block of at least `bytes` (its size class), from the free lists when one is there. */
std::string deviceAlloc(size_t bytes, uint64_t* ptr);
/** Back to its size class' free list (the memory stays allocated on the device). */
std::string deviceFree(uint64_t ptr);
/** cuMemFree of every cached block. */
std::string deviceEmptyCache();

struct AllocStats {
  size_t liveBytes = 0, peakBytes = 0, cachedBytes = 0, liveBlocks = 0, deviceBytes = 0;
};
AllocStats deviceStats();
/** peakBytes = liveBytes: the peak from now on is the most handed out at once after this call (per step). */
void deviceResetPeak();

std::string deviceUpload(uint64_t dst, const void* src, size_t bytes);
std::string deviceDownloadSync(void* dst, uint64_t src, size_t bytes);
std::string deviceCopy(uint64_t dst, uint64_t src, size_t bytes);
std::string deviceMemsetD32(uint64_t dst, uint32_t value, size_t count);
std::string deviceSync();

/** An async read: D2H into pinned memory, then an event; poll until done, then take the bytes. */
std::string deviceReadStart(uint64_t src, size_t bytes, int* id);
/** 1 when done (bytes copied into dst and the read released), 0 while pending. */
std::string deviceReadPoll(int id, void* dst, int* done);

/** NVRTC compile of `source` for the device's arch and cuModuleLoadData; returns the module index. */
std::string deviceLoadModule(const std::string& source, const std::string& name, const std::vector<std::string>& options, int* module);
std::string deviceGetFunction(int module, const std::string& name, int* fn);
/** Arguments: one type char each ('p' pointer, 'i' int32, 'u' uint32, 'l' int64, 'f' float) and its value. */
std::string deviceLaunch(int fn, const unsigned grid[3], const unsigned block[3], unsigned shared, const std::string& types, const std::vector<double>& values);

/** A column-major operand as cuBLASLt stores it: rows × cols, leading dimension, batch stride (elements). */
struct Operand {
  uint64_t ptr = 0, rows = 0, cols = 0;
  int64_t ld = 0, stride = 0;
};

/**
 * One cuBLASLt matmul in its own terms (gemm-layout.ts ltGemm maps tfjs' row-major product to
 * it): D = alpha·op(A)·op(B) + beta·C with D = C, m × n, batched by strides (0 broadcasts).
 */
struct Gemm {
  bool transA = false, transB = false, tf32 = false;
  bool bf16 = false;  // A and B hold bf16 (CUDA_R_16BF), C/D fp32; CUBLAS_COMPUTE_32F (fp32 accumulation)
  bool fp16 = false;  // A and B hold fp16 (CUDA_R_16F), C/D fp32; CUBLAS_COMPUTE_32F (fp32 accumulation)
  int batch = 1;
  float alpha = 1, beta = 0;
  Operand A, B, C;
  // cuBLASLt epilogue (SPAN_CUBLASLT_EPILOGUE_*; DEFAULT: none), its bias vector (length C.rows, fp32 as D)
  // and aux matrix (GELU_AUX*, DGELU*: fp32, C.rows × C.cols with ld auxLd); 0 where unused
  uint32_t epilogue = 1;  // SPAN_CUBLASLT_EPILOGUE_DEFAULT (abi.h)
  uint64_t bias = 0, aux = 0;
  int64_t auxLd = 0;
};
std::string deviceGemm(const Gemm& g);

/** The arch the modules are compiled for (80 for sm_80). */
int deviceArch();

}  // namespace span_cuda

#endif
