// The canonical printer: one text per IR, so `tilescope fmt` is idempotent,
// parse(print(ir)) equals ir, and candidates can be hashed and compared.
#pragma once

#include "ir/Stmt.h"

#include <string>

namespace tilescope {

std::string print(const Expr &e);
std::string print(const Module &m);
std::string print(const Kernel &k);

// Stable structural hash: a hash of the canonical text (xxHash64), so equal
// kernels hash equal whatever their spelling or spacing was.
uint64_t structuralHash(const Kernel &k);

} // namespace tilescope
