// Run under `mpirun -np N` by mpi.test.ts: exercises the MPI engine on dist/ and prints one JSON line per rank.
import {openCollective} from '../../../dist/core/dist/open.js'
import {checkAgreement, anyRank} from '../../../dist/core/dist/collective.js'

const {coll, launch} = openCollective()
const f32 = Float32Array.from([1, 2, 3], (x) => x * (coll.rank + 1))
const f64 = Float64Array.from([0.1, 1e12 + coll.rank])
coll.allReduceSum([f32, f64])
const bytes = coll.rank === 0 ? Uint8Array.from([7, 8, 9]) : new Uint8Array(3)
coll.broadcast([bytes], 0)
let agreement = 'same'
try {
  checkAgreement(coll, 'resolved config', {lr: 1e-4, x: process.argv[2] === 'differ' ? coll.rank : 0})
} catch (err) {
  agreement = err.message
}
const any = anyRank(coll, coll.rank === coll.size - 1)
coll.close()
process.stdout.write(JSON.stringify({rank: coll.rank, size: coll.size, launch, f32: [...f32], f64: [...f64], bytes: [...bytes], agreement, any}) + '\n')
