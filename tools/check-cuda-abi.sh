#!/bin/sh
# Checks the hand-written CUDA declarations of span's cuda addon (native/cuda/src/abi.h)
# against the real headers (cuda.h, nvrtc.h, cublasLt.h): every SPAN_X constant against X,
# the sizes and field offsets of the structs it declares, the sizes of the handle and status
# types, and every function-pointer prototype against the header's function (a compile error
# when they differ). abi.h has one section per header ("/* ---- ... (cuda.h) ---- */"); each
# section is checked when its header is found, and a section whose header is absent is named
# on a "not checked" line (CUDA 13's wheels that NVIDIA ships for nvcc have cuda.h only).
# Needs the headers and a C compiler, no GPU:
#   tools/check-cuda-abi.sh                      # headers under $CUDA_HOME/include (default /usr/local/cuda)
#   tools/check-cuda-abi.sh -I/path/include ...  # other folders (e.g. Debian's CUDA 11.8 headers that
#                                                #   tools/ci-cuda-deps.sh extracts, or NVIDIA's pip wheels)
#   tools/check-cuda-abi.sh --all -I...          # every header must be found (exit 2 otherwise)
# SPAN_ABI_H names another abi.h (the tests check that a wrong one fails).
# Prints one line per item and exits 1 on any mismatch, 2 when no header (or, with --all, not
# every header) is found.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
abi=${SPAN_ABI_H:-"$here/native/cuda/src/abi.h"}
cc=${CC:-cc}
all=0
incs=""
for a in "$@"; do
  if [ "$a" = "--all" ]; then all=1; else incs="$incs $a"; fi
done
[ -n "$incs" ] || incs="-I${CUDA_HOME:-${CUDA_PATH:-/usr/local/cuda}}/include"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Which headers are there: SPAN_ABI_CHECK_<SECTION> for each.
found=""
missing=""
for h in cuda nvrtc cublasLt; do
  # shellcheck disable=SC2086
  if printf '#include <%s.h>\n' "$h" | "$cc" -E $incs - > /dev/null 2>&1; then found="$found $h"; else missing="$missing $h"; fi
done
if [ -z "$found" ] || { [ "$all" = 1 ] && [ -n "$missing" ]; }; then
  echo "check-cuda-abi: CUDA headers not found ($(echo "$missing" | sed 's/^ //; s/ /.h, /g').h: No such file); pass their folders as -I... or set CUDA_HOME" >&2
  exit 2
fi
macro() { case $1 in cuda) echo SPAN_ABI_CHECK_CUDA ;; nvrtc) echo SPAN_ABI_CHECK_NVRTC ;; cublasLt) echo SPAN_ABI_CHECK_CUBLASLT ;; esac; }

# The lines of abi.h's section for header $1 (from its marker to the next marker).
section() {
  awk -v h="$1.h" '/^\/\* ---- .*\(.*\.h.*\) ---- \*\/$/ { s = index($0, "(" h) > 0 } s' "$abi"
}

