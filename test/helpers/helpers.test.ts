// The test helpers themselves: the shared-data gate names what is missing, the spawn runner
// returns exit code and both streams, and `span --help` gives each topic its own description.
import {describe, expect, it} from 'vitest'
import {SHARED_DATA, missingShared, sharedPath} from './shared-data.js'
import {runShell, runSpan} from './spawn.js'

describe('shared-data', () => {
  it('names the absent files and the folder, and is null when nothing is asked for', () => {
    expect(missingShared()).toBeNull()
    expect(missingShared('no-such-dir/x.txt')).toBe(`shared data absent: no-such-dir/x.txt under ${SHARED_DATA}`)
    expect(sharedPath('glue', 'MRPC')).toBe(`${SHARED_DATA}/glue/MRPC`)
  })
})

describe('spawn', () => {
  it('runs bin/run.js and shell pipes, with the exit code and stdout and stderr apart', () => {
    const help = runSpan(['--help'])
    expect(help.code).toBe(0)
    // each topic described by its own text, not by one of its commands' descriptions
    expect(help.stdout).toMatch(/^ {2}eval {6}Score predictions as the tasks' official scripts do/m)
    expect(help.stdout).toMatch(/^ {2}finetune {2}Fine-tune a pre-trained checkpoint on a task/m)
    expect(help.stdout).toMatch(/^ {2}predict {3}Run a fine-tuned checkpoint over a task's data/m)
    const bad = runShell('echo out; echo err >&2; exit 3')
    expect(bad).toEqual({code: 3, stdout: 'out\n', stderr: 'err\n'})
  })
})
