#!/usr/bin/env bash
# The one prepared script for a GPU machine (issue 20; its results go to issue 22). On the GPU
# machine (CUDA 13, PyTorch, no Node, no network) it runs span from the bundle:
#   here:   npm run bundle && mkdir -p gpu-carry && cp bundle/span-linux-x64.tar.xz gpu-carry/
#           (gpu-carry/ is git-ignored; name it in the device tool's `carry`)
#   there:  tools/gpu-check.sh            # logs and summary.json under $OUT (default gpu-check-out/)
# Steps, each time-boxed (the whole run ends within SPAN_GPU_CHECK_BUDGET seconds, default 470,
# so it fits 8 minutes with the unpacking) and the script going on past a failed one:
#   unpack     the bundle into a temporary folder (span/bin/span, its node)
#   doctor     span doctor (GPU, driver, NVRTC, cuBLASLt)
#   selftest   span doctor --selftest --backend cuda (every kernel, the bf16 tensor-core attention
#              vs native on bf16-rounded inputs: the real wmma fragments; then a tiny step vs native)
#   abi        tools/check-cuda-abi.sh --all against the machine's CUDA headers
#   nccl_abi   tools/check-nccl-abi.sh against nccl.h where one is found (NVIDIA's nccl wheel)
#   cublaslt   tools/compare-cublaslt-cases.py: the real cuBLASLt on fixtures/cuda/cublaslt-cases.json
#              (the stand-in's saved results), lt-run built with g++ or nvcc's host compiler
#   base_step  span doctor --selftest --preset base (a small-batch base step's loss and gradients vs native)
#   memory     bench/cuda-step.mjs tiny 32x128 200: the allocator's live bytes and tensor count flat
#   fp32_steps, bf16_steps, fp16_steps, bf16_vs_fp32, fp16_vs_fp32, fp16_vs_bf16
#              bench/cuda-step.mjs tiny 32x128 20 at each precision (fp16 with dynamic loss scaling):
#              bf16's and fp16's last loss within 2% of fp32's, fp16's against bf16's; each one's step ms
#   graph_0, graph_1, graph_equal
#              span pretrain tiny 32x128 40 steps without and with SPAN_CUDA_GRAPH=1: equal losses, tokens/s
#   bench      bench/vs-torch-gpu.mjs: span and PyTorch eager (SDPA; torch.autocast for bf16) per configuration in bf16, fp32 and TF32
# Dry run here (SPAN_GPU_CHECK_DRY=1): the stand-ins (SPAN_CUDA_LIBS, default build/standins from
# `npm run standins`), tiny shapes, span from the checkout when gpu-carry/ has no bundle, and the
# steps that need CUDA headers or PyTorch skipped with the reason. Files under $OUT (the device
# tool returns at most 8): gpu-check.log (every step's output, in order) and summary.json.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/gpu-check-out}
dry=${SPAN_GPU_CHECK_DRY:-0}
carry=${SPAN_GPU_CARRY:-$root/gpu-carry}
budget=${SPAN_GPU_CHECK_BUDGET:-470}
mkdir -p "$out"
log=$out/gpu-check.log
: >"$log"
steps=""
results=""
start=$(date +%s)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
[ "$dry" = 1 ] && export SPAN_CUDA_LIBS=${SPAN_CUDA_LIBS:-$root/build/standins}

clean() { tr -d '"\\' | tr '\n\t' '  ' | cut -c1-300; }

# record NAME STATUS SECONDS DETAIL
record() {
  steps="$steps${steps:+,}{\"name\":\"$1\",\"status\":\"$2\",\"seconds\":$3,\"detail\":\"$(printf %s "$4" | clean)\"}"
  printf '== %s: %s (%ss) %s\n' "$1" "$2" "$3" "$4" | tee -a "$log"
}

skip() { record "$1" skipped 0 "$2"; }

# step NAME SECONDS CMD...: CMD under timeout (at most what is left of the budget), output to the log
step() {
  local name=$1 box=$2
  shift 2
  local left=$((budget - ($(date +%s) - start)))
  [ "$box" -gt "$left" ] && box=$left
  if [ "$box" -lt 5 ]; then skip "$name" "no time left in the ${budget}s budget"; return 1; fi
  printf '\n== %s: %s\n' "$name" "$*" >>"$log"
  local t0 rc
  t0=$(date +%s)
  timeout --kill-after=5 "$box" "$@" >"$work/step.out" 2>&1
  rc=$?
  cat "$work/step.out" >>"$log"
  local status=ok
  [ $rc -eq 124 ] || [ $rc -eq 137 ] && status=timeout
  [ $rc -ne 0 ] && [ $status = ok ] && status=failed
  record "$name" "$status" $(($(date +%s) - t0)) "exit $rc; $(tail -n 1 "$work/step.out")"
  [ $rc -eq 0 ]
}

