// Run under `mpirun -np 3` by nccl.test.ts: the stand-in libnccl through the cuda addon's NCCL
// bindings (native/cuda/src/nccl.cc), without tfjs: each rank opens its local rank's stand-in
// device, makes the communicator from rank 0's unique id, and prints one JSON line.
import {createRequire} from 'node:module'
import {openCollective} from '../../../dist/core/dist/open.js'
import {loadDistAddon} from '../../../dist/core/dist/addon.js'
import {ncclLibrary, ncclUniqueId} from '../../../dist/core/dist/nccl.js'
import {cudaAddonPath} from '../../../dist/core/engine/cuda/addon.js'
import {allCandidates, realSearchEnv} from '../../../dist/core/engine/cuda/libs.js'

const {coll, launch} = openCollective()
const rt = createRequire(import.meta.url)(cudaAddonPath())
rt.open(allCandidates(realSearchEnv()), launch.localRank)
const dist = loadDistAddon().addon
dist.loadNccl(ncclLibrary())
// `own-id`: every rank makes its own id instead of taking rank 0's: the communicator must be refused
const id = process.argv[2] === 'own-id' ? dist.ncclUniqueId() : ncclUniqueId(coll, () => dist.ncclUniqueId())
try {
  rt.ncclOpen(ncclLibrary(), id, coll.size, coll.rank)
} catch (err) {
  process.stdout.write(JSON.stringify({rank: coll.rank, error: err.message}) + '\n')
  coll.close()
  process.exit(0)
}

const N = 4
const put = (values) => {
  const p = rt.alloc(4 * values.length)
  rt.upload(p, Float32Array.from(values))
  return p
}
const get = (p, n = N) => {
  const h = new Float32Array(n)
  rt.downloadSync(p, h)
  return [...h]
}
// [1, 1e8, -1e8] summed in rank order is (1 + 1e8) - 1e8 = 0 in float32 (1e8 + 1 rounds to 1e8); from rank 2 down it is 1
const big = [1, 1e8, -1e8][coll.rank]
const a = put([big, coll.rank + 1, 0.5 * (coll.rank + 1), -coll.rank])
const sum = rt.alloc(4 * N)
const avg = rt.alloc(4 * N)
const b = put(coll.rank === 1 ? [9, 8, 7, 6] : [0, 0, 0, 0])
rt.ncclGroup(true)
rt.ncclAllReduce(a, sum, N)
rt.ncclAllReduce(a, avg, N, true)
rt.ncclBroadcast(b, b, N, 1)
rt.ncclGroup(false)
rt.ncclAllReduce(a, a, N) // in place, after the group
const out = {rank: coll.rank, sum: get(sum), avg: get(avg), bcast: get(b), inPlace: get(a)}
rt.ncclClose()
coll.close()
process.stdout.write(JSON.stringify(out) + '\n')
