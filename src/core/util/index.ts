// core/util: what every area uses, importing nothing from the others.
export * from './errors.js'
export * from './rng.js'
