import cliProgress from 'cli-progress'

/** Training progress on stderr: a bar when stderr is a terminal, else a line every `every` ms. */
export interface Progress {
  start(total: number, from: number): void
  update(step: number, loss: number | null, tokensPerS: number | null): void
  stop(): void
}

export function makeProgress(stream: NodeJS.WriteStream = process.stderr, every = 30_000): Progress {
  return stream.isTTY ? barProgress(stream) : lineProgress((s) => stream.write(s), every)
}

function barProgress(stream: NodeJS.WriteStream): Progress {
  const bar = new cliProgress.SingleBar({
    stream,
    format: 'pretrain [{bar}] {value}/{total} steps | loss {loss} | {tps} tok/s | eta {eta_formatted}',
    hideCursor: true,
  }, cliProgress.Presets.shades_classic)
  return {
    start: (total, from) => bar.start(total, from, {loss: '-', tps: '-'}),
    update: (step, loss, tps) => bar.update(step, {loss: loss === null ? '-' : loss.toFixed(3), tps: tps === null ? '-' : Math.round(tps)}),
    stop: () => bar.stop(),
  }
}

/** Without a terminal (a log file, CI): one plain line at most every `every` ms. */
export function lineProgress(write: (s: string) => void, every: number, now: () => number = Date.now): Progress {
  let total = 0
  let last = 0
  return {
    start(t, from) {
      total = t
      last = now()
      write(`pretrain: from step ${from} to ${t}\n`)
    },
    update(step, loss, tps) {
      if (now() - last < every && step !== total) return
      last = now()
      const l = loss === null ? '-' : loss.toFixed(4)
      write(`pretrain: step ${step}/${total} loss ${l} ${tps === null ? '-' : Math.round(tps)} tok/s\n`)
    },
    stop() {},
  }
}
