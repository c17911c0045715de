// One training step as a CUDA Graph: the tape, its comparison with the graphs captured before,
// capture and replay (graph.h says what; docs/cuda-backend.md why and what it removes).
#include "graph.h"

#include <dlfcn.h>
#include <node_api.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <algorithm>
#include <map>

#include "../../src/napi-util.h"
#include "abi.h"
#include "state.h"

namespace span_cuda {

namespace {

constexpr size_t kMaxGraphs = 4;  // per key: the allocator's addresses may alternate between a few patterns
constexpr size_t kRecent = 4;     // steps of a key remembered (their work) to capture one when it recurs
constexpr double kMaxGraphsHeld = 64;  // in all: each holds its pinned staging buffer and the driver's executable graph
constexpr size_t kMaxKeys = 256;       // keys remembered: beyond, those without a graph are forgotten (a run whose shapes never repeat)

struct Op {
  std::string sig;  // what must be equal for a captured graph to stand for this op: its kind, arguments, addresses
  std::function<std::string(const char* uploads)> issue;  // on the stream; `uploads`: where the step's upload bytes lie
};

struct Captured {
  std::vector<std::string> sigs;
  SPAN_CUgraphExec exec = nullptr;
  void* staging = nullptr;  // pinned: the uploads' bytes, which the graph's copies read at each launch
  SPAN_CUevent done = nullptr;
  bool launched = false;
};

struct Driver {
  bool bound = false;
  span_cuStreamBeginCapture_v2_t begin = nullptr;
  span_cuStreamEndCapture_t end = nullptr;
  span_cuGraphInstantiateWithFlags_t instantiate = nullptr;
  span_cuGraphLaunch_t launch = nullptr;
  span_cuGraphDestroy_t destroy = nullptr;
  span_cuGraphExecDestroy_t destroyExec = nullptr;
  span_cuEventSynchronize_t eventSync = nullptr;
};

struct Tape {
  bool active = false, issuing = false;
  std::string key, declined;
  std::vector<Op> ops;
  std::string uploads;  // the step's upload bytes, back to back
};

Tape tape;
Driver drv;
struct KeyState {
  std::vector<Captured> graphs;
  std::deque<std::vector<std::string>> recent;  // the work of its last steps no graph stood for
  size_t misses = 0;                            // such steps in a row
};
std::map<std::string, KeyState> keys;
std::map<std::string, std::string> disabled;  // key → why it runs eagerly
GraphStats stats;

/** The capture entry points from the libcuda the loader opened (RTLD_GLOBAL); false when it has none. */
bool bindDriver() {
  if (drv.bound) return drv.begin != nullptr;
  drv.bound = true;
#define B(f, name) drv.f = reinterpret_cast<decltype(drv.f)>(dlsym(RTLD_DEFAULT, name));
  B(begin, "cuStreamBeginCapture_v2") B(end, "cuStreamEndCapture") B(instantiate, "cuGraphInstantiateWithFlags") B(launch, "cuGraphLaunch")
  B(destroy, "cuGraphDestroy") B(destroyExec, "cuGraphExecDestroy") B(eventSync, "cuEventSynchronize")
#undef B
  if (!drv.end || !drv.instantiate || !drv.launch || !drv.destroy || !drv.destroyExec || !drv.eventSync) drv.begin = nullptr;
  return drv.begin != nullptr;
}

template <class T>
void put(std::string& s, const T& v) {
  s.append(reinterpret_cast<const char*>(&v), sizeof v);
}

/** Issues the ops [0, n) eagerly (or under capture), the uploads' bytes read from `uploads`; the first error. */
std::string issueAll(const char* uploads) {
  tape.issuing = true;
  std::string e;
  for (const Op& op : tape.ops)
    if (e.empty()) e = op.issue(uploads);
  tape.issuing = false;
  return e;
}

void endTape() {
  tape.active = false;
  tape.ops.clear();
  tape.uploads.clear();
}

/** The tape run eagerly: outcome "eager: why". */
std::string eager(const std::string& why, std::string* outcome) {
  std::string e = issueAll(tape.uploads.data());
  *outcome = "eager: " + why;
  stats.eager++;
  endTape();
  return e;
}

std::string replay(Captured& c, std::string* outcome) {
  State& s = state();
  // The staging buffer is the graph's input: the previous launch must have read it before it is overwritten.
  std::string e = c.launched ? cuError("cuEventSynchronize", drv.eventSync(c.done)) : "";
  if (e.empty() && !tape.uploads.empty()) std::memcpy(c.staging, tape.uploads.data(), tape.uploads.size());
  if (e.empty()) e = cuError("cuGraphLaunch", drv.launch(c.exec, s.stream));
  if (e.empty()) e = cuError("cuEventRecord", s.cuEventRecord(c.done, s.stream));
  c.launched = true;
  *outcome = "replayed";
  stats.replayed++;
  endTape();
  return e;
}

/** Captures the tape into a graph (nothing runs during capture), instantiates and launches it; "" or why not (the tape then still waits). */
std::string capture(Captured& c) {
  State& s = state();
  std::string e;
  if (!tape.uploads.empty()) {
    e = cuError("cuMemAllocHost", s.cuMemAllocHost(&c.staging, tape.uploads.size()));
    if (!e.empty()) return e;
    std::memcpy(c.staging, tape.uploads.data(), tape.uploads.size());
  }
  if ((e = cuError("cuEventCreate", s.cuEventCreate(&c.done, SPAN_CU_EVENT_DISABLE_TIMING))) != "") return e;
  if ((e = cuError("cuStreamBeginCapture", drv.begin(s.stream, SPAN_CU_STREAM_CAPTURE_MODE_GLOBAL))) != "") return e;
  e = issueAll(static_cast<const char*>(c.staging));
  SPAN_CUgraph g = nullptr;
  std::string ended = cuError("cuStreamEndCapture", drv.end(s.stream, &g));
  if (e.empty()) e = ended;
  if (e.empty()) e = cuError("cuGraphInstantiateWithFlags", drv.instantiate(&c.exec, g, 0));
  if (g) drv.destroy(g);
  return e;
}

std::string captureAndLaunch(std::vector<std::string> sigs, std::string* outcome) {
  Captured c;
  c.sigs = std::move(sigs);
  std::string why = capture(c);
  if (!why.empty()) {  // nothing of the tape ran: run it eagerly, and this shape stays eager
    if (c.exec) drv.destroyExec(c.exec);
    if (c.staging) state().cuMemFreeHost(c.staging);
    if (c.done) state().cuEventDestroy(c.done);
    disabled[tape.key] = "capture failed: " + why;
    return eager(disabled[tape.key], outcome);
  }
  keys[tape.key].graphs.push_back(c);
  stats.captured++, stats.graphs++;
  std::string e = replay(keys[tape.key].graphs.back(), outcome);
  *outcome = "captured";
  stats.replayed--;
  return e;
}

}  // namespace

bool graphRecording() { return tape.active && !tape.issuing; }

std::vector<uint64_t>::iterator graphPick(std::vector<uint64_t>& list) {
  // The lowest free address of the class, not the last freed: the addresses a step gets then
  // depend only on which blocks are free when it begins and what it does, so a step that repeats
  // (its weights updated in place) repeats its addresses.
  return std::min_element(list.begin(), list.end());
}

std::string graphBegin(const std::string& key) {
  if (tape.active || !tape.declined.empty()) return "span cuda graph: a step began inside another";
  tape = Tape();
  tape.active = true;
  tape.key = key;
  return "";
}

std::string graphKey(const std::string& key) {
  if (tape.active) tape.key = key;  // after a break (tape inactive) the step declines whatever its key
  return "";
}

std::string graphBreak(const char* why) {
  if (!graphRecording()) return "";
  std::string e = issueAll(tape.uploads.data());
  tape.declined = std::string(why) + " during the step";
  tape.ops.clear();
  tape.uploads.clear();
  tape.active = false;
  return e;
}

namespace {

/** SPAN_CUDA_GRAPH_DEBUG=1: where the step first differs from the steps it was compared with, on stderr. */
void debugDifference(const std::vector<std::string>& sigs, const std::deque<std::vector<std::string>>& recent) {
  if (!getenv("SPAN_CUDA_GRAPH_DEBUG")) return;
  for (const auto& other : recent) {
    size_t j = 0;
    while (j < sigs.size() && j < other.size() && sigs[j] == other[j]) j++;
    fprintf(stderr, "span cuda graph: %s: op %zu of %zu differs (%c; the other step has %zu ops)\n", tape.key.c_str(), j, sigs.size(), j < sigs.size() ? sigs[j][0] : '-', other.size());
    if (j < sigs.size() && j < other.size() && sigs[j].size() == other[j].size())
      for (size_t b = 0; b + 8 <= sigs[j].size(); b++)
        if (sigs[j].compare(b, 8, other[j], b, 8) != 0) {
          uint64_t x, y;
          memcpy(&x, sigs[j].data() + b, 8), memcpy(&y, other[j].data() + b, 8);
          fprintf(stderr, "  at byte %zu: %llx vs %llx\n", b, static_cast<unsigned long long>(x), static_cast<unsigned long long>(y));
          break;
        }
  }
}

/**
 * A step no graph stands for. Captured when the same work was seen in one of the last kRecent
 * steps of the key (so the first occurrence always runs eagerly: a warm-up, as CUDA's advice for
 * capture has it, that loads lazily-loaded kernels and libraries' state outside capture); else run
 * eagerly: "warm-up", or after kRecent such steps in a row, declined with the reason.
 */
std::string unmatched(std::vector<std::string> sigs, std::string* outcome) {
  KeyState& k = keys[tape.key];
  bool seen = false;
  for (const auto& r : k.recent) seen = seen || r == sigs;
  if (seen) {
    if (k.graphs.size() >= kMaxGraphs)
      return eager(disabled[tape.key] = "its work took more than " + std::to_string(kMaxGraphs) + " patterns (device addresses that do not settle)", outcome);
    if (stats.graphs >= kMaxGraphsHeld) return eager("64 graphs are held already (too many shapes to keep one each)", outcome);
    k.misses = 0;
    return captureAndLaunch(std::move(sigs), outcome);
  }
  debugDifference(sigs, k.recent);
  k.recent.push_back(std::move(sigs));
  if (k.recent.size() > kRecent) k.recent.pop_front();
  if (++k.misses > kRecent)
    return eager("its work differed from each of the " + std::to_string(kRecent) + " steps before (device addresses or kernel arguments that change every step)", outcome);
  std::string e = eager("", outcome);
  *outcome = "warm-up";
  stats.eager--, stats.warmup++;
  return e;
}

}  // namespace

std::string graphEnd(std::string* outcome) {
  if (!tape.declined.empty()) {
    *outcome = "eager: " + tape.declined;
    tape.declined.clear();
    stats.eager++;
    return "";
  }
  if (!tape.active) return "span cuda graph: graphEnd without graphBegin";
  stats.lastOps = static_cast<double>(tape.ops.size());
  auto off = disabled.find(tape.key);
  if (off != disabled.end()) return eager(off->second, outcome);
  if (!bindDriver()) return eager(disabled[tape.key] = "the CUDA driver has no stream capture (cuStreamBeginCapture_v2 missing)", outcome);
  if (keys.size() > kMaxKeys && !keys.count(tape.key))  // shapes that never recur: their remembered work must not grow without bound
    for (auto it = keys.begin(); it != keys.end();) it = it->second.graphs.empty() ? keys.erase(it) : std::next(it);
  std::vector<std::string> sigs;
  sigs.reserve(tape.ops.size());
  for (const Op& op : tape.ops) sigs.push_back(op.sig);
  for (Captured& c : keys[tape.key].graphs)
    if (c.sigs == sigs) return keys[tape.key].misses = 0, replay(c, outcome);
  return unmatched(std::move(sigs), outcome);
}

std::string graphRecordLaunch(int fn, const unsigned grid[3], const unsigned block[3], unsigned shared, const std::string& types, const std::vector<double>& values) {
  Op op;
  op.sig = "L";
  put(op.sig, fn), put(op.sig, shared);
  for (int i = 0; i < 3; i++) put(op.sig, grid[i]), put(op.sig, block[i]);
  op.sig += types;
  for (double v : values) put(op.sig, v);
  unsigned g[3] = {grid[0], grid[1], grid[2]}, b[3] = {block[0], block[1], block[2]};
  op.issue = [fn, g, b, shared, types, values](const char*) { return deviceLaunch(fn, g, b, shared, types, values); };
  tape.ops.push_back(std::move(op));
  return "";
}

std::string graphRecordGemm(const Gemm& g) {
  Gemm copy = g;
  __builtin_clear_padding(&copy);  // every field in the signature, whatever fields Gemm gains; padding never differs
  Op op;
  op.sig = "G";
  put(op.sig, copy);
  op.issue = [copy](const char*) { return deviceGemm(copy); };
  tape.ops.push_back(std::move(op));
  return "";
}

std::string graphRecordCopy(uint64_t dst, uint64_t src, size_t bytes) {
  Op op;
  op.sig = "C";
  put(op.sig, dst), put(op.sig, src), put(op.sig, bytes);
  op.issue = [dst, src, bytes](const char*) { return deviceCopy(dst, src, bytes); };
  tape.ops.push_back(std::move(op));
  return "";
}

std::string graphRecordMemsetD32(uint64_t dst, uint32_t value, size_t count) {
  Op op;
  op.sig = "M";
  put(op.sig, dst), put(op.sig, value), put(op.sig, count);
  op.issue = [dst, value, count](const char*) { return deviceMemsetD32(dst, value, count); };
  tape.ops.push_back(std::move(op));
  return "";
}

/** An upload's bytes are the step's input, not part of the signature: only where they go and how many. */
std::string graphRecordUpload(uint64_t dst, const void* src, size_t bytes) {
  Op op;
  op.sig = "U";
  size_t at = tape.uploads.size();
  put(op.sig, dst), put(op.sig, at), put(op.sig, bytes);
  tape.uploads.append(static_cast<const char*>(src), bytes);
  op.issue = [dst, at, bytes](const char* base) { return deviceUpload(dst, base + at, bytes); };
  tape.ops.push_back(std::move(op));
  return "";
}

GraphStats graphStats() { return stats; }

void graphReset() {
  for (auto& [key, k] : keys)
    for (Captured& c : k.graphs) {
      if (c.launched) drv.eventSync(c.done);
      drv.destroyExec(c.exec);
      if (c.staging) state().cuMemFreeHost(c.staging);
      state().cuEventDestroy(c.done);
    }
  keys.clear();
  disabled.clear();
  stats = GraphStats();
}

}  // namespace span_cuda

