import {readFileSync} from 'node:fs'
import {freemem} from 'node:os'
import {SpanError} from './errors.js'

/** Memory a run may take, and where the figure comes from (said on stderr with the plan). */
export interface MemoryBudget {
  bytes: number
  source: string
}

/**
 * `SPAN_MEMORY_AVAILABLE`: the memory a run may plan for, in bytes or with a unit (`512M`, `2G`,
 * `1.5GiB`); it replaces what the machine reports (tests point it at a small value; a user may cap a
 * run below what is free). Null when unset; a malformed value is said in the error.
 */
export function memoryOverride(env: NodeJS.ProcessEnv = process.env): MemoryBudget | null {
  const text = env.SPAN_MEMORY_AVAILABLE
  if (text === undefined || text.trim() === '') return null
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(i?b)?\s*$/i.exec(text)
  if (!m) throw new SpanError(`SPAN_MEMORY_AVAILABLE must be bytes or a size such as 2G, got ${JSON.stringify(text)}`, 2)
  const unit = 1024 ** 'bkmgt'.indexOf((m[2] || 'b').toLowerCase())
  return {bytes: Number(m[1]) * unit, source: 'SPAN_MEMORY_AVAILABLE'}
}

/** The `MemAvailable` line of /proc/meminfo (the kernel's estimate of what can be allocated without swapping), or null. */
function memAvailable(): number | null {
  try {
    const m = /^MemAvailable:\s+(\d+) kB$/m.exec(readFileSync('/proc/meminfo', 'utf8'))
    return m ? Number(m[1]) * 1024 : null
  } catch {
    return null
  }
}

function readNumber(path: string): number | null {
  try {
    const text = readFileSync(path, 'utf8').trim()
    return /^\d+$/.test(text) ? Number(text) : null
  } catch {
    return null
  }
}

/** What this process's memory cgroup still allows (v2 memory.max, else v1 limit_in_bytes, less usage), or null without a limit. */
function cgroupRoom(): number | null {
  for (const [limit, usage] of [
    ['/sys/fs/cgroup/memory.max', '/sys/fs/cgroup/memory.current'],
    ['/sys/fs/cgroup/memory/memory.limit_in_bytes', '/sys/fs/cgroup/memory/memory.usage_in_bytes'],
  ]) {
    const max = readNumber(limit)
    if (max === null || max >= 2 ** 60) continue // "max" or v1's "no limit" (2^63 rounded to pages)
    return Math.max(0, max - (readNumber(usage) ?? 0))
  }
  return null
}

/**
 * Host memory a run may take: SPAN_MEMORY_AVAILABLE, else the least of the kernel's MemAvailable
 * (os.freemem where there is no /proc) and the room left under this process's cgroup limit.
 */
export function hostMemory(env: NodeJS.ProcessEnv = process.env): MemoryBudget {
  const set = memoryOverride(env)
  if (set) return set
  const avail = memAvailable()
  const room = cgroupRoom()
  const host: MemoryBudget = avail === null ? {bytes: freemem(), source: 'free memory'} : {bytes: avail, source: 'available memory'}
  return room !== null && room < host.bytes ? {bytes: room, source: 'room under the cgroup memory limit'} : host
}

/** 2.3 GiB, 512 MiB (binary units, as `free -h` gives them). */
export function formatBytes(bytes: number): string {
  if (bytes >= 2 ** 30) return `${(bytes / 2 ** 30).toFixed(bytes >= 10 * 2 ** 30 ? 0 : 1)} GiB`
  return `${Math.max(1, Math.round(bytes / 2 ** 20))} MiB`
}
