// See transform.h. A small scanner over CUDA C: it skips comments and literals, counts braces,
// and knows which declarations are extern "C" (a prefix or an extern "C" { } block).
#include "transform.h"

#include <algorithm>
#include <cctype>

namespace span_nvrtc {
namespace {

bool identStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool identChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

struct Scanner {
  const std::string& s;
  size_t i = 0;
  int depth = 0;
  std::vector<int> externCBlocks;  // brace depths opened by extern "C" {
  bool declExternC = false;        // the declaration being read began with extern "C"
  bool pendingBlock = false;       // extern "C" seen, a { may follow

  explicit Scanner(const std::string& src) : s(src) {}

  /** Skips a comment or literal at i; true if it did. */
  bool skipNonCode() {
    if (s.compare(i, 2, "//") == 0) {
      while (i < s.size() && s[i] != '\n') i++;
      return true;
    }
    if (s.compare(i, 2, "/*") == 0) {
      size_t e = s.find("*/", i + 2);
      i = e == std::string::npos ? s.size() : e + 2;
      return true;
    }
    if (s[i] == '"' || s[i] == '\'') {
      char q = s[i++];
      while (i < s.size() && s[i] != q) i += s[i] == '\\' ? 2 : 1;
      i++;
      return true;
    }
    return false;
  }

  /** Skips white space and comments (not literals). */
  void skipSpace() {
    while (i < s.size()) {
      if (std::isspace(static_cast<unsigned char>(s[i]))) i++;
      else if (s.compare(i, 2, "//") == 0 || s.compare(i, 2, "/*") == 0) skipNonCode();
      else return;
    }
  }

  std::string ident() {
    size_t b = i;
    while (i < s.size() && identChar(s[i])) i++;
    return s.substr(b, i - b);
  }

  void skipParens() {
    skipSpace();
    if (i >= s.size() || s[i] != '(') return;
    int d = 0;
    for (; i < s.size(); i++) {
      if (skipNonCode()) {
        i--;
        continue;
      }
      if (s[i] == '(') d++;
      if (s[i] == ')' && --d == 0) {
        i++;
        return;
      }
    }
  }

  /** After __global__: the function's name (past void, __launch_bounds__(…), __attribute__((…))). */
  std::string kernelName() {
    for (int guard = 0; guard < 16 && i < s.size(); guard++) {
      skipSpace();
      if (!identStart(s[i])) return "";
      std::string id = ident();
      if (id == "__launch_bounds__" || id == "__attribute__" || id == "alignas") {
        skipParens();
        continue;
      }
      skipSpace();
      if (i < s.size() && s[i] == '(') return id;
    }
    return "";
  }

  bool inExternC() const { return declExternC || !externCBlocks.empty(); }
};

/** `extern __shared__ [__align__(n)] T name[];` from `b` (at extern) to the ';' at `e`: the replacement, or "" if not that form. */
std::string dynamicShared(const std::string& decl) {
  std::string d = decl;
  for (const char* attr : {"__align__", "alignas"}) {
    size_t p;
    while ((p = d.find(attr)) != std::string::npos) {
      size_t close = d.find(')', p);
      d.erase(p, close == std::string::npos ? std::string::npos : close - p + 1);
    }
  }
  size_t sh = d.find("__shared__");
  size_t lb = d.rfind('[');
  if (sh == std::string::npos || lb == std::string::npos || d.find_first_not_of(" \t\r\n", lb + 1) != d.find(']', lb)) return "";
  std::string head = d.substr(sh + 10, lb - sh - 10);
  size_t end = head.find_last_not_of(" \t\r\n");
  size_t start = end;
  while (start > 0 && identChar(head[start - 1])) start--;
  std::string name = head.substr(start, end - start + 1), type = head.substr(0, start);
  type.erase(std::remove(type.begin(), type.end(), '\n'), type.end());
  return type + "* const " + name + " = reinterpret_cast<" + type + "*>(span_emu_dynamic_smem());";
}

void onIdentifier(Scanner& sc, const std::string& id, size_t start, Transformed& out, std::string& text, long& shift) {
  if (id == "extern") {
    size_t save = sc.i;
    sc.skipSpace();
    if (sc.s.compare(sc.i, 3, "\"C\"") == 0) {
      sc.i += 3;
      sc.declExternC = sc.pendingBlock = true;
      return;
    }
    sc.i = save;
    size_t semi = sc.s.find(';', start);
    size_t sh = sc.s.find("__shared__", start);
    if (semi == std::string::npos || sh == std::string::npos || sh > semi || sc.s.find_first_not_of(" \t\r\n", start + 6) != sh) return;
    std::string repl = dynamicShared(sc.s.substr(start, semi + 1 - start));
    if (repl.empty()) return;
    if (sc.depth == 0) {
      out.error = "extern __shared__ at file scope: the CUDA-C emulator needs it declared inside the kernel";
      return;
    }
    long nl = std::count(sc.s.begin() + static_cast<long>(start), sc.s.begin() + static_cast<long>(semi), '\n');
    repl += std::string(static_cast<size_t>(nl), '\n');
    text.replace(static_cast<size_t>(static_cast<long>(start) + shift), semi + 1 - start, repl);
    shift += static_cast<long>(repl.size()) - static_cast<long>(semi + 1 - start);
    sc.i = semi + 1;
    return;
  }
  if (id == "__global__" && sc.inExternC()) {
    std::string name = sc.kernelName();
    if (!name.empty() && std::find(out.kernels.begin(), out.kernels.end(), name) == out.kernels.end()) out.kernels.push_back(name);
  }
}

}  // namespace

Transformed transform(const std::string& source, const std::string& name) {
  Transformed out;
  out.text = source;
  Scanner sc(source);
  long shift = 0;
  while (sc.i < source.size() && out.error.empty()) {
    if (sc.skipNonCode()) continue;
    char c = source[sc.i];
    if (identStart(c) && (sc.i == 0 || !identChar(source[sc.i - 1]))) {
      size_t start = sc.i;
      onIdentifier(sc, sc.ident(), start, out, out.text, shift);
      continue;
    }
    if (c == '{') {
      sc.depth++;
      if (sc.pendingBlock && sc.declExternC) sc.externCBlocks.push_back(sc.depth);
      sc.declExternC = sc.pendingBlock = false;
    } else if (c == '}') {
      if (!sc.externCBlocks.empty() && sc.externCBlocks.back() == sc.depth) sc.externCBlocks.pop_back();
      sc.depth--;
      sc.declExternC = false;
    } else if (c == ';') {
      sc.declExternC = sc.pendingBlock = false;
    } else if (!std::isspace(static_cast<unsigned char>(c))) {
      sc.pendingBlock = false;
    }
    sc.i++;
  }
  if (!out.error.empty()) out.error = name + ": error: " + out.error;
  return out;
}

std::string tableSource(const std::vector<std::string>& kernels) {
  std::string t = "\n#line 1 \"span-emu-kernel-table\"\nextern \"C\" __attribute__((visibility(\"default\"))) const SpanEmuKernel span_emu_kernels[] = {\n";
  for (const auto& k : kernels) t += "SPAN_EMU_KERNEL(" + k + ")\n";
  return t + "{nullptr, nullptr, 0, nullptr}};\n";
}

}  // namespace span_nvrtc
