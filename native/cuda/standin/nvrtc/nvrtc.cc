// The libnvrtc stand-in: the NVRTC entry points of native/cuda/src/abi.h, compiling the same
// CUDA C text with the host g++ through the emulation prelude (span-emu/include next to this
// library) into a shared object, cached by a hash of everything that goes into it. What it
// hands out as CUBIN is that object behind a magic (emu.h), which only the libcuda stand-in
// loads; PTX is the same bytes in hex. Compile errors come back through the program log with
// NVRTC_ERROR_COMPILATION, as from NVRTC. Test-only: never shipped, never on a library path.
//   SPAN_EMU_CACHE  the cache folder (default: cache/ next to this library)
//   SPAN_EMU_CXX    the compiler (default g++)
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../emu/include/emu.h"
#include "transform.h"

#define EXPORT extern "C" __attribute__((visibility("default")))

namespace {

enum {
  NVRTC_SUCCESS = 0,
  NVRTC_ERROR_OUT_OF_MEMORY = 1,
  NVRTC_ERROR_PROGRAM_CREATION_FAILURE = 2,
  NVRTC_ERROR_INVALID_INPUT = 3,
  NVRTC_ERROR_INVALID_PROGRAM = 4,
  NVRTC_ERROR_INVALID_OPTION = 5,
  NVRTC_ERROR_COMPILATION = 6,
  NVRTC_ERROR_BUILTIN_OPERATION_FAILURE = 7,
  NVRTC_ERROR_INTERNAL_ERROR = 11,
};

const char* kErrors[] = {"NVRTC_SUCCESS",
                         "NVRTC_ERROR_OUT_OF_MEMORY",
                         "NVRTC_ERROR_PROGRAM_CREATION_FAILURE",
                         "NVRTC_ERROR_INVALID_INPUT",
                         "NVRTC_ERROR_INVALID_PROGRAM",
                         "NVRTC_ERROR_INVALID_OPTION",
                         "NVRTC_ERROR_COMPILATION",
                         "NVRTC_ERROR_BUILTIN_OPERATION_FAILURE",
                         "NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION",
                         "NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION",
                         "NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID",
                         "NVRTC_ERROR_INTERNAL_ERROR"};

struct Program {
  std::string source, name;
  std::vector<std::pair<std::string, std::string>> headers;  // include name, text
  std::string log, image, ptx;
  bool compiled = false;
};

/** The folder this library was loaded from (the stand-ins' folder). */
std::string ownDir() {
  Dl_info info;
  if (!dladdr(reinterpret_cast<void*>(&ownDir), &info) || !info.dli_fname) return ".";
  std::string p = info.dli_fname;
  size_t slash = p.rfind('/');
  return slash == std::string::npos ? "." : p.substr(0, slash);
}

std::string readFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

/** FNV-1a, 64 bits, in hex. */
std::string hashOf(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  char buf[17];
  snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

/** Every file of the prelude folder, concatenated, so that editing the prelude invalidates the cache. */
std::string preludeText(const std::string& inc) {
  std::string all;
  DIR* d = opendir(inc.c_str());
  if (!d) return all;
  std::vector<std::string> names;
  while (dirent* e = readdir(d))
    if (e->d_name[0] != '.') names.push_back(e->d_name);
  closedir(d);
  std::sort(names.begin(), names.end());
  for (const auto& n : names) all += n + "\n" + readFile(inc + "/" + n);
  return all;
}

void mkdirs(const std::string& path) {
  for (size_t p = 1; (p = path.find('/', p)) != std::string::npos; p++) mkdir(path.substr(0, p).c_str(), 0755);
  mkdir(path.c_str(), 0755);
}

std::string cacheDir() {
  const char* e = getenv("SPAN_EMU_CACHE");
  return e && *e ? e : ownDir() + "/cache";
}

/** The g++ flags NVRTC's options map to, or an error for an option NVRTC would refuse. */
struct Options {
  std::vector<std::string> flags;
  std::string std = "-std=c++17";
  std::string arch = "800";
  std::string error;
};

bool takesValue(const std::string& o, const char* name, std::string& v) {
  size_t n = strlen(name);
  if (o.compare(0, n, name) == 0 && o.size() > n && o[n] == '=') return v = o.substr(n + 1), true;
  return false;
}

void parseOption(Options& out, const std::string& o, const std::string& next, int& skip) {
  std::string v;
  static const char* ignored[] = {"-lineinfo", "--generate-line-info", "-G", "--device-debug", "-default-device", "--device-as-default-execution-space",
                                  "-use_fast_math", "--use_fast_math", "-w", "--disable-warnings", "-restrict", "--restrict", "-rdc=false",
                                  "-dopt=on", "--extra-device-vectorization", "-extra-device-vectorization", "-ewp", "-dw", "--dlink-time-opt", "-dlto"};
  for (const char* ig : ignored)
    if (o == ig) return;
  static const char* valued[] = {"--fmad", "-fmad", "-ftz", "--ftz", "-prec-div", "--prec-div", "-prec-sqrt", "--prec-sqrt", "--maxrregcount", "-maxrregcount",
                                 "--relocatable-device-code", "-dopt", "--dopt"};
  for (const char* va : valued)
    if (takesValue(o, va, v)) return;
  std::string arch;
  if (takesValue(o, "--gpu-architecture", arch) || takesValue(o, "-arch", arch) || ((o == "-arch" || o == "--gpu-architecture") && (skip = 1, arch = next, true))) {
    size_t u = arch.find('_');
    std::string num = u == std::string::npos ? "" : arch.substr(u + 1);
    while (!num.empty() && std::isalpha(static_cast<unsigned char>(num.back()))) num.pop_back();  // sm_90a
    bool ok = (arch.rfind("sm_", 0) == 0 || arch.rfind("compute_", 0) == 0) && num.size() >= 2 && num.find_first_not_of("0123456789") == std::string::npos;
    if (!ok || std::stoi(num) < 50) out.error = "nvrtc: error: invalid value for --gpu-architecture (-arch): " + arch;
    else out.arch = num + "0";
    return;
  }
  if (takesValue(o, "--std", v) || takesValue(o, "-std", v)) return void(out.std = "-std=" + v);
  if (o.rfind("-D", 0) == 0 || o.rfind("-U", 0) == 0 || o.rfind("-I", 0) == 0) return out.flags.push_back(o);
  if (takesValue(o, "--define-macro", v)) return out.flags.push_back("-D" + v);
  if (takesValue(o, "--undefine-macro", v)) return out.flags.push_back("-U" + v);
  if (takesValue(o, "--include-path", v)) return out.flags.push_back("-I" + v);
  if (takesValue(o, "--pre-include", v)) return out.flags.push_back("-include" + v);
  out.error = "nvrtc: error: unrecognized option " + o;
}

Options parseOptions(int n, const char* const* options) {
  Options out;
  for (int k = 0; k < n && out.error.empty(); k++) {
    int skip = 0;
    parseOption(out, options[k] ? options[k] : "", k + 1 < n && options[k + 1] ? options[k + 1] : "", skip);
    k += skip;
  }
  return out;
}

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

/** Runs a shell command; its exit status, with stdout and stderr in `output`. */
int runCommand(const std::string& cmd, std::string& output) {
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return -1;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) output.append(buf, n);
  int st = pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

void replaceAll(std::string& s, const std::string& from, const std::string& to) {
  for (size_t p = 0; !from.empty() && (p = s.find(from, p)) != std::string::npos; p += to.size()) s.replace(p, from.size(), to);
}

/** Compiles the program text into `so` with g++; the log is the compiler's output with the temporary paths removed. */
bool build(Program& p, const std::string& text, const Options& o, const std::string& inc, const std::string& so) {
  char tmpl[] = "/tmp/span-nvrtc-XXXXXX";
  if (!mkdtemp(tmpl)) return p.log = "nvrtc stand-in: cannot create a temporary folder", false;
  std::string tmp = tmpl, src = tmp + "/" + "program.cu";
  for (const auto& h : p.headers) {
    std::string path = tmp + "/" + h.first;
    mkdirs(path.substr(0, path.rfind('/')));
    std::ofstream(path, std::ios::binary) << h.second;
  }
  std::ofstream(src, std::ios::binary) << text;
  const char* cxx = getenv("SPAN_EMU_CXX");
  std::string cmd = std::string(cxx && *cxx ? cxx : "g++") + " " + o.std + " -O2 -fPIC -shared -fno-exceptions -fno-rtti -fno-math-errno -ffp-contract=off";
  cmd += " -D__CUDA_ARCH__=" + o.arch + " -I" + quote(inc) + " -I" + quote(tmp);
  for (const auto& f : o.flags) cmd += " " + quote(f);
  std::string out_tmp = so + ".tmp" + std::to_string(getpid()) + "-" + std::to_string(reinterpret_cast<uintptr_t>(&p));  // each compile its own
  cmd += " -include span_emu_prelude.h -x c++ " + quote(src) + " -o " + quote(out_tmp);
  std::string out;
  int rc = runCommand(cmd, out);
  replaceAll(out, tmp + "/", "");
  p.log = out;
  runCommand("rm -rf " + quote(tmp), out);
  if (rc != 0) return unlink(out_tmp.c_str()), false;
  return rename(out_tmp.c_str(), so.c_str()) == 0;
}

/** The compiler and its version and target (`g++ -dumpfullversion -dumpmachine`), asked once per process. */
const std::string& compilerId() {
  static const std::string id = [] {
    const char* cxx = getenv("SPAN_EMU_CXX");
    std::string c = cxx && *cxx ? cxx : "g++", out;
    runCommand(c + " -dumpfullversion -dumpmachine", out);
    return c + "\n" + out;
  }();
  return id;
}

std::string hex(const std::string& bytes) {
  static const char* d = "0123456789abcdef";
  std::string h;
  h.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) h += d[c >> 4], h += d[c & 15];
  return h;
}

int compile(Program& p, int n, const char* const* options) {
  Options o = parseOptions(n, options);
  if (!o.error.empty()) return p.log = o.error + "\n", NVRTC_ERROR_INVALID_OPTION;
  span_nvrtc::Transformed t = span_nvrtc::transform(p.source, p.name);
  if (!t.error.empty()) return p.log = t.error + "\n", NVRTC_ERROR_COMPILATION;
  std::string text = "#line 1 \"" + p.name + "\"\n" + t.text + span_nvrtc::tableSource(t.kernels);
  // The key is what the object is made of (the prelude's text, not the folder of this clone; the
  // compiler), so that a cache outside the clone (SPAN_EMU_CACHE, as .ci/run sets) serves later clones.
  std::string inc = ownDir() + "/span-emu/include", key = preludeText(inc) + compilerId() + o.std + o.arch + text;
  for (const auto& f : o.flags) key += "\n" + f;
  for (const auto& h : p.headers) key += "\n" + h.first + "\n" + h.second;
  std::string dir = cacheDir(), so = dir + "/" + hashOf(key) + ".so";
  mkdirs(dir);
  p.log.clear();
  if (access(so.c_str(), R_OK) != 0 && !build(p, text, o, inc, so)) return NVRTC_ERROR_COMPILATION;
  std::string bytes = readFile(so);
  uint64_t len = bytes.size();
  p.image = std::string(SPAN_EMU_IMAGE_MAGIC, 8) + std::string(reinterpret_cast<char*>(&len), 8) + bytes;
  p.ptx = SPAN_EMU_PTX_PREFIX + hex(bytes);
  p.compiled = true;
  return NVRTC_SUCCESS;
}

Program* prog(void* h) { return static_cast<Program*>(h); }

}  // namespace

