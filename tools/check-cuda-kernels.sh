#!/bin/sh
# Compiles every kernel source of native/cuda/kernels/ (each on its own, with only the headers of
# its folder) to CUBIN for each architecture with a real NVRTC, opened by dlopen the way span's
# cuda addon opens it (tools/nvrtc-compile.cc, built here with native/cuda/src/loader.cc), and
# with nvcc -cubin where nvcc is. No GPU needed. A compile error fails the check. A source with a
# "// check-variants: NAME[@SM] ..." line is compiled once more per NAME with -DNAME=1 (flash_attention_wmma.cu's
# tf32 and fp16 modules), reported as FILE[NAME]; @SM: only for sm_SM and later (`default`: the file as is).
#   tools/check-cuda-kernels.sh [--arch sm_80,sm_90] [--nvrtc LIB --builtins LIB] [--cuda-include DIR] [FILE.cu ...]
# --cuda-include: CUDA's headers for the kernels that include <mma.h>/<cuda_bf16.h> (NVRTC has no
# copy of them; span's backend passes the same folder, src/core/engine/cuda/cuda-include.ts). Without
# it: the first of $SPAN_CUDA_INCLUDE, the toolkit's include beside NVRTC, the CUDA 11.8 headers of
# tools/ci-cuda-deps.sh (for NVRTC 11), $CUDA_HOME/include (/usr/local/cuda) that holds mma.h.
# Without --nvrtc: the newest libnvrtc.so.N in the system loader's cache (Debian's 11.8 from
# tools/ci-cuda-deps.sh here; CUDA 13's on a GPU machine) and the libnvrtc-builtins beside it.
# Exit 0 when all compile, 1 on a compile error, 2 when no NVRTC or no C++ compiler is found.
# SPAN_NVCC_CACHE=DIR (.ci/run sets one outside the clone): an nvcc -cubin that compiled is remembered
# under the hash of what it read (nvcc --version, the arch, the -D, the kernel, every file of its folder
# and of native/cuda/kernels/), and a later run with the same inputs prints its "ok nvcc" line
# without compiling again; a failure is never remembered. NVRTC always compiles.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
archs=sm_80,sm_90
nvrtc=""
builtins=""
cuda_inc=""
nvcc=${NVCC:-${CUDA_HOME:-/usr/local/cuda}/bin/nvcc}
while [ $# -gt 0 ]; do
  case $1 in
    --arch) archs=$2; shift 2 ;;
    --nvrtc) nvrtc=$2; shift 2 ;;
    --builtins) builtins=$2; shift 2 ;;
    --cuda-include) cuda_inc=$2; shift 2 ;;
    *) break ;;
  esac
done
kernels=$here/native/cuda/kernels
[ $# -gt 0 ] || set -- "$kernels"/*.cu
if [ -z "$nvrtc" ]; then
  nvrtc=$(/sbin/ldconfig -p | sed -n 's/^[[:space:]]*libnvrtc\.so\.[0-9.]* (.*x86-64.*) => //p' | sort -V -r | head -1)
fi
if [ -n "$nvrtc" ] && [ -z "$builtins" ]; then
  # libnvrtc.so.11.2 ships with libnvrtc-builtins.so.11.8, libnvrtc.so.13 with .so.13.x: the newest beside it
  builtins=$(ls "$(dirname "$nvrtc")"/libnvrtc-builtins.so.* 2> /dev/null | sort -V -r | head -1)
fi
if [ -z "$nvrtc" ] || [ -z "$builtins" ]; then
  echo "check-cuda-kernels: no NVRTC found (tools/ci-cuda-deps.sh installs Debian's 11.8); pass --nvrtc and --builtins" >&2
  exit 2
fi
if [ -z "$cuda_inc" ]; then
  case $nvrtc in *.so.11*) c118=${SPAN_CUDA118_DIR:-/opt/span-cuda-11.8}/include ;; *) c118="" ;; esac
  for d in "${SPAN_CUDA_INCLUDE:-}" "$(dirname "$nvrtc")/../include" "$c118" "${CUDA_HOME:-/usr/local/cuda}/include"; do
    if [ -n "$d" ] && [ -f "$d/mma.h" ] && [ -f "$d/cuda_bf16.h" ]; then
      cuda_inc=$d
      break
    fi
  done
