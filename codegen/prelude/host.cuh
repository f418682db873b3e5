//! The host side's prelude, written after the last kernel: the driver entry
//! point for TMA descriptors. Embedded at build time like device.cuh.
// ---- host side
typedef CUresult (*ts_encode_tiled_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *,
                                       const cuuint64_t *, const cuuint64_t *, const cuuint32_t *,
                                       const cuuint32_t *, CUtensorMapInterleave, CUtensorMapSwizzle,
                                       CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
[[maybe_unused]] static ts_encode_tiled_fn ts_encode_tiled() {
  static ts_encode_tiled_fn fn = nullptr;
  if (!fn) {
    void *p = nullptr;
    cudaDriverEntryPointQueryResult q;
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q) == cudaSuccess &&
        q == cudaDriverEntryPointSuccess)
      fn = reinterpret_cast<ts_encode_tiled_fn>(p);
  }
  return fn;
}

