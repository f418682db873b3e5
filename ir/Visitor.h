// Passes over the IR. A visitor walks every node and lets a pass override only
// the kinds it cares about; a mutator rebuilds the tree bottom-up, sharing
// every subtree it did not change (nodes are immutable, so sharing is safe).
//
//   struct CountLoads : IRVisitor {
//     int loads = 0;
//     void visitIndex(const Index &x) override { ++loads; IRVisitor::visitIndex(x); }
//   };
#pragma once

#include "ir/Stmt.h"

#include <functional>
#include <map>
#include <set>

namespace tilescope {

class IRVisitor {
public:
  virtual ~IRVisitor() = default;

  void visit(const Expr &e);
  void visit(const Stmt &s);
  void visit(const Block &b);
  void visit(const Kernel &k);

protected:
  virtual void visitIntImm(const IntImm &) {}
  virtual void visitFloatImm(const FloatImm &) {}
  virtual void visitBoolImm(const BoolImm &) {}
  virtual void visitStringImm(const StringImm &) {}
  virtual void visitVar(const Var &) {}
  virtual void visitBuiltin(const Builtin &) {}
  virtual void visitUnary(const Unary &u) { visit(u.operand); }
  virtual void visitBinary(const Binary &b);
  virtual void visitCall(const Call &c);
  virtual void visitIndex(const Index &x);

  virtual void visitBufferDecl(const BufferDecl &b);
  virtual void visitBarrierDecl(const BarrierDecl &b);
  virtual void visitLet(const Let &l) { visit(l.value); }
  virtual void visitFor(const For &f);
  virtual void visitIf(const If &i);
  virtual void visitStore(const Store &s);
  virtual void visitCallStmt(const CallStmt &c);
};

class IRMutator {
public:
  virtual ~IRMutator() = default;

  Expr mutate(const Expr &e);
  Stmt mutate(const Stmt &s);
  Block mutate(const Block &b);
  Kernel mutate(const Kernel &k);

protected:
  // Each gets the node and the Expr/Stmt holding it, so returning `self`
  // keeps the node as it is.
  virtual Expr mutateUnary(const Unary &u, const Expr &self);
  virtual Expr mutateBinary(const Binary &b, const Expr &self);
  virtual Expr mutateCall(const Call &c, const Expr &self);
  virtual Expr mutateIndex(const Index &x, const Expr &self);
  virtual Expr mutateVar(const Var &, const Expr &self) { return self; }
  virtual Expr mutateLeaf(const Expr &self) { return self; }

  virtual Stmt mutateBufferDecl(const BufferDecl &b, const Stmt &self);
  virtual Stmt mutateBarrierDecl(const BarrierDecl &b, const Stmt &self);
  virtual Stmt mutateLet(const Let &l, const Stmt &self);
  virtual Stmt mutateFor(const For &f, const Stmt &self);
  virtual Stmt mutateIf(const If &i, const Stmt &self);
  virtual Stmt mutateStore(const Store &s, const Stmt &self);
  virtual Stmt mutateCallStmt(const CallStmt &c, const Stmt &self);
};

// --- passes built on them ---

// Replaces free occurrences of names by expressions (loop variables and lets
// that rebind a name hide it from the replacement below them).
Expr substitute(const Expr &e, const std::map<std::string, Expr> &replacements);
Block substitute(const Block &b, const std::map<std::string, Expr> &replacements);

// Canonicalize: folds integer constants and removes additive and
// multiplicative identities (x + 0, 1 * x, x / 1), bottom-up.
Expr foldConstants(const Expr &e);
Kernel foldConstants(const Kernel &k);

// Names an expression reads (variables and buffers), in sorted order.
std::set<std::string> namesUsed(const Expr &e);

} // namespace tilescope
