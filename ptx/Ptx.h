// A PTX module as read by the PTX reader (Parser.h): what every analysis of
// foreign PTX (condense, diff, check) works on.
//
// The representation is deliberately flat. A function body is a sequence of
// statements in source order -- instructions, labels, declarations -- with the
// inline `{ }` scopes of inline assembly resolved at parse time: a register
// declared inside a scope gets a unique name (`p` -> `p{3}`), so that later
// passes see one name per register and never have to track scopes again.
// An instruction is its mnemonic, its dot-modifiers, an optional guard and its
// operands; nothing about its meaning is decided here (Classify.h does that),
// so an instruction this reader has never heard of is kept like any other.
//
// Depends on LLVM Support only (source locations); nothing of the tile IR.
#pragma once

#include <llvm/Support/SMLoc.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tilescope::ptx {

// One operand as written. Nesting is at most two levels (a memory operand
// holding a vector: `[%rd1, {%r1, %r2}]`), enforced by the parser.
struct Operand {
  enum Kind : uint8_t {
    Register,       // %r1, %tid.x, or a scoped name such as p{3}
    Immediate,      // 42, -1, 0x1F
    FloatImmediate, // 0f3F800000, 1.5
    Symbol,         // a label, variable or function name, optionally `name+16`
    Memory,         // [base], [base+off], [desc, {coords}]
    Vector,         // {%r1, %r2}
    List,           // (param0, param1): call arguments
    Pair,           // %r1|%p2 (the two results of setp / elect.sync)
    Sink,           // _ (a discarded result)
  };
  Kind kind = Register;
  bool negated = false; // !%p
  std::string name;     // Register / Symbol / Memory base (register or symbol) / Pair first
  std::string second;   // Pair second
  int64_t value = 0;    // Immediate value; Symbol / Memory offset
  std::string text;     // the operand as written (normalised spacing)
  std::vector<Operand> elements; // Vector / List elements; Memory: operands after the address
  bool baseIsRegister() const { return !name.empty() && name[0] == '%'; }
};

struct Instruction {
  std::string opcode;                 // mnemonic: "mbarrier", "wgmma", "ld"
  std::vector<std::string> modifiers; // "try_wait", "parity", "shared::cta", "b64"
  std::string guard;                  // predicate register, empty when unguarded
  bool guardNegated = false;          // @!%p
  std::vector<Operand> operands;
  unsigned line = 0, column = 0;
  llvm::SMLoc loc;
  // The full mnemonic with modifiers: "mbarrier.try_wait.parity.shared::cta.b64".
  std::string fullName() const;
  bool hasModifier(std::string_view m) const;
  // The first modifier that starts with `prefix` (e.g. "m64n" for a shape).
  std::optional<std::string> modifierStartingWith(std::string_view prefix) const;
};

// A variable declared by a state-space directive: .reg, .shared, .local,
// .global, .const, .param (in a body).
struct Declaration {
  std::string space;          // "reg", "shared", "local", "global", "const", "param"
  std::string type;           // "b32", "pred", "b8", ...
  std::string name;           // for `.reg .b32 %r<313>`: "%r"
  int64_t count = 1;          // `<313>`: 313 registers %r0..%r312
  bool parameterized = false; // declared with <N>
  std::vector<int64_t> dims;  // array dimensions; an empty `[]` is -1 (extern, dynamic)
  int64_t align = 0;
  bool external = false; // .extern
  unsigned line = 0;
  llvm::SMLoc loc;
  // Bytes of the variable (element width times the dimensions); nullopt when
  // a dimension is unsized or the type is unknown.
  std::optional<int64_t> bytes() const;
};

struct Statement {
  enum Kind : uint8_t { Instr, Label, Decl, Pragma };
  Kind kind = Instr;
  size_t index = 0; // into Function::instructions / labels / decls / pragmas
};

struct Param {
  std::string name, type;
  int64_t align = 0;
  int64_t arrayBytes = 0; // `.b8 name[128]`: 128 (0 for a scalar)
  std::string space = "param";
  unsigned line = 0;
};

struct Function {
  std::string name;
  bool entry = false; // .entry (a kernel) versus .func
  bool visible = false;
  std::vector<Param> params, returns;
  std::vector<std::pair<std::string, std::string>> performanceDirectives; // .maxntid "256, 1, 1"
  std::vector<Instruction> instructions;
  std::vector<std::string> labels;
  std::vector<Declaration> decls;
  std::vector<std::string> pragmas;
  std::vector<Statement> body; // in source order
  unsigned line = 0;
  llvm::SMLoc loc;
  bool hasBody = false;
};

struct Module {
  std::string file;
  std::string version, target;
  int addressSize = 64;
  std::vector<Declaration> globals; // module-scope variables (.shared, .global, .const)
  std::vector<Function> functions;
  const Function *function(std::string_view name) const;
  std::vector<const Function *> kernels() const;
};

} // namespace tilescope::ptx