# span and its node: from the bundle, else (dry run) from the checkout
bundle=$(ls "$carry"/span-linux-x64.tar.xz 2>/dev/null)
if [ -n "$bundle" ]; then
  step unpack 60 tar -xJf "$bundle" -C "$work"
  span=("$work/span/bin/span")
  node=$work/span/node/bin/node
  cp -r "$root/bench" "$work/span/bench" # bench/*.mjs import ../dist: the bundle's
  benchdir=$work/span/bench
elif [ "$dry" = 1 ]; then
  skip unpack "no bundle in $carry (dry run: span from the checkout)"
  span=(node "$root/bin/run.js")
  node=node
  benchdir=$root/bench
else
  skip unpack "no bundle in $carry: npm run bundle, then copy bundle/span-linux-x64.tar.xz there"
  span=(false)
  node=false
  benchdir=$root/bench
fi

step doctor 60 "${span[@]}" doctor
step selftest 150 "${span[@]}" doctor --selftest --backend cuda

# CUDA 13's headers and libraries: $CUDA_HOME, /usr/local/cuda, NVIDIA's Python wheels
nvidia_dirs=$(python3 -c 'import nvidia, sys; print(*nvidia.__path__)' 2>/dev/null)
search="${CUDA_HOME:-/usr/local/cuda} /usr/local/cuda $nvidia_dirs"
incs=""
for h in cuda.h nvrtc.h cublasLt.h; do
  f=$(find $search -name "$h" -path '*include*' 2>/dev/null | head -n 1)
  [ -n "$f" ] && incs="$incs -I$(dirname "$f")"
done
if [ "$dry" = 1 ] && [ -z "$incs" ]; then
  skip abi "no CUDA headers here (dry run)"
else
  step abi 60 sh "$root/tools/check-cuda-abi.sh" --all $incs
fi

# NCCL's declarations (native/cuda/src/nccl-abi.h) against nccl.h (PyTorch's nvidia-nccl-cu12 wheel carries one)
ncclh=$(find $search -name nccl.h -path '*include*' 2>/dev/null | head -n 1)
if [ -z "$ncclh" ]; then
  skip nccl_abi "no nccl.h here"
else
  step nccl_abi 30 sh "$root/tools/check-nccl-abi.sh" -I"$(dirname "$ncclh")" $incs
fi

# The real cuBLASLt on the stand-in's saved cases (dry run: the stand-in itself, the plumbing)
if [ "$dry" = 1 ]; then
  ltlib=$(ls "$SPAN_CUDA_LIBS"/libcublasLt.so* 2>/dev/null | head -n 1)
  cudalib=$SPAN_CUDA_LIBS/libcuda.so.1
else
  ltlib=$(find $search /usr/lib /usr/lib64 -name 'libcublasLt.so.13*' 2>/dev/null | head -n 1)
  cudalib=$(ldconfig -p 2>/dev/null | awk '/libcuda\.so\.1 / {print $NF; exit}')
fi
cxx=${CXX:-$(command -v g++ || command -v c++ || echo g++)}
if ! "$cxx" -std=c++17 -O2 "$root/native/cuda/standin/cublaslt/lt-run.cc" -o "$work/lt-run" -ldl >>"$log" 2>&1; then
  skip cublaslt "lt-run does not build with $cxx (see the log)"
elif [ -z "$ltlib" ]; then
  skip cublaslt "no libcublasLt.so.13 found under $search"
else
  step cublaslt 90 python3 "$root/tools/compare-cublaslt-cases.py" "$work/lt-run" "$ltlib" ${cudalib:+"$cudalib"} --json "$work/cublaslt.json"
fi

# A base step vs native (dry run: tiny, the stand-in is too slow for base)
preset=base
[ "$dry" = 1 ] && preset=tiny
step "${preset}_step" 150 "${span[@]}" doctor --selftest --preset $preset

# 200 steps with the device memory watched (dry run: 3 tiny steps of 2 x 16)
if [ "$dry" = 1 ]; then mem_args=(tiny 2x16 3 --vocab 1000); else mem_args=(tiny 32x128 200); fi
if step memory 120 "$node" "$benchdir/cuda-step.mjs" "${mem_args[@]}" && ! grep -q '"flat":true' "$work/step.out"; then
  record memory_flat failed 0 "live bytes or tensor count grew between the middle and the last step"
fi
memory_line=$(grep '^{' "$work/step.out" | tail -n 1)

