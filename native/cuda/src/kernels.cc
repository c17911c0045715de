// NVRTC compiles of kernel sources (native/cuda/kernels/*.cu) to CUBIN for the device's arch,
// module loading, and launches with typed arguments (device.h). The TypeScript side caches
// modules by source hash, options and arch, so each source compiles once per process.
#include <dlfcn.h>

#include <cstring>

#include "device.h"
#include "graph.h"
#include "state.h"

namespace span_cuda {

namespace {

std::string nvrtcError(const char* api, SPAN_nvrtcResult r) {
  if (r == SPAN_NVRTC_SUCCESS) return "";
  const char* text = state().nvrtcGetErrorString ? state().nvrtcGetErrorString(r) : nullptr;
  return std::string(api) + ": " + (text ? text : "nvrtcResult " + std::to_string(r));
}

std::string programLog(SPAN_nvrtcProgram p) {
  State& s = state();
  size_t n = 0;
  if (s.nvrtcGetProgramLogSize(p, &n) != SPAN_NVRTC_SUCCESS || n == 0) return "";
  std::string log(n, '\0');
  s.nvrtcGetProgramLog(p, &log[0]);
  return log.c_str();
}

/** Compiles `source` to CUBIN for sm_<arch> (compile errors carry NVRTC's log). */
std::string compile(const std::string& source, const std::string& name, const std::vector<std::string>& options, std::string* cubin) {
  State& s = state();
  SPAN_nvrtcProgram p = nullptr;
  std::string e = nvrtcError("nvrtcCreateProgram", s.nvrtcCreateProgram(&p, source.c_str(), name.c_str(), 0, nullptr, nullptr));
  if (!e.empty()) return e;
  std::vector<std::string> opts = options;
  opts.push_back("--gpu-architecture=sm_" + std::to_string(s.arch));
  std::vector<const char*> argv;
  for (auto& o : opts) argv.push_back(o.c_str());
  e = nvrtcError("nvrtcCompileProgram", s.nvrtcCompileProgram(p, static_cast<int>(argv.size()), argv.data()));
  if (!e.empty()) e += " of " + name + ": " + programLog(p);
  size_t n = 0;
  if (e.empty()) e = nvrtcError("nvrtcGetCUBINSize", s.nvrtcGetCUBINSize(p, &n));
  if (e.empty()) {
    cubin->assign(n, '\0');
    e = nvrtcError("nvrtcGetCUBIN", s.nvrtcGetCUBIN(p, &(*cubin)[0]));
  }
  s.nvrtcDestroyProgram(&p);
  return e;
}

}  // namespace

std::string bindNvrtc(void* lib, State& s) {
  if (!lib) return "(not loaded)";
  SPAN_BIND(nvrtcGetErrorString, "nvrtcGetErrorString") SPAN_BIND(nvrtcCreateProgram, "nvrtcCreateProgram")
  SPAN_BIND(nvrtcDestroyProgram, "nvrtcDestroyProgram") SPAN_BIND(nvrtcCompileProgram, "nvrtcCompileProgram")
  SPAN_BIND(nvrtcGetProgramLogSize, "nvrtcGetProgramLogSize") SPAN_BIND(nvrtcGetProgramLog, "nvrtcGetProgramLog")
  SPAN_BIND(nvrtcGetCUBINSize, "nvrtcGetCUBINSize") SPAN_BIND(nvrtcGetCUBIN, "nvrtcGetCUBIN")
  return "";
}

std::string deviceLoadModule(const std::string& source, const std::string& name, const std::vector<std::string>& options, int* module) {
  State& s = state();
  std::string cubin;
  std::string e = compile(source, name, options, &cubin);
  if (!e.empty()) return e;
  SPAN_CUmodule m = nullptr;
  if ((e = cuError("cuModuleLoadData", s.cuModuleLoadData(&m, cubin.data()))) != "") return e + " (" + name + ")";
  *module = static_cast<int>(s.modules.size());
  s.modules.push_back(m);
  return "";
}

std::string deviceGetFunction(int module, const std::string& name, int* fn) {
  State& s = state();
  if (module < 0 || module >= static_cast<int>(s.modules.size())) return "span cuda: unknown module";
  SPAN_CUfunction f = nullptr;
  std::string e = cuError("cuModuleGetFunction", s.cuModuleGetFunction(&f, s.modules[module], name.c_str()));
  if (!e.empty()) return e + " (" + name + ")";
  *fn = static_cast<int>(s.functions.size());
  s.functions.push_back(f);
  return "";
}

std::string deviceLaunch(int fn, const unsigned grid[3], const unsigned block[3], unsigned shared, const std::string& types, const std::vector<double>& values) {
  State& s = state();
  if (fn < 0 || fn >= static_cast<int>(s.functions.size())) return "span cuda: unknown function";
  if (types.size() != values.size()) return "span cuda: launch: argument types and values differ in number";
  std::vector<uint64_t> slots(types.size());
  std::vector<void*> params(types.size());
  for (size_t i = 0; i < types.size(); i++) {
    void* slot = &slots[i];
    double v = values[i];
    switch (types[i]) {
      case 'p': *static_cast<uint64_t*>(slot) = static_cast<uint64_t>(v); break;
      case 'l': *static_cast<int64_t*>(slot) = static_cast<int64_t>(v); break;
      case 'i': *static_cast<int32_t*>(slot) = static_cast<int32_t>(v); break;
      case 'u': *static_cast<uint32_t*>(slot) = static_cast<uint32_t>(v); break;
      case 'f': *static_cast<float*>(slot) = static_cast<float>(v); break;
      default: return std::string("span cuda: launch: unknown argument type ") + types[i];
    }
    params[i] = slot;
  }
  if (grid[0] == 0 || grid[1] == 0 || grid[2] == 0) return "";  // nothing to do (an empty tensor)
  if (graphRecording()) return graphRecordLaunch(fn, grid, block, shared, types, values);
  return cuError("cuLaunchKernel", s.cuLaunchKernel(s.functions[fn], grid[0], grid[1], grid[2], block[0], block[1], block[2], shared, s.stream,
                                                    params.data(), nullptr));
}

}  // namespace span_cuda
