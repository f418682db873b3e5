// Lowered by tilescope: devices(N) kernels on the device-scale runtime
// (codegen/runtime/ts_devices.cuh; compile with -I to it). One process per
// GPU; tensors live in the symmetric regions of a ts_dev::Communicator.
#include "ts_devices.cuh"

#include <cstdio>

// kernel allreduce_one_shot_bf16: 512 threads, the IR grid's E / 4096 tiles run persistently
extern "C" __global__ void __launch_bounds__(512) allreduce_one_shot_bf16(ts_dev::CallArgs ts_args, long long ts_tiles, int ts_split, size_t X_off, size_t Y_off, long long E) {
  int ts_part = blockIdx.x % ts_split;
  ts_dev::blockBarrier(ts_args, 0);
  for (long long ts_bx = blockIdx.x / ts_split; ts_bx < ts_tiles;
       ts_bx += gridDim.x / ts_split) {
    // Y[blockIdx.x * 4096 : +4096] <- device.allreduce(X[blockIdx.x * 4096 : +4096]), one_shot
    ts_dev::allreduceOneShotTile(ts_args, Y_off + (size_t)((ts_bx * 4096LL)) * 2, X_off + (size_t)((ts_bx * 4096LL)) * 2, (size_t)(4096LL) / 8, ts_part, ts_split);
  }
  ts_dev::blockBarrier(ts_args, 1);
}

