#!/bin/sh
# The real CUDA toolchain pieces span's CI checks against, without a GPU (issue 20), from
# Debian 12's non-free component (CUDA 11.8):
#  - libnvrtc11.2 + libnvrtc-builtins11.8 (17 MB): a real NVRTC that compiles span's kernels to
#    CUBIN for sm_80 and sm_90 (tools/check-cuda-kernels.sh);
#  - the headers cuda.h, nvrtc.h, cublasLt.h (and what they include) for tools/check-cuda-abi.sh,
#    taken from nvidia-cuda-dev's .deb (774 MB, ~40 s to fetch and unpack here) by extracting its
#    usr/include only (14 MB) into $SPAN_CUDA118_DIR/include (default /opt/span-cuda-11.8), not by
#    installing its 5 GB closure.
#  - NVRTC 13 from NVIDIA's wheel (pip install nvidia-cuda-nvrtc, ~70 MB) into a venv of its own,
#    $SPAN_NVRTC13_VENV (default /opt/span-nvrtc13), outside the repository: the sm_75 compile check
#    (test/tools/check-cuda-kernels-arch.test.ts; issue 35), when the image has no libnvrtc.so.13.
# Idempotent: what is already there is not fetched again. The non-free component is listed in a
# sources file of its own (span-cuda-nonfree.sources) so the default list stays `main`. Needs
# root and apt (Debian 12); elsewhere it says why and exits 0, and the tests that need these skip.
# Prints one line per piece and how long it took.
set -u
dir=${SPAN_CUDA118_DIR:-/opt/span-cuda-11.8}
src=/etc/apt/sources.list.d/span-cuda-nonfree.sources
now() { date +%s; }
t0=$(now)

# NVRTC 13 (any OS with python3 -m venv and a pip index): first, since it needs neither root nor apt
venv=${SPAN_NVRTC13_VENV:-/opt/span-nvrtc13}
if ls "$venv"/lib/python*/site-packages/nvidia/cu13/lib/libnvrtc.so.13 > /dev/null 2>&1; then
  echo "ci-cuda-deps: NVRTC 13 already in $venv"
elif python3 -m venv "$venv" > /dev/null 2>&1 && "$venv/bin/pip" install -q nvidia-cuda-nvrtc > /dev/null 2>&1; then
  echo "ci-cuda-deps: NVRTC 13 installed in $venv ($(($(now) - t0)) s)"
else
  echo "ci-cuda-deps: could not install NVRTC 13 into $venv (pip install nvidia-cuda-nvrtc): the sm_75 compile check skips"
fi

if ! command -v apt-get > /dev/null || [ "$(id -u)" != 0 ] || ! grep -q bookworm /etc/os-release 2> /dev/null; then
  echo "ci-cuda-deps: needs root, apt and Debian 12 (bookworm): NVRTC and the CUDA headers not installed; their tests skip"
  exit 0
fi

have_nvrtc() { dpkg -s libnvrtc11.2 libnvrtc-builtins11.8 > /dev/null 2>&1; }
have_headers() { [ -f "$dir/include/cuda.h" ] && [ -f "$dir/include/nvrtc.h" ] && [ -f "$dir/include/cublasLt.h" ]; }

if have_nvrtc && have_headers; then
  echo "ci-cuda-deps: NVRTC 11.8 and the CUDA 11.8 headers ($dir/include) already there"
  exit 0
fi

if [ ! -f "$src" ]; then
  cat > "$src" << 'EOF'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: contrib non-free
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
fi
# Refresh this source's lists only (the others stay as they are).
apt-get update -qq -o Dir::Etc::sourcelist="$src" -o Dir::Etc::sourceparts=- -o APT::Get::List-Cleanup=0 > /dev/null 2>&1 ||
  echo "ci-cuda-deps: apt-get update of $src failed"

if ! have_nvrtc; then
  if DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libnvrtc11.2 libnvrtc-builtins11.8 > /dev/null 2>&1; then
    echo "ci-cuda-deps: NVRTC 11.8 installed ($(($(now) - t0)) s)"
  else
    echo "ci-cuda-deps: could not install libnvrtc11.2: the NVRTC compile tests skip"
  fi
fi

if ! have_headers; then
  t1=$(now)
  work=$(mktemp -d)
  if (cd "$work" && apt-get download -qq nvidia-cuda-dev > /dev/null 2>&1) &&
    mkdir -p "$work/x" && dpkg-deb --fsys-tarfile "$work"/nvidia-cuda-dev_*.deb | tar -x -C "$work/x" --wildcards './usr/include/*'; then
    mkdir -p "$dir" && rm -rf "$dir/include" && mv "$work/x/usr/include" "$dir/include"
    echo "ci-cuda-deps: CUDA 11.8 headers in $dir/include ($(($(now) - t1)) s)"
  else
    echo "ci-cuda-deps: could not fetch nvidia-cuda-dev: the ABI check of nvrtc.h and cublasLt.h skips"
  fi
  rm -rf "$work"
fi
echo "ci-cuda-deps: done in $(($(now) - t0)) s"