fi
if [ -n "$cuda_inc" ]; then
  echo "CUDA headers $cuda_inc"
else
  echo "check-cuda-kernels: no CUDA headers (mma.h) found: the kernels that include them fail; pass --cuda-include" >&2
fi
cxx=${CXX:-g++}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! "$cxx" -std=c++17 -O1 -o "$tmp/nvrtc-compile" "$here/tools/nvrtc-compile.cc" "$here/native/cuda/src/loader.cc" -ldl 2> "$tmp/cxx.log"; then
  echo "check-cuda-kernels: cannot build tools/nvrtc-compile.cc:" >&2
  cat "$tmp/cxx.log" >&2
  exit 2
fi
bad=0
for arch in $(echo "$archs" | tr , ' '); do
  rc=0
  "$tmp/nvrtc-compile" "$builtins" "$nvrtc" "$arch" "$kernels${cuda_inc:+:$cuda_inc}" "$@" || rc=$?
  [ "$rc" != 2 ] || exit 2 # NVRTC did not open
  [ "$rc" = 0 ] || bad=1
done
if [ -x "$nvcc" ]; then
  cache=${SPAN_NVCC_CACHE:-}
  hits=0
  n=0
  if [ -n "$cache" ]; then
    nvcc_id=$("$nvcc" --version | sha256sum) && mkdir -p "$cache" || cache=""
  fi
  for arch in $(echo "$archs" | tr , ' '); do
    for f in "$@"; do
      # the file itself, then each variant of its "// check-variants:" line (-DNAME=1; NAME@SM: from sm_SM on), as nvrtc-compile does
      vs=$(sed -n 's|^// check-variants:||p' "$f")
      case " $vs " in *" default"*) ;; *) vs="default $vs" ;; esac
      for nv in $vs; do
        v=${nv%@*}
        [ "$v" != default ] || v=""
        label=$f${v:+[$v]}
        case $nv in *@*) if [ "${arch#sm_}" -lt "${nv#*@}" ]; then echo "skip nvcc $label $arch (sm_${nv#*@} and later)"; continue; fi ;; esac
        n=$((n + 1))
        key=""
        [ -z "$cache" ] || key=$( (echo "$nvcc_id $arch $v" && cat "$f" "$kernels"/* "$(dirname "$f")"/* 2> /dev/null) | sha256sum | cut -c1-40)
        if [ -n "$key" ] && [ -f "$cache/$key" ]; then
          touch "$cache/$key"
          echo "ok nvcc $label $arch $(cat "$cache/$key") bytes"
          hits=$((hits + 1))
        elif "$nvcc" -cubin -arch="$arch" -I"$kernels" ${v:+-D$v=1} -o "$tmp/k.cubin" "$f" 2> "$tmp/nvcc.log"; then
          bytes=$(wc -c < "$tmp/k.cubin")
          echo "ok nvcc $label $arch $bytes bytes"
          if [ -n "$key" ]; then echo "$bytes" > "$cache/$key.$$" && mv "$cache/$key.$$" "$cache/$key"; fi
        elif grep -q "Unsupported gpu architecture" "$tmp/nvcc.log"; then
          echo "skip nvcc $label $arch (this nvcc cannot target it: CUDA 13 dropped sm_70 and sm_72)"
        else
          echo "$label: nvcc -cubin -arch=$arch failed:" >&2
          cat "$tmp/nvcc.log" >&2
          bad=1
        fi
      done
    done
  done
  [ -z "$cache" ] || echo "nvcc: $hits of $n from the cache $cache"
else
  echo "nvcc not found ($nvcc): nvcc -cubin not checked"
fi
exit $bad
