{
  "targets": [
    {
      "target_name": "span_native",
      "sources": ["src/addon.cc", "src/addon_gemm.cc", "src/bf16.cc", "src/flash.cc", "src/fused.cc", "src/gemm.cc", "src/gemm_dnnl.cc", "src/gemm_span.cc", "src/ops.cc", "src/peak.cc", "src/pool.cc", "src/pool_check.cc", "src/residual.cc"],
      "defines": ["<!(node detect-blas.mjs define)", "<!(node detect-dnnl.mjs define)", "NAPI_VERSION=8"],
      "include_dirs": ["<!@(node detect-blas.mjs include)", "<!@(node detect-dnnl.mjs include)"],
      "libraries": ["<!@(node detect-blas.mjs libs)", "<!@(node detect-dnnl.mjs libs)"],
      "cflags_cc": ["-std=c++17", "-O3", "<!@(node arch-flags.mjs cflags)", "-pthread"],
      "cflags_cc!": ["-fno-exceptions"],
      "ldflags": ["-pthread", "<!@(node arch-flags.mjs ldflags)"],
      "xcode_settings": {
        "OTHER_CPLUSPLUSFLAGS": ["-std=c++17", "-O3"],
        "GCC_ENABLE_CPP_EXCEPTIONS": "YES"
      }
    },
    {
      "target_name": "span_dist",
      "sources": ["src/dist.cc"],
      "defines": ["NAPI_VERSION=8"],
      "cflags_cc": ["-std=c++17", "-O2"],
      "libraries": ["-ldl"]
    }
  ]
}
