// The data lives in the generated BundledKernelsData.cpp; this file keeps the
// library target non-empty when the folder holds no kernels.
#include "kernels/BundledKernels.h"
