#!/bin/sh
# Checks the hand-written CUDA declarations of span's cuda addon (native/cuda/src/abi.h)
# against the real headers (cuda.h, nvrtc.h, cublasLt.h): every SPAN_X constant against X,
# the sizes and field offsets of the structs it declares, the sizes of the handle and status
# types, and every function-pointer prototype against the header's function (a compile error
# when they differ). Needs the CUDA headers and a C compiler, no GPU:
#   tools/check-cuda-abi.sh                      # headers under $CUDA_HOME/include (default /usr/local/cuda)
#   tools/check-cuda-abi.sh -I/path/include ...  # other folders (e.g. NVIDIA's pip wheels:
#                                                #   site-packages/nvidia/cuda_runtime/include, nvidia/cublas/include, nvidia/cuda_nvrtc/include)
# Prints one line per item and exits non-zero on any mismatch.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
abi="$here/native/cuda/src/abi.h"
cc=${CC:-cc}
incs="$*"
[ -n "$incs" ] || incs="-I${CUDA_HOME:-${CUDA_PATH:-/usr/local/cuda}}/include"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

{
  cat <<'C'
#include <cuda.h>
#include <nvrtc.h>
#include <cublasLt.h>
#include <stddef.h>
#include <stdio.h>
#define SPAN_ABI_CHECK 1
#include "abi.h"
static int bad = 0;
#define SAME(ours, theirs) do { long long a_ = (long long)(ours), b_ = (long long)(theirs); \
  if (a_ != b_) { printf("MISMATCH %s = %lld, header %s = %lld\n", #ours, a_, #theirs, b_); bad++; } \
  else printf("ok %s = %lld\n", #theirs, b_); } while (0)
#define FIELD(ours, theirs, f) SAME(offsetof(ours, f), offsetof(theirs, f))
/* the prototypes: each span_NAME_t must be the type of &NAME (a compile error otherwise) */
C
  sed -n 's/^typedef .*(\*span_\([A-Za-z0-9_]*\)_t)(.*/_Static_assert(__builtin_types_compatible_p(span_\1_t, __typeof__(\&\1)), "the prototype of \1 differs from the header");/p' "$abi"
  cat <<'C'
int main(void) {
  printf("CUDA_VERSION %d\n", CUDA_VERSION);
C
  # every constant: #define SPAN_X value → SAME(SPAN_X, X)
  sed -n 's/^#define SPAN_\([A-Za-z0-9_]*\) .*/  SAME(SPAN_\1, \1);/p' "$abi"
  cat <<'C'
  /* the integer and handle types span declares, by size */
  SAME(sizeof(int), sizeof(CUresult));
  SAME(sizeof(int), sizeof(CUdevice));
  SAME(sizeof(int), sizeof(CUdevice_attribute));
  SAME(sizeof(int), sizeof(nvrtcResult));
  SAME(sizeof(int), sizeof(cublasStatus_t));
  SAME(sizeof(unsigned long long), sizeof(CUdeviceptr));
  SAME(sizeof(void*), sizeof(CUcontext));
  SAME(sizeof(void*), sizeof(CUstream));
  SAME(sizeof(void*), sizeof(CUmodule));
  SAME(sizeof(void*), sizeof(CUfunction));
  SAME(sizeof(void*), sizeof(CUevent));
  SAME(sizeof(void*), sizeof(nvrtcProgram));
  SAME(sizeof(int), sizeof(CUfunction_attribute));
  /* the structs, by size and field offsets */
  SAME(sizeof(SPAN_cublasLtMatmulAlgo_t), sizeof(cublasLtMatmulAlgo_t));
  SAME(sizeof(SPAN_cublasLtMatmulHeuristicResult_t), sizeof(cublasLtMatmulHeuristicResult_t));
  FIELD(SPAN_cublasLtMatmulHeuristicResult_t, cublasLtMatmulHeuristicResult_t, algo);
  FIELD(SPAN_cublasLtMatmulHeuristicResult_t, cublasLtMatmulHeuristicResult_t, workspaceSize);
  FIELD(SPAN_cublasLtMatmulHeuristicResult_t, cublasLtMatmulHeuristicResult_t, state);
  FIELD(SPAN_cublasLtMatmulHeuristicResult_t, cublasLtMatmulHeuristicResult_t, wavesCount);
  FIELD(SPAN_cublasLtMatmulHeuristicResult_t, cublasLtMatmulHeuristicResult_t, reserved);
C
  sed -n 's/^typedef .*(\*span_\([A-Za-z0-9_]*\)_t)(.*/  printf("ok prototype %s\\n", "\1");/p' "$abi"
  cat <<'C'
  printf(bad ? "%d MISMATCHES\n" : "all match\n", bad);
  return bad != 0;
}
C
} > "$tmp/check.c"

# shellcheck disable=SC2086
if ! "$cc" -std=c11 -Werror=incompatible-pointer-types -Werror=implicit-function-declaration $incs -I"$here/native/cuda/src" "$tmp/check.c" -o "$tmp/check" 2> "$tmp/cc.log"; then
  if grep -q "fatal error: .*\.h: No such file" "$tmp/cc.log"; then
    echo "check-cuda-abi: CUDA headers not found ($(grep -o '[a-zA-Z_]*\.h: No such file' "$tmp/cc.log" | head -1)); pass their folders as -I... or set CUDA_HOME" >&2
    exit 2
  fi
  echo "check-cuda-abi: a declaration of native/cuda/src/abi.h does not match the headers:" >&2
  cat "$tmp/cc.log" >&2
  exit 1
fi
"$tmp/check"
