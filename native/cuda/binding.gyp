{
  "targets": [
    {
      "target_name": "span_cuda",
      "sources": ["src/addon.cc", "src/loader.cc", "src/bindings.cc", "src/device.cc", "src/kernels.cc", "src/gemm.cc", "src/graph.cc", "src/nccl.cc"],
      "defines": ["NAPI_VERSION=8"],
      "libraries": ["-ldl"],
      "cflags_cc": ["-std=c++17", "-O2"],
      "cflags_cc!": ["-fno-exceptions"],
      "ldflags": ["<!@(node ../arch-flags.mjs ldflags)"]
    }
  ]
}