// Returns 0 when launched, 2 when the arguments break the kernel's `where` clause
// or a tile's chunking, 1 on a CUDA error.
extern "C" int tilescope_launch_allreduce_one_shot_bf16(ts_dev::Communicator *comm, size_t X, size_t Y, long long E, cudaStream_t stream) {
  if (!(true && ((E % 4096LL) == 0LL) && (E > 0LL) && ((long long)comm->ndev >= 1LL) && ((long long)comm->ndev <= 8LL))) {
    std::fprintf(stderr, "allreduce_one_shot_bf16: the arguments break its where clause\n");
    return 2;
  }
  long long ts_tiles = (E / 4096LL);
  {
    ts_dev::CallArgs ts_args;
    ts_args.ndev = comm->ndev;
    bool ts_ok = true;
    if (!((4096LL) % (8 * 1LL) == 0)) {
      ts_ok = false;
    }
    if (!ts_ok) {
      std::fprintf(stderr, "allreduce_one_shot_bf16: a tile does not split into 16-byte vectors per device\n");
      return 2;
    }
  }
  int ts_split = 1, ts_grid = ts_dev::persistentGrid(*comm, ts_tiles, ts_split);
  allreduce_one_shot_bf16<<<ts_grid, 512, 0, stream>>>(ts_dev::nextCall(*comm), ts_tiles, ts_split, ts_dev::kDataOffset + X, ts_dev::kDataOffset + Y, E);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

// kernel allreduce_two_shot_bf16: 512 threads, the IR grid's E / 16384 tiles run persistently
extern "C" __global__ void __launch_bounds__(512) allreduce_two_shot_bf16(ts_dev::CallArgs ts_args, long long ts_tiles, int ts_split, size_t X_off, size_t Y_off, long long E) {
  int ts_part = blockIdx.x % ts_split;
  ts_dev::blockBarrier(ts_args, 0);
  for (long long ts_bx = blockIdx.x / ts_split; ts_bx < ts_tiles;
       ts_bx += gridDim.x / ts_split) {
    // Y[blockIdx.x * 16384 : +16384] <- device.allreduce(X[blockIdx.x * 16384 : +16384]), two_shot
    ts_dev::allreduceTwoShotTile(ts_args, Y_off + (size_t)((ts_bx * 16384LL)) * 2, X_off + (size_t)((ts_bx * 16384LL)) * 2, (size_t)(16384LL) / 8, ts_part, ts_split);
  }
  ts_dev::blockBarrier(ts_args, 1);
}

// Returns 0 when launched, 2 when the arguments break the kernel's `where` clause
// or a tile's chunking, 1 on a CUDA error.
extern "C" int tilescope_launch_allreduce_two_shot_bf16(ts_dev::Communicator *comm, size_t X, size_t Y, long long E, cudaStream_t stream) {
  if (!(true && ((E % 16384LL) == 0LL) && (E > 0LL) && ((long long)comm->ndev >= 1LL) && ((long long)comm->ndev <= 8LL))) {
    std::fprintf(stderr, "allreduce_two_shot_bf16: the arguments break its where clause\n");
    return 2;
  }
  long long ts_tiles = (E / 16384LL);
  {
    ts_dev::CallArgs ts_args;
    ts_args.ndev = comm->ndev;
    bool ts_ok = true;
    if (!((16384LL) % (8 * (long long)ts_args.ndev) == 0)) {
      ts_ok = false;
    }
    if (!ts_ok) {
      std::fprintf(stderr, "allreduce_two_shot_bf16: a tile does not split into 16-byte vectors per device\n");
      return 2;
    }
  }
  int ts_split = 1, ts_grid = ts_dev::persistentGrid(*comm, ts_tiles, ts_split);
  allreduce_two_shot_bf16<<<ts_grid, 512, 0, stream>>>(ts_dev::nextCall(*comm), ts_tiles, ts_split, ts_dev::kDataOffset + X, ts_dev::kDataOffset + Y, E);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

// kernel all_gather_bf16: 512 threads, the IR grid's 1 tiles run persistently
extern "C" __global__ void __launch_bounds__(512) all_gather_bf16(ts_dev::CallArgs ts_args, long long ts_tiles, int ts_split, size_t X_off, size_t Y_off, long long R, long long RN) {
  int ts_part = blockIdx.x % ts_split;
  ts_dev::blockBarrier(ts_args, 0);
  for (long long ts_bx = blockIdx.x / ts_split; ts_bx < ts_tiles;
       ts_bx += gridDim.x / ts_split) {
    // Y <- device.all_gather(X), push
    ts_dev::allGatherTile(ts_args, Y_off + (size_t)(0LL) * 2, X_off + (size_t)(0LL) * 2, (size_t)(((1LL * R) * 1024LL)) / 8, ts_part, ts_split);
  }
  ts_dev::blockBarrier(ts_args, 1);
}

// Returns 0 when launched, 2 when the arguments break the kernel's `where` clause
// or a tile's chunking, 1 on a CUDA error.
extern "C" int tilescope_launch_all_gather_bf16(ts_dev::Communicator *comm, size_t X, size_t Y, long long R, long long RN, cudaStream_t stream) {
  if (!(true && (RN == (R * (long long)comm->ndev)) && (R > 0LL) && ((long long)comm->ndev >= 1LL) && ((long long)comm->ndev <= 8LL))) {
    std::fprintf(stderr, "all_gather_bf16: the arguments break its where clause\n");
    return 2;
  }
  long long ts_tiles = 1LL;
  {
    ts_dev::CallArgs ts_args;
    ts_args.ndev = comm->ndev;
    bool ts_ok = true;
    if (!((((1LL * R) * 1024LL)) % (8 * 1LL) == 0)) {
      ts_ok = false;
    }
    if (!ts_ok) {
      std::fprintf(stderr, "all_gather_bf16: a tile does not split into 16-byte vectors per device\n");
      return 2;
    }
  }
  int ts_split = 1, ts_grid = ts_dev::persistentGrid(*comm, ts_tiles, ts_split);
  all_gather_bf16<<<ts_grid, 512, 0, stream>>>(ts_dev::nextCall(*comm), ts_tiles, ts_split, ts_dev::kDataOffset + X, ts_dev::kDataOffset + Y, R, RN);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

// kernel reduce_scatter_bf16: 512 threads, the IR grid's 1 tiles run persistently
extern "C" __global__ void __launch_bounds__(512) reduce_scatter_bf16(ts_dev::CallArgs ts_args, long long ts_tiles, int ts_split, size_t X_off, size_t Y_off, long long E, long long EN) {
  int ts_part = blockIdx.x % ts_split;
  ts_dev::blockBarrier(ts_args, 0);
  for (long long ts_bx = blockIdx.x / ts_split; ts_bx < ts_tiles;
       ts_bx += gridDim.x / ts_split) {
    // Y <- device.reduce_scatter(X), one_shot
    ts_dev::reduceScatterTile(ts_args, Y_off + (size_t)(0LL) * 2, X_off + (size_t)(0LL) * 2, (size_t)((1LL * E)) / 8, ts_part, ts_split);
  }
  ts_dev::blockBarrier(ts_args, 1);
}

// Returns 0 when launched, 2 when the arguments break the kernel's `where` clause
// or a tile's chunking, 1 on a CUDA error.
extern "C" int tilescope_launch_reduce_scatter_bf16(ts_dev::Communicator *comm, size_t X, size_t Y, long long E, long long EN, cudaStream_t stream) {
  if (!(true && (E == (EN * (long long)comm->ndev)) && ((EN % 1024LL) == 0LL) && (EN > 0LL) && ((long long)comm->ndev >= 1LL) && ((long long)comm->ndev <= 8LL))) {
    std::fprintf(stderr, "reduce_scatter_bf16: the arguments break its where clause\n");
    return 2;
  }
  long long ts_tiles = 1LL;
  {
    ts_dev::CallArgs ts_args;
    ts_args.ndev = comm->ndev;
    bool ts_ok = true;
    if (!(((1LL * E)) % (8 * (long long)ts_args.ndev) == 0)) {
      ts_ok = false;
    }
    if (!ts_ok) {
      std::fprintf(stderr, "reduce_scatter_bf16: a tile does not split into 16-byte vectors per device\n");
      return 2;
    }
  }
  int ts_split = 1, ts_grid = ts_dev::persistentGrid(*comm, ts_tiles, ts_split);
  reduce_scatter_bf16<<<ts_grid, 512, 0, stream>>>(ts_dev::nextCall(*comm), ts_tiles, ts_split, ts_dev::kDataOffset + X, ts_dev::kDataOffset + Y, E, EN);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