EXPORT const char* nvrtcGetErrorString(int result) {
  return result >= 0 && result < static_cast<int>(sizeof kErrors / sizeof kErrors[0]) ? kErrors[result] : "NVRTC_ERROR unknown";
}

EXPORT int nvrtcVersion(int* major, int* minor) {
  if (!major || !minor) return NVRTC_ERROR_INVALID_INPUT;
  *major = 13, *minor = 0;
  return NVRTC_SUCCESS;
}

EXPORT int nvrtcGetNumSupportedArchs(int* n) { return n ? (*n = 6, NVRTC_SUCCESS) : NVRTC_ERROR_INVALID_INPUT; }

EXPORT int nvrtcGetSupportedArchs(int* archs) {
  static const int list[] = {75, 80, 86, 89, 90, 100};
  if (!archs) return NVRTC_ERROR_INVALID_INPUT;
  memcpy(archs, list, sizeof list);
  return NVRTC_SUCCESS;
}

EXPORT int nvrtcCreateProgram(void** out, const char* src, const char* name, int numHeaders, const char* const* headers, const char* const* includeNames) {
  if (!out || !src || numHeaders < 0 || (numHeaders > 0 && (!headers || !includeNames))) return NVRTC_ERROR_INVALID_INPUT;
  auto* p = new Program();
  p->source = src;
  p->name = name && *name ? name : "default_program";
  for (int k = 0; k < numHeaders; k++) p->headers.emplace_back(includeNames[k], headers[k] ? headers[k] : "");
  *out = p;
  return NVRTC_SUCCESS;
}

