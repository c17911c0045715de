/**
 * The SHA-256 of a run's training or dev data, which `finetune --resume` compares with the saved
 * one: a file's bytes, or for a folder (coref's `--train DIR --train-split train`) the names and
 * SHA-256 sums of its files, in name order, subfolders included.
 */
import {createHash} from 'node:crypto'
import {readdir, stat} from 'node:fs/promises'
import {join} from 'node:path'
import {sha256Of} from './atomic.js'

export async function dataSha256(path: string): Promise<string> {
  if (!(await stat(path)).isDirectory()) return sha256Of(path)
  const h = createHash('sha256')
  const names = (await readdir(path)).sort()
  for (const name of names) h.update(`${name}\0${await dataSha256(join(path, name))}\n`)
  return h.digest('hex')
}
