#include "verifier/AsyncDrain.h"

#include "ir/Printer.h"

#include <fmt/format.h>

#include <set>
#include <string>

namespace tilescope {

namespace {

struct AsyncKind {
  IntrinsicId copy, commit, wait;
  SyncKind commitKind, waitKind;
  const char *what; // what the copy does to shared memory until retired
};

const AsyncKind kKinds[] = {
    {IntrinsicId::TmaStore, IntrinsicId::TmaStoreCommit, IntrinsicId::TmaStoreWait,
     SyncKind::TmaStoreCommit, SyncKind::TmaStoreWait, "reads its shared source"},
    {IntrinsicId::CpAsync, IntrinsicId::CpAsyncCommit, IntrinsicId::CpAsyncWait,
     SyncKind::CpAsyncCommit, SyncKind::CpAsyncWait, "writes its shared destination"},
};

std::string sharedBuffer(const SyncEvent &e) {
  for (const MemoryAccess &a : e.accesses)
    if (a.scope == MemScope::Shared)
      return a.buffer;
  return "";
}

} // namespace

std::set<std::string> guardTexts(const SyncEvent &e) {
  std::set<std::string> out;
  for (const Expr &g : e.guards)
    out.insert(print(g));
  return out;
}

bool runsAfterLastIteration(const BarrierSkeleton &sk, const SyncEvent &outer,
                            const SyncEvent &inner) {
  std::vector<int> a = sk.loopChain(outer), b = sk.loopChain(inner);
  if (a.size() > b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i])
      return false;
  return true;
}

std::vector<ProtocolFinding> checkAsyncDrainedAtExit(const BarrierSkeleton &sk) {
  std::vector<ProtocolFinding> out;
  for (const AsyncKind &kind : kKinds) {
    for (const SyncEvent &copy : sk.events) {
      if (copy.kind != SyncKind::Access || copy.call != kind.copy)
        continue;
      std::string buffer = sharedBuffer(copy);
      if (buffer.empty())
        continue;
      std::set<std::string> copyGuards = guardTexts(copy);
      bool drained = false;
      for (const SyncEvent &wait : sk.events) {
        if (wait.kind != kind.waitKind || wait.order < copy.order)
          continue;
        auto n = wait.amount && wait.amount->kind == ExprKind::IntImm
                     ? std::optional<int64_t>(as<IntImm>(wait.amount).value)
                     : std::nullopt;
        if (n != 0 || !copy.threads.subsetOf(wait.threads) ||
            !runsAfterLastIteration(sk, wait, copy))
          continue;
        bool guarded = false;
        for (const std::string &g : guardTexts(wait))
          guarded = guarded || !copyGuards.count(g);
        if (guarded)
          continue;
        // A commit of the issuing threads between the copy and the wait
        // closes the copy's group (a wait does not cover uncommitted copies).
        bool committed = false;
        for (const SyncEvent &c : sk.events)
          committed = committed || (c.kind == kind.commitKind && c.order > copy.order &&
                                    c.order < wait.order && copy.threads.subsetOf(c.threads));
        if (committed) {
          drained = true;
          break;
        }
      }
      if (drained)
        continue;
      out.push_back(
          {ProtocolViolationKind::OverwriteWhileRead,
           copy.loc,
           fmt::format("{} by {} {} '{}' until its group is retired, but no {}(0) of the "
                       "issuing threads after a {} retires it before the kernel ends: the CTA "
                       "can exit, and its shared memory be given to another CTA, while the copy "
                       "is in flight",
                       intrinsicName(kind.copy), copy.threads.describe(), kind.what, buffer,
                       intrinsicName(kind.wait), intrinsicName(kind.commit)),
           {},
           false,
           false});
    }
  }
  return out;
}

} // namespace tilescope
