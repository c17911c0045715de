import {existsSync} from 'node:fs'
import {dirname, join} from 'node:path'

/**
 * The CUDA toolkit's include folder, which NVRTC needs for `<mma.h>` and `<cuda_bf16.h>` (the
 * tensor-core attention, flash_attention_wmma.cu): NVRTC has no built-in copy of them. The first of
 * $SPAN_CUDA_INCLUDE, the NVRTC stand-in's span-emu/include, $CUDA_HOME/include, $CUDA_PATH/include, the folder beside libnvrtc
 * (`lib/../include`, a toolkit's layout), /usr/local/cuda/include, /opt/cuda/include that holds
 * both, or null (the bf16 attention then runs on the fp32 FMA kernels; `span doctor` says so).
 * The NVRTC stand-in finds its own emulated headers first (docs/cuda-standins.md), so passing this
 * folder to it changes nothing.
 */
export function cudaIncludeDir(nvrtcPath?: string, env: NodeJS.ProcessEnv = process.env): string | null {
  const dirs = [
    env.SPAN_CUDA_INCLUDE,
    nvrtcPath && join(dirname(nvrtcPath), 'span-emu', 'include'), // the NVRTC stand-in's own (it uses them whatever -I says)
    env.CUDA_HOME && join(env.CUDA_HOME, 'include'),
    env.CUDA_PATH && join(env.CUDA_PATH, 'include'),
    nvrtcPath && join(dirname(nvrtcPath), '..', 'include'),
    '/usr/local/cuda/include',
    '/opt/cuda/include',
  ]
  return dirs.find((d): d is string => !!d && existsSync(join(d, 'mma.h')) && existsSync(join(d, 'cuda_bf16.h'))) ?? null
}
