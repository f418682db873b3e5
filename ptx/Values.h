// Symbolic values of PTX registers, as tile-IR expressions (ir/Expr.h).
//
// nvcc and Triton write most registers once; such a register's value is the
// expression of its one definition over constants, kernel parameters
// (`Var("param_4")`), special registers (`threadIdx.x`, `blockIdx.x`), the
// addresses of shared variables (`Var("&smem")`) and loop iteration counters.
// A register written twice -- once before a loop and once by `add r, r, c` in
// it -- is that loop's induction variable: `init + c * it<L>`, with `it<L>` the
// iteration counter of loop L (0 on the first iteration).
// Bit operations are read as the integer arithmetic they compute on the
// non-negative 32-bit values index code uses (`and x, 127` = x % 128,
// `shr x, 3` = x / 8, a multiply-high by a magic constant = a division, after
// checking the constant), which is the reading every result here rests on:
// a value outside that reading is not derived (null), never guessed.
//
// Depends on Ptx.h, Cfg.h and ir/Expr.h.
#pragma once

#include "ir/Expr.h"
#include "ptx/Cfg.h"
#include "ptx/Ptx.h"

#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace tilescope::ptx {

// A register carried across the iterations of loop L in one of the forms
// Triton's pipelines use (ValuesCarried.cpp): a wrap counter
// `c = c + 1 > S - 1 ? 0 : c + 1` (a ring index; `counter` empty) or a phase
// toggled when that counter wraps, `ph ^= wrapped` (`counter` names it).
struct Carried {
  std::string reg;
  int loop = -1;
  int64_t init = 0;   // the constant it enters the loop with
  int64_t stages = 0; // S
  size_t update = 0;  // the instruction that updates it
  std::string counter;
};

struct Induction {
  std::string reg;
  int loop = -1;
  Expr init;
  int64_t step = 0;
  size_t update = 0; // the instruction that steps it
  // Set the counter to a constant instead of stepping it (`mov %r172, %r136`
  // with %r136 = 1, nvcc's two-row loop): `init + step * it` holds for it in
  // {0, 1} only, so the loop must run at most twice (checked by the
  // constructor, else the induction is dropped) and the stepped value is
  // not read (nothing after the set, nothing after the loop).
  bool twoValued = false;
};

class RegisterValues {
public:
  RegisterValues(const Function &f, const Cfg &cfg);

  // The value operand `op` has when instruction `at` reads it; null when not
  // derivable.
  Expr operandValue(const Operand &op, size_t at) const;
  Expr registerValue(const std::string &reg, size_t at) const;
  // The address a memory operand names (base + offset).
  Expr addressValue(const Operand &mem, size_t at) const;

  const std::vector<Induction> &inductions() const { return inductions_; }
  // The number of iterations n of a loop entered do-while style (it runs
  // max(1, n) times), when its latch compares the induction variable after
  // its step with a bound free of the loop: `init + step * (it + 1) < bound`.
  // Null when not derivable. Once known, a read of the induction variable
  // after the loop gives its last value.
  // A loop tested at its header instead (its body may not run): the count
  // is max(0, ..), the number of times the body runs; see topTested.
  Expr tripCount(int loop);
  bool topTested(int loop) const { return topTested_.count(loop) != 0; }
  // What must hold when the loop is entered for tripCount to be its trip
  // count (a `!=` latch: the bound ahead of the counter by a positive
  // multiple of the step); null when nothing needs to.
  Expr entryCondition(int loop) const;
  // The induction variable of a loop, if any.
  const Induction *inductionOf(int loop) const;
  static std::string iterationVar(int loop) { return "it" + std::to_string(loop); }
  // The short name of a parameter: `k_param_4` -> `param_4`.
  std::string paramName(const std::string &symbol) const;
  // Instructions that write `reg`.
  const std::vector<size_t> &definitions(const std::string &reg) const;
  // Alignment of variables (`.align 1024` on a .shared declaration), for
  // possibleBits: the low bits of their addresses are clear.
  void setSymbolAlignment(std::map<std::string, int64_t> align) { align_ = std::move(align); }
  // The bits an integer operand may have set (a 32-bit over-approximation
  // from and / or / shifts / masks / aligned addresses).
  uint64_t operandBits(const Operand &op, size_t at) const;
  // Whether instruction `in` writes its first operand.
  static bool writesFirstOperand(const Instruction &in);

private:
  Expr evalDefinition(size_t def, int fuel) const;
  Expr headerTripCount(int loop);
  void tripFromTest(int loop, Expr cond);
  // The step c of a counter updated by `mad.lo r, r, K, t` with t = (r << S)
  // | c, (r << S) + c or r * M + c read in the same iteration and K + 2^S (or
  // K + M) = 1: nvcc's strength reduction of `r + c` (attention_fwd_sm100).
  std::optional<int64_t> strengthReducedStep(const std::string &reg, const Loop &L,
                                             size_t step) const;
  bool headerCopyOf(const std::string &copy, const std::string &reg, const Loop &L,
                    size_t step) const;
  bool reachableWithin(const Loop &loop, int from, int to) const;
  bool readsInit(const std::string &reg, int loop, size_t update, size_t at) const;
  // Whether a read at `at` inside `loop` sees this iteration's value of a
  // register updated at `update` (0), the updated one (1), or neither (-1).
  int updatedWhenRead(int loop, size_t update, size_t at) const;
  void findCarried();
  void confirmTwoValued();
  Expr carriedValue(const Carried &c, size_t at, int fuel) const;
  Expr magicDivision(const Instruction &mulHi, size_t at, int shift, int fuel) const;
  Expr eval(const Operand &op, size_t at, int fuel) const;
  // operandBits with fuel: `or` and `xor` of operands with disjoint bits
  // are additions.
  uint64_t possibleBits(const Operand &op, size_t at, int fuel) const;
  Expr evalRegister(const std::string &reg, size_t at, int fuel) const;

  const Function &f_;
  const Cfg &cfg_;
  std::unordered_map<std::string, std::vector<size_t>> defs_;
  std::vector<Induction> inductions_;
  std::unordered_map<std::string, size_t> inductionOf_;
  std::vector<Carried> carried_;
  std::unordered_map<std::string, size_t> carriedOf_;
  mutable std::unordered_map<size_t, Expr> memo_;
  std::map<int, Expr> trips_;
  std::map<int, Expr> entryConditions_;
  std::set<int> topTested_;
  std::map<std::string, int64_t> align_;
};

// Light simplification: constant folding and merging of added constants.
Expr simplify(const Expr &e);
Expr add(Expr a, Expr b);
Expr sub(Expr a, Expr b);
Expr mul(Expr a, Expr b);
Expr div(Expr a, Expr b);
Expr mod(Expr a, Expr b);
// Free variables of an expression (Var names).
void freeVars(const Expr &e, std::vector<std::string> &out);

} // namespace tilescope::ptx
