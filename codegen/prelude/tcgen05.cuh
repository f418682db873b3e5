//! sm_100a only: the tcgen05 helpers, written once per module before the
//! first kernel that uses tensor memory (ptxas for sm_90a rejects these
//! instructions). Embedded at build time like device.cuh, with its
//! "//@ descriptor-helper" lines generated as there.
// tcgen05 shared-memory matrix descriptor (sm_100): start address, leading
// byte offset 16 (unused for swizzled K-major), stride byte offset, version 1,
// layout type (2: 128B swizzle, 4: 64B, 6: 32B, 0: none).
//@ descriptor-helper ts_umma_desc
// The same with a leading byte offset (bits 16-29): for an MN-major operand,
// the distance between its swizzle-span blocks along M or N.
//@ descriptor-helper ts_umma_desc_lbo
__device__ __forceinline__ void ts_umma_f16(uint32_t tmem, uint64_t da, uint64_t db, uint32_t idesc, bool accumulate) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\ntcgen05.mma.cta_group::1.kind::f16 [%0], %1, %2, %3, p;\n}\n"
               :: "r"(tmem), "l"(da), "l"(db), "r"(idesc), "r"((int)accumulate) : "memory");
}