# --precision bf16 against fp32 on the same steps (the cast kernel and cuBLASLt's bf16 inputs on
# this GPU): the last step's loss within 2% (dry run: 2 tiny steps of 2 x 16)
if [ "$dry" = 1 ]; then p_args=(tiny 2x16 2 --vocab 1000); else p_args=(tiny 32x128 20); fi
declare -A last_loss step_ms
for p in fp32 bf16 fp16; do
  if step "${p}_steps" 90 env SPAN_CUDA_PRECISION=$p "$node" "$benchdir/cuda-step.mjs" "${p_args[@]}"; then
    read -r last_loss[$p] step_ms[$p] < <(grep '^{' "$work/step.out" | tail -n 1 | "$node" -e 'const o = JSON.parse(require("fs").readFileSync(0, "utf8")); console.log(o.precision === process.argv[1] ? `${o.watch[o.steps].loss} ${o.step_ms}` : "wrong-precision -")' "$p")
  fi
done
# NAME A B: B's last loss within 2% of A's, with both step times
compare() {
  local name=$1 a=$2 b=$3 t0
  if [ -z "${last_loss[$a]:-}" ] || [ -z "${last_loss[$b]:-}" ]; then
    skip "$name" "a precision's steps did not finish (see the log)"
    return
  fi
  t0=$(date +%s)
  local detail="last loss $a ${last_loss[$a]} (${step_ms[$a]} ms/step), $b ${last_loss[$b]} (${step_ms[$b]} ms/step)"
  if "$node" -e 'const [a, b] = process.argv.slice(1).map(Number); process.exit(Math.abs(b - a) <= 0.02 * Math.abs(a) ? 0 : 1)' "${last_loss[$a]}" "${last_loss[$b]}"; then
    record "$name" ok $(($(date +%s) - t0)) "$detail"
  else
    record "$name" failed $(($(date +%s) - t0)) "$detail: more than 2% apart"
  fi
}
compare bf16_vs_fp32 fp32 bf16
compare fp16_vs_fp32 fp32 fp16
compare fp16_vs_bf16 bf16 fp16

# A real span pretrain with and without CUDA graphs (SPAN_CUDA_GRAPH=1, opt-in until this is timed):
# the same losses (a replayed step equals an eager one on the stand-in, byte for byte), and each
# one's tokens/s, to decide whether graphs become the default (dry run: 6 tiny steps of 2 x 16)
if [ "$dry" = 1 ]; then glen=16 g_args=(--batch-size 2 --max-steps 6 --log-every 3); else glen=128 g_args=(--batch-size 32 --max-steps 40 --log-every 10); fi
graph_lines=""
if "${span[@]}" tokenize --vocab "$root/fixtures/vocab.txt" "$root/fixtures/corpus.txt" 2>>"$log" | "${span[@]}" block --len $glen >"$work/graph.ndjson" 2>>"$log"; then # blocks: pretrain masks them (pre-masked data is not padded to fixed target counts, so it stays eager)
  for g in 0 1; do
    step "graph_$g" 90 env SPAN_CUDA_GRAPH=$g "${span[@]}" pretrain "$work/graph.ndjson" --backend cuda --preset tiny --seed 1 \
      --vocab "$root/fixtures/vocab.txt" --out "$work/graph-$g" "${g_args[@]}" &&
      graph_lines="$graph_lines $(grep '"tokens_per_s"' "$work/step.out" | tail -n 1 | tr -d ' ')" &&
      grep 'cuda graph:' "$work/step.out" | tail -n 1 >>"$log"
  done
  set -- $graph_lines
  if [ $# -eq 2 ]; then
    if "$node" -e 'const [a, b] = process.argv.slice(1).map(JSON.parse); process.exit(a.loss === b.loss ? 0 : 1)' "$1" "$2"; then
      record graph_equal ok 0 "eager $1; graphs $2"
    else
      record graph_equal failed 0 "losses differ: eager $1; graphs $2"
    fi
  fi
else
  skip graph_0 "the pretraining data for the graph steps did not build (see the log)"
fi

# span against PyTorch on the same GPU, whatever time is left
if [ "$dry" = 1 ] || ! python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  skip bench "needs PyTorch with a CUDA device"
  bench_lines=""
else
  # one round, bf16 (the target) first: every configuration prints its line as it finishes
  step bench 300 env SPAN_GPU_PRECISIONS="${SPAN_GPU_PRECISIONS:-bf16,fp32,tf32}" "$node" "$benchdir/vs-torch-gpu.mjs" --rounds 1
  bench_lines=$(grep '"span_vs_torch"' "$work/step.out" | paste -sd, -)
fi

cat >"$out/summary.json" <<JSON
{"dry_run":$([ "$dry" = 1 ] && echo true || echo false),"seconds":$(($(date +%s) - start)),"gpu":"$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1 | clean)","steps":[$steps],"memory":${memory_line:-null},"span_vs_torch":[${bench_lines}]}
JSON
[ -f "$work/cublaslt.json" ] && cp "$work/cublaslt.json" "$out/cublaslt.json"
printf '\nsummary: %s\n' "$out/summary.json" | tee -a "$log"
cat "$out/summary.json"
failed=$(printf %s "$steps" | grep -o '"status":"\(failed\|timeout\)"' | wc -l)
[ "$failed" -eq 0 ]
