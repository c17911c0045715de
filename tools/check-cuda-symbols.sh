#!/bin/sh
# Checks that every entry point span's cuda addon resolves by name (dlsym) in a library exists in a
# real copy of that library: nm -D --defined-only of libcublasLt.so.N, libnccl.so.N or libnvrtc.so.N
# (NVIDIA's pip wheels bring them; no GPU needed), against the names the addon's sources give to
# dlsym (native/cuda/src/*.cc: B(field, "name"), SPAN_BIND(field, "name"), sym<T>(lib, "name"), need(lib, "name"),
# dlsym(lib, "name")), those of the library's prefix (cublasLt, nccl, nvrtc). A missing one is what
# would make span's loader refuse the library on a GPU machine.
#   tools/check-cuda-symbols.sh /path/libcublasLt.so.13 /path/libnccl.so.2 /path/libnvrtc.so.13
# SPAN_CUDA_SRC names another source folder (the tests check that a renamed entry point fails).
# One line per name; exit 1 when one is missing, 2 when a library or nm is not there.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
src=${SPAN_CUDA_SRC:-"$here/native/cuda/src"}
command -v nm > /dev/null || { echo "check-cuda-symbols: nm not found (binutils)" >&2; exit 2; }
bad=0
for lib in "$@"; do
  [ -f "$lib" ] || { echo "check-cuda-symbols: $lib: No such file" >&2; exit 2; }
  case $(basename "$lib") in
    libcublasLt.so*) prefix=cublasLt ;;
    libnccl.so*) prefix=nccl ;;
    libnvrtc.so*) prefix=nvrtc ;;
    *) echo "check-cuda-symbols: $lib: not libcublasLt, libnccl or libnvrtc" >&2; exit 2 ;;
  esac
  names=$(grep -ohE '(\bB\([A-Za-z0-9_]+, |\bSPAN_BIND\([A-Za-z0-9_]+, |sym<[A-Za-z0-9_]+>\([a-z]+, |need\([a-z]+, |dlsym\([a-z]+, )"'"$prefix"'[A-Za-z0-9_]*"' "$src"/*.cc | sed 's/.*"\(.*\)"/\1/' | sort -u)
  [ -n "$names" ] || { echo "check-cuda-symbols: no $prefix entry point found in $src" >&2; exit 2; }
  defined=$(nm -D --defined-only "$lib" | awk '{print $NF}' | sed 's/@.*//' | sort -u)
  n=0
  for name in $names; do
    n=$((n + 1))
    if echo "$defined" | grep -qx "$name"; then echo "ok $name"; else echo "MISSING $name in $lib"; bad=1; fi
  done
  echo "$(basename "$lib"): $n entry points checked"
done
exit $bad
