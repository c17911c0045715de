#!/bin/sh
# Checks span's hand-written NCCL declarations (native/cuda/src/nccl-abi.h, used by the cuda
# addon's nccl.cc and by the stand-in libnccl) against a real nccl.h: every SPAN_X constant
# against X, the sizes of the handle, enum and unique-id types, and every function-pointer
# prototype against the header's function (a compile error when they differ), as
# tools/check-cuda-abi.sh does for cuda.h. nccl.h includes cuda_runtime.h, so CUDA's headers are
# needed too. No GPU, no libnccl:
#   tools/check-nccl-abi.sh                              # nccl.h under $NCCL_HOME/include, or pip's wheel
#                                                        #   (site-packages/nvidia/nccl/include)
#   tools/check-nccl-abi.sh -I/path/nccl/include ...     # other folders; CUDA's from $CUDA_HOME/include
# SPAN_NCCL_ABI_H names another nccl-abi.h (to see a wrong one fail). Prints one line per item;
# exits 1 on any mismatch, 2 when nccl.h (or cuda_runtime.h) is not found.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
abi=${SPAN_NCCL_ABI_H:-"$here/native/cuda/src/nccl-abi.h"}
cc=${CC:-cc}
incs="$*"
if [ -z "$incs" ]; then
  wheel=$(python3 -c 'import nvidia, sys; print(*nvidia.__path__)' 2>/dev/null || true)
  for d in ${NCCL_HOME:+$NCCL_HOME/include} $(for w in $wheel; do echo "$w/nccl/include"; done); do
    [ -f "$d/nccl.h" ] && incs="-I$d" && break
  done
fi
incs="$incs -I${CUDA_HOME:-${CUDA_PATH:-/usr/local/cuda}}/include"
for h in nccl cuda_runtime; do
  # shellcheck disable=SC2086
  if ! printf '#include <%s.h>\n' "$h" | "$cc" -E $incs - > /dev/null 2>&1; then
    echo "check-nccl-abi: $h.h not found (pip install nvidia-nccl-cu12 and pass -I.../nvidia/nccl/include, or set NCCL_HOME; CUDA's from CUDA_HOME)" >&2
    exit 2
  fi
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
{
  cat <<'C'
#include <nccl.h>
#define SPAN_ABI_CHECK_NCCL 1
#include <stdio.h>
#include "nccl-abi.h"
static int bad = 0;
#define SAME(ours, theirs) do { long long a_ = (long long)(ours), b_ = (long long)(theirs); \
  if (a_ != b_) { printf("MISMATCH %s = %lld, header %s = %lld\n", #ours, a_, #theirs, b_); bad++; } \
  else printf("ok %s = %lld\n", #theirs, b_); } while (0)
C
  sed -n 's/^typedef .*(\*span_\([A-Za-z0-9_]*\)_t)(.*/_Static_assert(__builtin_types_compatible_p(span_\1_t, __typeof__(\&\1)), "the prototype of \1 differs from nccl.h");/p' "$abi"
  cat <<'C'
int main(void) {
  printf("NCCL_VERSION_CODE %d\n", NCCL_VERSION_CODE);
  SAME(sizeof(int), sizeof(ncclResult_t));
  SAME(sizeof(int), sizeof(ncclDataType_t));
  SAME(sizeof(int), sizeof(ncclRedOp_t));
  SAME(sizeof(void*), sizeof(ncclComm_t));
  SAME(sizeof(void*), sizeof(cudaStream_t));
  SAME(SPAN_NCCL_UNIQUE_ID_BYTES, sizeof(ncclUniqueId));
C
  sed -n 's/^#define SPAN_\([A-Za-z0-9_]*\) .*/  SAME(SPAN_\1, \1);/p' "$abi"
  sed -n 's/^typedef .*(\*span_\([A-Za-z0-9_]*\)_t)(.*/  printf("ok prototype %s\\n", "\1");/p' "$abi"
  cat <<'C'
  printf(bad ? "%d MISMATCHES\n" : "all match\n", bad);
  return bad != 0;
}
C
} > "$tmp/check.c"
cp "$abi" "$tmp/nccl-abi.h"
# shellcheck disable=SC2086
if ! "$cc" -std=c11 -Werror=incompatible-pointer-types -Werror=implicit-function-declaration $incs -I"$tmp" "$tmp/check.c" -o "$tmp/check" 2> "$tmp/cc.log"; then
  echo "check-nccl-abi: a declaration of native/cuda/src/nccl-abi.h does not match nccl.h:" >&2
  cat "$tmp/cc.log" >&2
  exit 1
fi
"$tmp/check"