{
  for h in $found; do
    echo "#include <$h.h>"
    echo "#define $(macro "$h") 1"
  done
  cat <<'C'
#include <stddef.h>
#include <stdio.h>
#include "abi.h"
static int bad = 0;
#define SAME(ours, theirs) do { long long a_ = (long long)(ours), b_ = (long long)(theirs); \
  if (a_ != b_) { printf("MISMATCH %s = %lld, header %s = %lld\n", #ours, a_, #theirs, b_); bad++; } \
  else printf("ok %s = %lld\n", #theirs, b_); } while (0)
#define FIELD(ours, theirs, f) SAME(offsetof(ours, f), offsetof(theirs, f))
/* the prototypes: each span_NAME_t must be the type of &NAME (a compile error otherwise) */
C
  for h in $found; do
    section "$h" | sed -n 's/^typedef .*(\*span_\([A-Za-z0-9_]*\)_t)(.*/_Static_assert(__builtin_types_compatible_p(span_\1_t, __typeof__(\&\1)), "the prototype of \1 differs from the header");/p'
  done
  echo 'int main(void) {'
  for h in $found; do
    case $h in
      cuda)
        cat <<'C'
  printf("CUDA_VERSION %d\n", CUDA_VERSION);
  SAME(sizeof(int), sizeof(CUresult));
  SAME(sizeof(int), sizeof(CUdevice));
  SAME(sizeof(int), sizeof(CUdevice_attribute));
  SAME(sizeof(unsigned long long), sizeof(CUdeviceptr));
  SAME(sizeof(void*), sizeof(CUcontext));
  SAME(sizeof(void*), sizeof(CUstream));
  SAME(sizeof(void*), sizeof(CUmodule));
  SAME(sizeof(void*), sizeof(CUfunction));
  SAME(sizeof(void*), sizeof(CUevent));
  SAME(sizeof(int), sizeof(CUfunction_attribute));
  SAME(sizeof(void*), sizeof(CUgraph));
  SAME(sizeof(void*), sizeof(CUgraphExec));
  SAME(sizeof(int), sizeof(CUstreamCaptureMode));
  SAME(sizeof(int), sizeof(CUstreamCaptureStatus));
C
        ;;
      nvrtc)
        cat <<'C'
  SAME(sizeof(int), sizeof(nvrtcResult));
  SAME(sizeof(void*), sizeof(nvrtcProgram));
C
        ;;
      cublasLt)
        cat <<'C'
  SAME(sizeof(int), sizeof(cublasStatus_t));
  SAME(sizeof(int), sizeof(cublasComputeType_t));
  SAME(sizeof(int), sizeof(cudaDataType_t));
  SAME(sizeof(int), sizeof(cublasLtMatmulDescAttributes_t));
  SAME(sizeof(int), sizeof(cublasLtMatrixLayoutAttribute_t));
  SAME(sizeof(int), sizeof(cublasLtMatmulPreferenceAttributes_t));
  SAME(sizeof(void*), sizeof(cublasLtHandle_t));
  SAME(sizeof(void*), sizeof(cudaStream_t));
  SAME(sizeof(SPAN_cublasLtMatmulAlgo_own), sizeof(cublasLtMatmulAlgo_t));
  SAME(sizeof(SPAN_cublasLtMatmulHeuristicResult_own), sizeof(cublasLtMatmulHeuristicResult_t));
  FIELD(SPAN_cublasLtMatmulHeuristicResult_own, cublasLtMatmulHeuristicResult_t, algo);
  FIELD(SPAN_cublasLtMatmulHeuristicResult_own, cublasLtMatmulHeuristicResult_t, workspaceSize);
  FIELD(SPAN_cublasLtMatmulHeuristicResult_own, cublasLtMatmulHeuristicResult_t, state);
  FIELD(SPAN_cublasLtMatmulHeuristicResult_own, cublasLtMatmulHeuristicResult_t, wavesCount);
  FIELD(SPAN_cublasLtMatmulHeuristicResult_own, cublasLtMatmulHeuristicResult_t, reserved);
C
        ;;
    esac
    # every constant of the section: #define SPAN_X value → SAME(SPAN_X, X)
    section "$h" | sed -n 's/^#define SPAN_\([A-Za-z0-9_]*\) .*/  SAME(SPAN_\1, \1);/p'
    section "$h" | sed -n 's/^typedef .*(\*span_\([A-Za-z0-9_]*\)_t)(.*/  printf("ok prototype %s\\n", "\1");/p'
  done
  for h in $missing; do
    n=$(section "$h" | grep -c -e '^#define SPAN_' -e '^typedef .*(\*span_' || true)
    printf '  printf("not checked: %s.h not found (%s declarations)\\n");\n' "$h" "$n"
  done
  cat <<'C'
  printf(bad ? "%d MISMATCHES\n" : "all match\n", bad);
  return bad != 0;
}
C
} > "$tmp/check.c"
cp "$abi" "$tmp/abi.h"

# shellcheck disable=SC2086
if ! "$cc" -std=c11 -Werror=incompatible-pointer-types -Werror=implicit-function-declaration $incs -I"$tmp" "$tmp/check.c" -o "$tmp/check" 2> "$tmp/cc.log"; then
  echo "check-cuda-abi: a declaration of native/cuda/src/abi.h does not match the headers:" >&2
  cat "$tmp/cc.log" >&2
  exit 1
fi
"$tmp/check"
