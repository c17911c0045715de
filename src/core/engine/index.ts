export * from './backend.js'
export * from './gather.js'
export * from './matmul.js'
