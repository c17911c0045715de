/** Moved to core/util (a leaf every area may import); kept so existing imports work. */
export * from '../util/rng.js'