// ---- Node-API: graphBegin(key), graphEnd() → outcome, graphStats(), graphReset() (device.ts) ----

namespace {

using span_napi::jsString;

/** The call's one argument (a graph's key), as a string. */
std::string keyArg(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  return span_napi::stringOf(env, argv[0]);
}

bool thrown(napi_env env, const std::string& e) {
  if (e.empty()) return false;
  napi_throw_error(env, nullptr, e.c_str());
  return true;
}

napi_value GraphBegin(napi_env env, napi_callback_info info) {
  thrown(env, span_cuda::graphBegin(keyArg(env, info)));
  return nullptr;
}

napi_value GraphKey(napi_env env, napi_callback_info info) {
  thrown(env, span_cuda::graphKey(keyArg(env, info)));
  return nullptr;
}

napi_value GraphEnd(napi_env env, napi_callback_info) {
  std::string outcome;
  if (thrown(env, span_cuda::graphEnd(&outcome))) return nullptr;
  return jsString(env, outcome);
}

napi_value GraphStats(napi_env env, napi_callback_info) {
  span_cuda::GraphStats st = span_cuda::graphStats();
  napi_value o;
  napi_create_object(env, &o);
  const std::pair<const char*, double> fields[] = {{"captured", st.captured}, {"replayed", st.replayed}, {"warmup", st.warmup}, {"eager", st.eager}, {"graphs", st.graphs}, {"lastOps", st.lastOps}};
  for (const auto& [name, v] : fields) {
    napi_value n;
    napi_create_double(env, v, &n);
    napi_set_named_property(env, o, name, n);
  }
  return o;
}

/** The stand-in libcuda's counters (launches, stream submissions, graph launches), or null on a real driver: for tests. */
napi_value StandinCounters(napi_env env, napi_callback_info) {
  using Count = unsigned long long (*)();
  const std::pair<const char*, const char*> names[] = {
      {"launches", "spanStandinLaunchCount"}, {"submits", "spanStandinSubmitCount"}, {"graphLaunches", "spanStandinGraphLaunchCount"}};
  napi_value o;
  napi_create_object(env, &o);
  for (const auto& [field, symbol] : names) {
    auto f = reinterpret_cast<Count>(dlsym(RTLD_DEFAULT, symbol));
    if (!f) return napi_get_null(env, &o), o;
    napi_value n;
    napi_create_double(env, static_cast<double>(f()), &n);
    napi_set_named_property(env, o, field, n);
  }
  return o;
}

napi_value GraphReset(napi_env, napi_callback_info) {
  span_cuda::graphReset();
  return nullptr;
}

}  // namespace

void defineGraph(napi_env env, napi_value exports) {
  const span_napi::Method methods[] = {
      {"graphBegin", GraphBegin},
      {"graphKey", GraphKey},
      {"graphEnd", GraphEnd},
      {"graphStats", GraphStats},
      {"graphReset", GraphReset},
      {"standinCounters", StandinCounters},
  };
  span_napi::defineMethods(env, exports, methods);
}
