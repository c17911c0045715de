// Compiles CUDA C sources to CUBIN with a real NVRTC, opened the way span's cuda addon opens it
// (native/cuda/src/loader.cc: openFirst, libnvrtc-builtins before libnvrtc, RTLD_GLOBAL, the
// prototypes of abi.h). Used by tools/check-cuda-kernels.sh; needs no GPU.
//   nvrtc-compile BUILTINS_SO NVRTC_SO ARCH INCLUDE_DIRS FILE...   (INCLUDE_DIRS: folders separated by ':')
// For each FILE: "ok FILE ARCH N bytes" (a CUBIN, ELF), or the compile log and exit 1. A file with a line
// "// check-variants: NAME[@SM] ..." is also compiled once per NAME with -DNAME=1 ("ok FILE[NAME] ARCH N
// bytes"): the variants span compiles from one source (flash_attention_wmma.cu's tf32 and fp16 ones). @SM
// (e.g. @80) is the oldest architecture the variant is for (its tensor-core types); older ones are
// skipped ("skip FILE[NAME] ARCH (sm_80 and later)"); the name `default` stands for the file without a define.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../native/cuda/src/abi.h"
#include "../native/cuda/src/loader.h"

namespace {

struct Nvrtc {
  span_nvrtcCreateProgram_t create;
  span_nvrtcDestroyProgram_t destroy;
  span_nvrtcCompileProgram_t compile;
  span_nvrtcGetProgramLogSize_t logSize;
  span_nvrtcGetProgramLog_t log;
  span_nvrtcGetCUBINSize_t cubinSize;
  span_nvrtcGetCUBIN_t cubin;
  span_nvrtcGetErrorString_t error;
};

template <class F>
bool sym(void* lib, const char* name, F& out) {
  out = reinterpret_cast<F>(dlsym(lib, name));
  if (!out) std::fprintf(stderr, "nvrtc-compile: %s lacks %s\n", "libnvrtc", name);
  return out != nullptr;
}

std::string logOf(const Nvrtc& n, SPAN_nvrtcProgram p) {
  size_t size = 0;
  if (n.logSize(p, &size) != SPAN_NVRTC_SUCCESS || size == 0) return "";
  std::string s(size, '\0');
  n.log(p, &s[0]);
  return s;
}

/** The NAMEs of the file's "// check-variants: NAME ..." line (none without one). */
std::vector<std::string> variants(const std::string& text) {
  const std::string tag = "// check-variants:";
  size_t at = text.find(tag);
  if (at == std::string::npos) return {};
  std::istringstream line(text.substr(at + tag.size(), text.find('\n', at) - at - tag.size()));
  std::vector<std::string> out;
  for (std::string w; line >> w;) out.push_back(w);
  return out;
}

int compileText(const Nvrtc& n, const std::string& file, const std::string& text, const std::string& define, const std::string& arch, const std::string& inc);

/** 0 when `file` (and each of its variants) compiled to a CUBIN for `arch`, else 1 (the log on stderr). */
int compileOne(const Nvrtc& n, const std::string& file, const std::string& arch, const std::string& inc) {
  std::ifstream in(file);
  std::stringstream buf;
  buf << in.rdbuf();
  if (!in) return std::fprintf(stderr, "nvrtc-compile: cannot read %s\n", file.c_str()), 1;
  const std::string text = buf.str();
  const int sm = std::atoi(arch.c_str() + arch.find('_') + 1);
  std::vector<std::string> all = variants(text);
  if (std::none_of(all.begin(), all.end(), [](const std::string& v) { return v.rfind("default", 0) == 0; })) all.insert(all.begin(), "default");
  int bad = 0;
  for (const auto& v : all) {
    const size_t at = v.find('@');
    const std::string name = v.substr(0, at), define = name == "default" ? "" : name;
    if (at != std::string::npos && sm < std::atoi(v.c_str() + at + 1)) {
      std::printf("skip %s%s %s (sm_%s and later)\n", file.c_str(), define.empty() ? "" : ("[" + define + "]").c_str(), arch.c_str(), v.c_str() + at + 1);
      continue;
    }
    bad |= compileText(n, file, text, define, arch, inc);
  }
  return bad;
}

/** One compile of `text`, with -D`define`=1 when it is not empty. */
int compileText(const Nvrtc& n, const std::string& file, const std::string& text, const std::string& define, const std::string& arch, const std::string& inc) {
  const std::string label = define.empty() ? file : file + "[" + define + "]";
  SPAN_nvrtcProgram p = nullptr;
  SPAN_nvrtcResult r = n.create(&p, text.c_str(), file.c_str(), 0, nullptr, nullptr);
  if (r != SPAN_NVRTC_SUCCESS) return std::fprintf(stderr, "nvrtc-compile: %s: create: %s\n", label.c_str(), n.error(r)), 1;
  std::vector<std::string> own = {"--gpu-architecture=" + arch, "--std=c++17"};
  if (!define.empty()) own.push_back("-D" + define + "=1");
  for (size_t a = 0, b; a <= inc.size(); a = b + 1) {
    b = inc.find(':', a);
    if (b == std::string::npos) b = inc.size();
    if (b > a) own.push_back("--include-path=" + inc.substr(a, b - a));
  }
  std::vector<const char*> opts;
  for (const auto& o : own) opts.push_back(o.c_str());
  r = n.compile(p, static_cast<int>(opts.size()), opts.data());
  std::string log = logOf(n, p);
  size_t size = 0;
  std::vector<char> bin;
  if (r == SPAN_NVRTC_SUCCESS && n.cubinSize(p, &size) == SPAN_NVRTC_SUCCESS && size > 4) {
    bin.resize(size);
    n.cubin(p, bin.data());
  }
  n.destroy(&p);
  if (r != SPAN_NVRTC_SUCCESS) return std::fprintf(stderr, "%s: %s (%s):\n%s\n", label.c_str(), n.error(r), arch.c_str(), log.c_str()), 1;
  if (bin.size() < 4 || std::memcmp(bin.data(), "\x7f" "ELF", 4) != 0)
    return std::fprintf(stderr, "nvrtc-compile: %s (%s): no CUBIN\n", label.c_str(), arch.c_str()), 1;
  std::printf("ok %s %s %zu bytes%s\n", label.c_str(), arch.c_str(), bin.size(), log.size() > 1 ? " (warnings)" : "");
  if (log.size() > 1) std::fprintf(stderr, "%s\n", log.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 6) return std::fprintf(stderr, "usage: nvrtc-compile BUILTINS_SO NVRTC_SO ARCH INCLUDE_DIRS FILE...\n"), 2;
  span_cuda::Opened builtins = span_cuda::openFirst({argv[1]});
  span_cuda::Opened lib = span_cuda::openFirst({argv[2]});
  if (!builtins.handle || !lib.handle)
    return std::fprintf(stderr, "nvrtc-compile: %s\n", (builtins.handle ? lib : builtins).error.c_str()), 2;
  std::printf("NVRTC %d (%s)\n", span_cuda::nvrtcVersion(lib.handle), lib.path.c_str());
  Nvrtc n{};
  void* h = lib.handle;
  if (!sym(h, "nvrtcCreateProgram", n.create) || !sym(h, "nvrtcDestroyProgram", n.destroy) || !sym(h, "nvrtcCompileProgram", n.compile) ||
      !sym(h, "nvrtcGetProgramLogSize", n.logSize) || !sym(h, "nvrtcGetProgramLog", n.log) || !sym(h, "nvrtcGetCUBINSize", n.cubinSize) ||
      !sym(h, "nvrtcGetCUBIN", n.cubin) || !sym(h, "nvrtcGetErrorString", n.error))
    return 2;
  int bad = 0;
  for (int i = 5; i < argc; i++) bad += compileOne(n, argv[i], argv[3], argv[4]);
  return bad ? 1 : 0;
}
