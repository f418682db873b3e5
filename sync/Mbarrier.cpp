#include "simulator/Mbarrier.h"

namespace tilescope::sim {

Mbarrier::Error Mbarrier::init(int64_t count) {
  if (live_)
    return Error::ReInit;
  if (count < 1 || count > (int64_t{1} << 20) - 1)
    return Error::CountOutOfRange;
  live_ = true;
  count_ = pending_ = count;
  tx_ = 0;
  phase_ = 0;
  return Error::None;
}

Mbarrier::Error Mbarrier::inval() {
  if (!live_)
    return Error::NotInitialised;
  live_ = false;
  return Error::None;
}

void Mbarrier::completeIfDone() {
  if (pending_ == 0 && tx_ == 0) {
    ++phase_;
    pending_ = count_;
  }
}

Mbarrier::Error Mbarrier::arrive(int64_t count) {
  if (!live_)
    return Error::NotInitialised;
  if (count < 1 || count > pending_)
    return Error::OverArrival;
  pending_ -= count;
  completeIfDone();
  return Error::None;
}

Mbarrier::Error Mbarrier::expectTx(int64_t bytes) {
  if (!live_)
    return Error::NotInitialised;
  tx_ += bytes; // pending > 0 here, so this never completes a phase
  return Error::None;
}

Mbarrier::Error Mbarrier::completeTx(int64_t bytes) {
  if (!live_)
    return Error::NotInitialised;
  tx_ -= bytes;
  completeIfDone();
  return Error::None;
}

std::string Mbarrier::str() const {
  if (!live_)
    return "not initialised";
  return "phase " + std::to_string(phase_) + " (parity " + std::to_string(phase_ & 1) +
         "), pending " + std::to_string(pending_) + " of " + std::to_string(count_) + ", tx " +
         std::to_string(tx_);
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

} // namespace tilescope::sim
