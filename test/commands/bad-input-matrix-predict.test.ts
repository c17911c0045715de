// The bad-input matrix (issues 13 and 25) for the predict commands: the case table and the runner are
// test/helpers/bad-input-matrix.ts, which says what each case checks; the other families are the
// other bad-input-matrix-*.test.ts files.
import {matrixSuite} from '../helpers/bad-input-matrix.js'

matrixSuite('predict')