EXPORT int nvrtcDestroyProgram(void** p) {
  if (!p || !*p) return NVRTC_ERROR_INVALID_PROGRAM;
  delete prog(*p);
  *p = nullptr;
  return NVRTC_SUCCESS;
}

EXPORT int nvrtcCompileProgram(void* p, int numOptions, const char* const* options) {
  if (!p) return NVRTC_ERROR_INVALID_PROGRAM;
  if (numOptions < 0 || (numOptions > 0 && !options)) return NVRTC_ERROR_INVALID_INPUT;
  return compile(*prog(p), numOptions, options);
}

EXPORT int nvrtcGetProgramLogSize(void* p, size_t* size) {
  if (!p || !size) return p ? NVRTC_ERROR_INVALID_INPUT : NVRTC_ERROR_INVALID_PROGRAM;
  *size = prog(p)->log.size() + 1;
  return NVRTC_SUCCESS;
}

EXPORT int nvrtcGetProgramLog(void* p, char* log) {
  if (!p || !log) return p ? NVRTC_ERROR_INVALID_INPUT : NVRTC_ERROR_INVALID_PROGRAM;
  memcpy(log, prog(p)->log.c_str(), prog(p)->log.size() + 1);
  return NVRTC_SUCCESS;
}

static int getBytes(void* p, const std::string Program::*field, size_t* size, char* out) {
  if (!p) return NVRTC_ERROR_INVALID_PROGRAM;
  if (!prog(p)->compiled) return NVRTC_ERROR_INVALID_PROGRAM;
  const std::string& s = prog(p)->*field;
  if (size) *size = s.size() + (field == &Program::ptx ? 1 : 0);
  if (out) memcpy(out, s.c_str(), s.size() + (field == &Program::ptx ? 1 : 0));
  return size || out ? NVRTC_SUCCESS : NVRTC_ERROR_INVALID_INPUT;
}

EXPORT int nvrtcGetCUBINSize(void* p, size_t* size) { return getBytes(p, &Program::image, size, nullptr); }
EXPORT int nvrtcGetCUBIN(void* p, char* cubin) { return getBytes(p, &Program::image, nullptr, cubin); }
EXPORT int nvrtcGetPTXSize(void* p, size_t* size) { return getBytes(p, &Program::ptx, size, nullptr); }
EXPORT int nvrtcGetPTX(void* p, char* ptx) { return getBytes(p, &Program::ptx, nullptr, ptx); }
