export * from './evaluate.js'
export * from './predictions.js'
export * from './read.js'
export * from './tasks.js'
