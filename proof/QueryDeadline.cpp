#include "proof/QueryDeadline.h"

#include "ir/Budget.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <limits>
#include <mutex>
#include <thread>
#include <vector>

#include <pthread.h>
#include <time.h>

namespace tilescope {

namespace {

constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

int64_t steadyNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int64_t clockNs(clockid_t clock) {
  timespec t{};
  if (clock_gettime(clock, &t) != 0)
    return kNever;
  return int64_t(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

// One check in flight and the deadlines it must not pass.
struct Watched {
  Z3_context ctx = nullptr;
  Z3_solver solver = nullptr;      // null: an optimizer, interrupted by its context
  clockid_t cpuClock{};            // the checking thread's processor-time clock
  int64_t cpuDeadlineNs = kNever;  // on cpuClock
  int64_t wallDeadlineNs = kNever; // on the real steady clock
  BudgetKind fired = BudgetKind::None;
};

// Nanoseconds of processor time `w` has left (kNever: no limit, or the clock
// cannot be read) and of wall time at `now`.
int64_t cpuLeftNs(const Watched &w) {
  if (w.cpuDeadlineNs == kNever)
    return kNever;
  int64_t used = clockNs(w.cpuClock);
  return used == kNever ? kNever : w.cpuDeadlineNs - used;
}

int64_t wallLeftNs(const Watched &w, int64_t now) {
  return w.wallDeadlineNs == kNever ? kNever : w.wallDeadlineNs - now;
}

// The watcher thread and the checks it watches. Never destroyed (the thread
// may outlive static destructors at exit); after a fork the child starts its
// own thread on first use.
class Watcher {
public:
  static Watcher &get() {
    static Watcher *watcher = [] {
      auto *w = new Watcher;
      pthread_atfork([] { get().mutex_.lock(); }, [] { get().mutex_.unlock(); },
                     [] {
                       Watcher &w = get();
                       w.started_ = false;
                       w.watched_.clear();
                       w.wakeAtNs_ = kNever;
                       w.mutex_.unlock();
                     });
      return w;
    }();
    return *watcher;
  }

  void add(Watched *w) {
    std::lock_guard<std::mutex> lock(mutex_);
    watched_.push_back(w);
    if (!started_) {
      started_ = true;
      std::thread([this] { run(); }).detach();
    }
    // Processor time advances no faster than real time, so the earliest
    // real moment either deadline can pass is the nearer one from now.
    int64_t now = steadyNs();
    int64_t left = std::min(cpuLeftNs(*w), wallLeftNs(*w, now));
    // Wake the thread only when it would sleep past this check's deadline.
    if (left != kNever && now + left < wakeAtNs_)
      wake_.notify_one();
  }

  void remove(Watched *w) {
    std::lock_guard<std::mutex> lock(mutex_);
    watched_.erase(std::find(watched_.begin(), watched_.end(), w));
  }

private:
  void run() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      int64_t now = steadyNs();
      int64_t sleepNs = kNever;
      for (Watched *w : watched_) {
        int64_t cpuLeft = cpuLeftNs(*w), wallLeft = wallLeftNs(*w, now);
        if (cpuLeft <= 0 || wallLeft <= 0) {
          // Again on every pass while the check runs: Z3 ignores an
          // interrupt that comes before it has armed the check.
          if (w->solver)
            Z3_solver_interrupt(w->ctx, w->solver);
          else
            Z3_interrupt(w->ctx);
          if (w->fired == BudgetKind::None)
            w->fired = cpuLeft <= 0 ? BudgetKind::CpuTime : BudgetKind::WallTime;
          sleepNs = std::min<int64_t>(sleepNs, 1'000'000); // again in a millisecond
          continue;
        }
        sleepNs = std::min({sleepNs, cpuLeft, wallLeft});
      }
      // With nothing to watch, the thread keeps its last wake-up time (a
      // check begun before it wakes it only when its deadline is nearer).
      if (sleepNs != kNever)
        wakeAtNs_ = now + std::max<int64_t>(sleepNs, 100'000);
      if (wakeAtNs_ == kNever || wakeAtNs_ <= now) {
        wakeAtNs_ = kNever;
        wake_.wait(lock);
      } else {
        wake_.wait_for(lock, std::chrono::nanoseconds(wakeAtNs_ - now));
      }
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<Watched *> watched_;
  int64_t wakeAtNs_ = kNever; // when the thread wakes next, real steady time
  bool started_ = false;
};

// Watches `w` for the lifetime of the scope, if the active budget has a time
// limit; afterwards records the budget exceeded when a deadline stopped it.
class WatchScope {
public:
  WatchScope(Z3_context ctx, Z3_solver solver) : budget_(activeBudget()) {
    if (!budget_)
      return;
    int64_t cpuMs = budget_->remainingCpuMs(), wallMs = budget_->remainingWallMs();
    if (cpuMs < 0 && wallMs < 0)
      return;
    w_.ctx = ctx;
    w_.solver = solver;
    // A millisecond later than the budget's own deadline (its figures are
    // rounded down to milliseconds), so that once the watcher fires the
    // budget has run out as well.
    if (cpuMs >= 0 && pthread_getcpuclockid(pthread_self(), &w_.cpuClock) == 0) {
      int64_t used = clockNs(w_.cpuClock);
      if (used != kNever)
        w_.cpuDeadlineNs = used + (cpuMs + 1) * 1'000'000;
    }
    if (wallMs >= 0)
      w_.wallDeadlineNs = steadyNs() + (wallMs + 1) * 1'000'000 / wallClockScale();
    if (w_.cpuDeadlineNs == kNever && w_.wallDeadlineNs == kNever)
      return;
    watching_ = true;
    Watcher::get().add(&w_);
  }

  ~WatchScope() {
    if (!watching_)
      return;
    Watcher::get().remove(&w_);
    if (w_.fired != BudgetKind::None && !budget_->expired())
      budget_->exceed(w_.fired, "(a Z3 query was stopped at the deadline)");
  }

  WatchScope(const WatchScope &) = delete;
  WatchScope &operator=(const WatchScope &) = delete;

private:
  Budget *budget_;
  Watched w_;
  bool watching_ = false;
};

} // namespace

z3::check_result checkWithinBudget(z3::solver &s) {
  WatchScope watch(s.ctx(), s);
  return s.check();
}

z3::check_result checkWithinBudget(z3::solver &s, const z3::expr_vector &assumptions) {
  WatchScope watch(s.ctx(), s);
  return s.check(assumptions);
}

z3::check_result checkWithinBudget(z3::optimize &opt) {
  WatchScope watch(opt.ctx(), nullptr);
  return opt.check();
}

} // namespace tilescope
