#include "sync/Mbarrier.h"

namespace tilescope {

void MbarrierPhase::completeIfDone(int64_t count) {
  if (pending == 0 && tx == 0) {
    ++phase;
    pending = count;
  }
}

bool MbarrierPhase::arrive(int64_t n, int64_t count, int64_t expectBytes) {
  tx += expectBytes; // the expect-tx part comes first (PTX: "prior to arrive-on")
  if (n > pending)
    return false;
  pending -= n;
  completeIfDone(count);
  return true;
}

void MbarrierPhase::addTx(int64_t bytes, int64_t count) {
  tx += bytes;
  completeIfDone(count);
}

int64_t intendedPhase(int64_t parity, int64_t round) {
  auto mod2 = [](int64_t v) { return ((v % 2) + 2) % 2; };
  return mod2(parity) == mod2(round) ? round : round - 1;
}

Mbarrier::Error Mbarrier::init(int64_t count) {
  if (live_)
    return Error::ReInit;
  if (count < 1 || count > (int64_t{1} << 20) - 1)
    return Error::CountOutOfRange;
  live_ = true;
  count_ = count;
  state_ = MbarrierPhase::initial(count);
  return Error::None;
}

Mbarrier::Error Mbarrier::inval() {
  if (!live_)
    return Error::NotInitialised;
  live_ = false;
  return Error::None;
}

Mbarrier::Error Mbarrier::arrive(int64_t count) {
  if (!live_)
    return Error::NotInitialised;
  if (count < 1 || !state_.arrive(count, count_))
    return Error::OverArrival;
  return Error::None;
}

Mbarrier::Error Mbarrier::expectTx(int64_t bytes) {
  if (!live_)
    return Error::NotInitialised;
  state_.addTx(bytes, count_);
  return Error::None;
}

Mbarrier::Error Mbarrier::completeTx(int64_t bytes) {
  if (!live_)
    return Error::NotInitialised;
  state_.addTx(-bytes, count_);
  return Error::None;
}

std::string Mbarrier::str() const {
  if (!live_)
    return "not initialised";
  return "phase " + std::to_string(phase()) + " (parity " + std::to_string(phase() & 1) +
         "), pending " + std::to_string(pending()) + " of " + std::to_string(count_) + ", tx " +
         std::to_string(tx());
}

std::string_view Mbarrier::errorText(Error e) {
  switch (e) {
  case Error::None:
    return "ok";
  case Error::NotInitialised:
    return "mbarrier used before init (or after inval)";
  case Error::CountOutOfRange:
    return "mbarrier arrival count must be in [1, 2^20 - 1]";
  case Error::ReInit:
    return "re-init of a live mbarrier";
  case Error::OverArrival:
    return "more arrivals than the mbarrier's count in one phase";
  }
  return "?";
}

} // namespace tilescope
