//! The C entry points of a devices(N) kernel's bench library, for a caller
//! that cannot hold a ts_dev::Communicator (codegen/devbench.py, through
//! ctypes). `tilescope bench --devices` (tools/BenchDevices.h) writes an
//! entry file that includes the lowered kernel, then this header, then
//! tsb_launch: the kernel's launcher with its parameters taken from arrays.
//! Embedded at build time (codegen/RuntimeHeader.h).
// The bench entry points over the device-scale runtime (ts_devices.cuh).
// Every function returns 0 on success; tsb_error gives the reason otherwise.
#pragma once

#include "ts_devices.cuh"

#include <cstring>

// A communicator of rank `rank` among `ndev`, its symmetric region holding
// `dataBytes` after the flags, peers exchanged through the directory `dir`,
// on CUDA device `device`. Null with the reason in `error` when it fails.
extern "C" void *tsb_init(int rank, int ndev, unsigned long long dataBytes, const char *dir,
                          int device, char *error, int errorBytes) {
  auto fail = [&](const std::string &why) -> void * {
    std::snprintf(error, size_t(errorBytes), "%s", why.c_str());
    return nullptr;
  };
  cudaError_t e = cudaSetDevice(device);
  if (e != cudaSuccess)
    return fail(std::string("cudaSetDevice: ") + cudaGetErrorString(e));
  auto *comm = new ts_dev::Communicator;
  if (!ts_dev::init(*comm, rank, ndev, size_t(dataBytes), dir)) {
    std::string why = comm->error;
    delete comm;
    return fail(why);
  }
  return comm;
}

// The first byte of the own data area: tensor offsets count from here.
extern "C" void *tsb_local_data(void *comm) {
  return ts_dev::localData(*static_cast<ts_dev::Communicator *>(comm));
}

// A device barrier of every rank on `stream` (a kernel: the host does not wait).
extern "C" int tsb_barrier(void *comm, void *stream) {
  return ts_dev::barrier(*static_cast<ts_dev::Communicator *>(comm),
                         static_cast<cudaStream_t>(stream))
             ? 0
             : 1;
}

extern "C" const char *tsb_error(void *comm) {
  return static_cast<ts_dev::Communicator *>(comm)->error.c_str();
}

// The allreduce a launcher without `impl =` picked last ("" for the others).
extern "C" const char *tsb_last_impl(void *comm) {
  return static_cast<ts_dev::Communicator *>(comm)->lastImpl;
}

// Unmaps the peers and frees the region once every rank has unmapped it;
// the caller synchronised its streams after a last tsb_barrier.
extern "C" int tsb_finalize(void *comm) {
  auto *c = static_cast<ts_dev::Communicator *>(comm);
  bool ok = ts_dev::finalize(*c);
  delete c;
  return ok ? 0 : 1;
}
