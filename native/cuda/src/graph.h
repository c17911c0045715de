// One training step as a CUDA Graph (docs/cuda-backend.md, "One step as a CUDA Graph"). Between
// graphBegin and graphEnd the device runtime records the step's stream work (launches, cuBLASLt
// matmuls, device copies, memsets, uploads) on a host tape instead of issuing it. At graphEnd the
// tape is compared, op by op and byte by byte (kernel arguments and device addresses included),
// with the graphs captured earlier under the same key: equal to one, that graph is launched (one
// cuGraphLaunch; the uploads' bytes go through a pinned staging buffer the graph reads); equal to
// the work of one of the key's last 4 steps, it is captured into a new graph (cuStreamBeginCapture
// … cuStreamEndCapture) and launched, up to kMaxGraphs per key; else it runs eagerly (a warm-up,
// or after 4 such steps in a row, declined with the reason). A host read, a stream
// synchronisation or emptyCache during the step issues the tape eagerly at that point and the
// step declines (outcome says why).
#ifndef SPAN_CUDA_GRAPH_H
#define SPAN_CUDA_GRAPH_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "device.h"

namespace span_cuda {

/** True between graphBegin and graphEnd while the tape records (false while the tape is being issued). */
bool graphRecording();

/** While recording: which free block of a size class a step's allocation takes (the lowest address). */
std::vector<uint64_t>::iterator graphPick(std::vector<uint64_t>& list);

std::string graphBegin(const std::string& key);
/** While recording: the step's key replaced (its input shapes, known only once the step has built its batch). */
std::string graphKey(const std::string& key);
/** Ends the step: *outcome is "captured", "replayed", "warm-up" (eager, its work remembered) or "eager: why". */
std::string graphEnd(std::string* outcome);
/** The tape issued eagerly now and recording stopped for this step (a host read or sync needs the work done). */
std::string graphBreak(const char* why);

// The runtime's entry points call these first while graphRecording(): the op goes on the tape.
std::string graphRecordLaunch(int fn, const unsigned grid[3], const unsigned block[3], unsigned shared, const std::string& types, const std::vector<double>& values);
std::string graphRecordGemm(const Gemm& g);
std::string graphRecordCopy(uint64_t dst, uint64_t src, size_t bytes);
std::string graphRecordMemsetD32(uint64_t dst, uint32_t value, size_t count);
std::string graphRecordUpload(uint64_t dst, const void* src, size_t bytes);

struct GraphStats {
  double captured = 0, replayed = 0, warmup = 0, eager = 0, graphs = 0, lastOps = 0;
};
GraphStats graphStats();
/** Destroys every graph (and its staging buffer). */
void graphReset();

}  // namespace span_cuda

#endif
