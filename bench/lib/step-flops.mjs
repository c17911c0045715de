/**
 * Floating-point operations of a pre-training step's matrix products (bench/native.mjs' count):
 * forward 2·M·N·K for every product (linears, attention scores and context, the tied decoders),
 * backward twice that. `c` a model config, `b` a tensor batch (B, T, nMlm, nSbo).
 */
export function stepFlops(c, b) {
  const [H, I, T, V, P] = [c.hidden_size, c.intermediate_size, b.T, c.vocab_size, c.sbo.position_embedding_size]
  const BT = b.B * T
  const layer = 2 * BT * H * (4 * H + 2 * I) + 2 * 2 * b.B * T * T * H
  const mlm = 2 * b.nMlm * H * (H + V)
  const sbo = 2 * b.nSbo * H * (2 * H + P + H + V)
  return 3 * (c.num_hidden_layers * layer + mlm + sbo)
}
