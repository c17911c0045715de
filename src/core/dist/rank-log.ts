/**
 * Rank k > 0 prefixes each of its stderr lines with `[rank k] ` (rank 0 writes as one process
 * does), so a job's merged log says who spoke. `mute()` drops the rank's lines (an error every
 * rank meets at once is told by rank 0 alone).
 */
export interface RankLog {
  mute(): void
  dispose(): void
}

export function prefixStderr(rank: number, stream: NodeJS.WriteStream = process.stderr): RankLog {
  if (rank === 0) return {mute() {}, dispose() {}}
  const write = stream.write.bind(stream)
  let atLineStart = true
  let muted = false
  const prefix = `[rank ${rank}] `
  stream.write = ((chunk: unknown, ...rest: unknown[]) => {
    if (muted) return true
    const s = typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8')
    let out = ''
    for (const piece of s.split(/(?<=\n)/)) {
      if (piece === '') continue
      out += (atLineStart ? prefix : '') + piece
      atLineStart = piece.endsWith('\n')
    }
    // spread-ok: a write call's own arguments (encoding, callback)
    return (write as (c: string, ...r: unknown[]) => boolean)(out, ...rest)
  }) as typeof stream.write
  return {
    mute() {
      muted = true
    },
    dispose() {
      stream.write = write
    },
  }
}
