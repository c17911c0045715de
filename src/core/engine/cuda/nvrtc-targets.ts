/**
 * Whether an NVRTC can compile for a compute capability (issue 35). CUDA 13 dropped the
 * architectures before Turing (sm_50 … sm_72: Maxwell, Pascal, Volta; CUDA 13.0 release notes,
 * "Deprecated or Dropped Architectures"), CUDA 12 supports sm_50 and later, CUDA 11 sm_35 and
 * later. A V100 (7.0) therefore needs NVRTC 12 (or 11.8) next to a CUDA 13 driver: the driver runs
 * what an older NVRTC compiled.
 */
const OLDEST_ARCH: [major: number, arch: number][] = [
  [13, 75],
  [12, 50],
  [11, 35],
]

/** The oldest compute capability (e.g. 75) the NVRTC of this version (major·1000 + minor·10) compiles for. */
export function oldestArch(nvrtcVersion: number): number {
  const major = Math.floor(nvrtcVersion / 1000)
  return OLDEST_ARCH.find(([m]) => major >= m)?.[1] ?? 35
}

/** Why this NVRTC cannot compile span's kernels for this GPU (one line for `span doctor`), or null when it can. */
export function nvrtcCannotTarget(nvrtcVersion: number, arch: number): string | null {
  const oldest = oldestArch(nvrtcVersion)
  if (arch >= oldest) return null
  const cc = `${Math.floor(arch / 10)}.${arch % 10}`
  return (
    `NVRTC ${Math.floor(nvrtcVersion / 1000)}.${Math.floor((nvrtcVersion % 1000) / 10)} cannot compile for compute capability ${cc} (sm_${arch}; it targets sm_${oldest} and later): ` +
    `install NVRTC 12 (pip install nvidia-cuda-nvrtc-cu12) and put its lib folder first in SPAN_CUDA_LIBS; the driver may stay at 13`
  )
}
