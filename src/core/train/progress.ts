import cliProgress from 'cli-progress'

/** Training progress on stderr: a bar when stderr is a terminal, else a line every `every` ms. */
export interface Progress {
  start(total: number, from: number): void
  update(step: number, loss: number | null, tokensPerS: number | null): void
  stop(): void
}

export function makeProgress(label = 'pretrain', stream: NodeJS.WriteStream = process.stderr, every = 30_000): Progress {
  return stream.isTTY ? barProgress(label, stream) : lineProgress((s) => stream.write(s), every, Date.now, label)
}

function barProgress(label: string, stream: NodeJS.WriteStream): Progress {
  const bar = new cliProgress.SingleBar({
    stream,
    format: `${label} [{bar}] {value}/{total} steps | loss {loss} | {tps} tok/s | {left} left`,
    hideCursor: true,
  }, cliProgress.Presets.shades_classic)
  const clock = stepClock(Date.now)
  return {
    start: (total, from) => {
      clock.start(total, from)
      bar.start(total, from, {loss: '-', tps: '-', left: '-'})
    },
    update: (step, loss, tps) => bar.update(step, {loss: loss === null ? '-' : loss.toFixed(3), tps: tps === null ? '-' : Math.round(tps), left: clock.left(step)}),
    stop: () => bar.stop(),
  }
}

/**
 * Time left from the steps of this invocation so far (the first step, which compiles and
 * warms caches, is left out once there are others): "3h12m", "45s", or "-" before a step is timed.
 */
export function stepClock(now: () => number): {start(total: number, from: number): void; left(step: number): string; secondsPerStep(step: number): number | null} {
  let total = 0
  let from = 0
  let t0 = 0
  let t1: number | null = null // after the first step
  const perStep = (step: number): number | null => {
    if (step <= from) return null
    if (t1 !== null && step > from + 1) return (now() - t1) / 1000 / (step - from - 1)
    return (now() - t0) / 1000 / (step - from)
  }
  return {
    start(t, f) {
      ;[total, from, t0, t1] = [t, f, now(), null]
    },
    left(step) {
      if (t1 === null && step > from) t1 = now()
      const s = perStep(step)
      return s === null ? '-' : formatDuration(s * (total - step))
    },
    secondsPerStep: perStep,
  }
}

/** 93784 → "1d2h3m", 3725 → "1h2m", 65 → "1m5s", 7.2 → "7s". */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds))
  const [d, h, m, r] = [Math.floor(s / 86400), Math.floor((s % 86400) / 3600), Math.floor((s % 3600) / 60), s % 60]
  if (d > 0) return `${d}d${h}h${m}m`
  if (h > 0) return `${h}h${m}m`
  return m > 0 ? `${m}m${r}s` : `${r}s`
}

/** Without a terminal (a log file, CI): one plain line at most every `every` ms, with tokens/s and time left. */
export function lineProgress(write: (s: string) => void, every: number, now: () => number = Date.now, label = 'pretrain'): Progress {
  let total = 0
  let last = 0
  const clock = stepClock(now)
  return {
    start(t, from) {
      total = t
      last = now()
      clock.start(t, from)
      write(`${label}: from step ${from} to ${t}\n`)
    },
    update(step, loss, tps) {
      const left = clock.left(step)
      if (now() - last < every && step !== total) return
      last = now()
      const l = loss === null ? '-' : loss.toFixed(4)
      write(`${label}: step ${step}/${total} loss ${l} ${tps === null ? '-' : Math.round(tps)} tok/s, ${left} left\n`)
    },
    stop() {},
  }
}

const DAY = 86_400
/** Said after the estimate when the run would outlast a day: what a first run that ends today looks like. */
export const LONG_RUN_HINT =
  'that is more than a day on this machine: for a first run that ends today, take a smaller model and fewer steps ' +
  '(--preset tiny --max-steps 2000 is minutes to an hour on a laptop CPU); SIGINT or SIGTERM stops this one after its step with a checkpoint'

/**
 * Says once, on stderr, how long a thousand steps take on this machine, from the first steps
 * (the first, which compiles kernels and warms caches, only when it alone took 20 s or more;
 * else the second), and what that means for the steps left: a base-size run on a CPU learns at
 * once that it would take months.
 */
export function speedNote(log: (line: string) => void, stepsLeft: number, where: string): {step(seconds: number): void} {
  let n = 0
  let said = false
  return {
    step(seconds) {
      n++
      if (said || (n === 1 && seconds < 20 && stepsLeft > 1)) return
      said = true
      log(`1000 steps take about ${formatDuration(1000 * seconds)} on this machine (${where}, measured on step ${n} of this run); ` +
        `the ${stepsLeft.toLocaleString('en-US')} steps to go about ${formatDuration(stepsLeft * seconds)} (${seconds < 10 ? seconds.toFixed(2) : Math.round(seconds)} s a step)`)
      if (stepsLeft * seconds > DAY) log(LONG_RUN_HINT)
    },
  }
}
