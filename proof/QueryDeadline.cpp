#include "proof/QueryDeadline.h"

#include "ir/Budget.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <mutex>
#include <thread>
#include <vector>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <unordered_set>

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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
  Budget *budget = nullptr; // the checking thread's
};

// How far past its deadline a check may run before an OverrunExit ends the
// process: a second of the checking thread's processor time (Z3 honours the
// interrupt within milliseconds of its own work), or ten seconds of real
// time (a thread descheduled on a loaded machine may take a while to reach
// its next poll; a wall-time deadline is a backstop anyway).
constexpr int64_t kOverrunCpuGraceNs = 1'000'000'000;
constexpr int64_t kOverrunWallGraceNs = 10'000'000'000;

// Which hard limit a query that ignores the interrupt meets
// (TILESCOPE_HARD_DEADLINE, read once): by default the command line's
// OverrunExit; `0` none (the interrupt and the rlimit only: a test's
// control); any other value the child processes as well, in process and on
// the command line.
enum class HardMode { Off, Default, Fork };

HardMode hardMode() {
  static const HardMode mode = [] {
    const char *text = std::getenv("TILESCOPE_HARD_DEADLINE");
    if (!text || !*text)
      return HardMode::Default;
    return std::strcmp(text, "0") == 0 ? HardMode::Off : HardMode::Fork;
  }();
  return mode;
}

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
                       w.overrunFinish_ = nullptr; // the parent's to print
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

  void setOverrunFinish(std::function<int(const Budget &)> *finish) {
    std::lock_guard<std::mutex> lock(mutex_);
    overrunFinish_ = finish;
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
          if (overrunFinish_ &&
              (cpuLeft <= -kOverrunCpuGraceNs || wallLeft <= -kOverrunWallGraceNs))
            endProcess(*w);
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

  // The check of `w` ran on past its deadline by the grace: Z3 did not
  // honour the interrupt (its nonlinear loop). Records the budget exceeded,
  // has the command print its budget result and ends the process. The
  // mutex stays held: the checking thread, should Z3 return now after all,
  // waits in remove() and prints nothing of its own.
  [[noreturn]] void endProcess(Watched &w) {
    if (w.budget && w.budget->exceeded() == BudgetKind::None)
      w.budget->exceed(w.fired, "(a Z3 query ran on past the deadline; the process was ended)",
                       w.cpuDeadlineNs == kNever ? 0 : clockNs(w.cpuClock));
    static Budget none;
    int status = (*overrunFinish_)(w.budget ? *w.budget : none);
    std::fflush(nullptr);
    _exit(status);
  }

  std::function<int(const Budget &)> *overrunFinish_ = nullptr; // an OverrunExit's
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
    w_.budget = budget_;
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

// Whether a query may reach Z3's nonlinear integer arithmetic: a product of
// two terms that are not numerals, or a division, modulo or remainder by one.
// Conservative: every assertion of the solver counts (the shared solvers
// keep other queries' constraints, guarded by literals of their own, and the
// arithmetic theory sees their terms all the same).
//
// Read from the solver's SMT-LIB text, not by walking its terms: every call
// of Z3's API that returns a term or an object (Z3_solver_get_assertions,
// Z3_get_app_arg, even Z3_mk_params) releases what the API held of its last
// result, terms are freed earlier, and the ids of the terms the check then
// makes change. Z3's search depends on those ids: walking the terms moved a
// race query of the grid-133 GEMM from 0.14 s to 1.5 s (2026-11-27).
// Z3_solver_to_string and Z3_ast_to_string leave them as they were.
class NonlinearText {
public:
  explicit NonlinearText(std::string_view text) : text_(text) {}

  // Whether some list of the text is such a term. Numerals are never let-
  // bound by Z3's printer: a let-bound name is a term, not a numeral.
  bool any() {
    std::vector<Frame> stack;
    for (;;) {
      std::string_view token = next();
      if (token.empty())
        return false;
      if (token == "(") {
        stack.push_back({});
        continue;
      }
      if (token == ")") {
        if (stack.empty())
          continue;
        Frame done = stack.back();
        stack.pop_back();
        if (done.nonlinear())
          return true;
        // `(- 5)` is a numeral; any other list is a term.
        if (stack.empty())
          continue;
        if (!stack.back().headSeen)
          stack.back().headSeen = true; // a list in head position
        else
          stack.back().add(done.head == "-" && done.args == 1 && done.numerals == 1);
        continue;
      }
      if (stack.empty())
        continue;
      Frame &top = stack.back();
      if (!top.headSeen) {
        top.head = token;
        top.headSeen = true;
        continue;
      }
      top.add(numeral(token));
    }
  }

private:
  struct Frame {
    std::string_view head;
    bool headSeen = false;
    unsigned args = 0, numerals = 0;
    bool lastNumeral = false;

    void add(bool isNumeral) {
      ++args;
      numerals += isNumeral ? 1 : 0;
      lastNumeral = isNumeral;
    }
    bool nonlinear() const {
      if (head == "*")
        return args - numerals >= 2;
      if (head == "div" || head == "mod" || head == "rem" || head == "/")
        return args == 2 && !lastNumeral;
      return head == "^";
    }
  };

  static bool numeral(std::string_view t) {
    return !t.empty() && std::all_of(t.begin(), t.end(), [](char c) {
      return (c >= '0' && c <= '9') || c == '.';
    });
  }

  // The next token: "(", ")", a symbol or numeral (|quoted| as one), or
  // empty at the end. Comments (`;` to the end of the line) are skipped.
  std::string_view next() {
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c == ';') {
        while (pos_ < text_.size() && text_[pos_] != '\n')
          ++pos_;
        continue;
      }
      if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
        ++pos_;
        continue;
      }
      size_t begin = pos_;
      if (c == '(' || c == ')') {
        ++pos_;
        return text_.substr(begin, 1);
      }
      if (c == '|') {
        pos_ = text_.find('|', pos_ + 1);
        pos_ = pos_ == std::string_view::npos ? text_.size() : pos_ + 1;
        return text_.substr(begin, pos_ - begin);
      }
      if (c == '"') {
        pos_ = text_.find('"', pos_ + 1);
        pos_ = pos_ == std::string_view::npos ? text_.size() : pos_ + 1;
        return text_.substr(begin, pos_ - begin);
      }
      while (pos_ < text_.size() && !std::strchr(" \n\t\r();|\"", text_[pos_]))
        ++pos_;
      return text_.substr(begin, pos_ - begin);
    }
    return {};
  }

  std::string_view text_;
  size_t pos_ = 0;
};

// The solvers found nonlinear on this thread. A solver's assertions only
// grow but for pop(), so it stays nonlinear, and its text (the shared
// solvers' grows to megabytes) need not be printed again. A solver made
// later at the same address, or one popped back to linear, is taken for
// nonlinear: a child process more, never one less.
thread_local std::unordered_set<Z3_solver> tNonlinearSolvers;

bool nonlinear(z3::solver &s, const z3::expr_vector *assumptions) {
  if (tNonlinearSolvers.count(s))
    return true;
  if (NonlinearText(Z3_solver_to_string(s.ctx(), s)).any()) {
    if (tNonlinearSolvers.size() >= 4096)
      tNonlinearSolvers.clear();
    tNonlinearSolvers.insert(s);
    return true;
  }
  if (assumptions)
    for (unsigned i = 0; i < assumptions->size(); ++i)
      if (NonlinearText(Z3_ast_to_string(s.ctx(), (*assumptions)[int(i)])).any())
        return true;
  return false;
}

// The solver whose last check this thread's hard deadline stopped (its own
// reason_unknown() then still tells of the check before).
thread_local Z3_solver tStoppedSolver = nullptr;

enum class ChildEnd { Finished, Stopped, NotRun };

struct ChildRun {
  ChildEnd end = ChildEnd::NotRun;
  BudgetKind stoppedBy = BudgetKind::None;
};

// Runs the check of `s` in a forked child (a copy of this process, Z3's
// context and all) and kills the child once it has used `cpuNs` of
// processor time or `wallNs` of real time (kNever: no limit). The child
// reports only that it finished: the same check here, from the same state,
// gives the same answer.
ChildRun runInChild(z3::solver &s, const z3::expr_vector *assumptions, int64_t cpuNs,
                    int64_t wallNs) {
  ChildRun run;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0)
    return run;
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return run;
  }
  if (pid == 0) {
    // Only this thread exists here. No destructors, no atexit handlers, no
    // flushing of the parent's buffers: _exit.
    close(fds[0]);
    try {
      if (assumptions)
        s.check(*assumptions);
      else
        s.check();
    } catch (...) {
      // The check here throws the same.
    }
    char done = 1;
    _exit(write(fds[1], &done, 1) == 1 ? 0 : 1);
  }
  close(fds[1]);
  clockid_t clock{};
  bool haveClock = clock_getcpuclockid(pid, &clock) == 0;
  int64_t wallDeadline = wallNs == kNever ? kNever : steadyNs() + wallNs;
  for (;;) {
    int64_t used = haveClock ? clockNs(clock) : kNever;
    int64_t cpuLeft = cpuNs == kNever || used == kNever ? kNever : cpuNs - used;
    int64_t wallLeft = wallDeadline == kNever ? kNever : wallDeadline - steadyNs();
    if (cpuLeft <= 0 || wallLeft <= 0) {
      kill(pid, SIGKILL);
      run.end = ChildEnd::Stopped;
      run.stoppedBy = cpuLeft <= 0 ? BudgetKind::CpuTime : BudgetKind::WallTime;
      break;
    }
    // Processor time advances no faster than real time (the child runs one
    // thread), so neither deadline can pass before the nearer one from now.
    int64_t waitNs = std::min({cpuLeft, wallLeft, int64_t{1'000'000'000}});
    pollfd p{fds[0], POLLIN, 0};
    int ready = poll(&p, 1, int(std::max<int64_t>(waitNs / 1'000'000, 1)));
    if (ready > 0) {
      run.end = ChildEnd::Finished; // its byte, or its end without one (a crash
      break;                        // the check here repeats): either way
    }
    if (ready < 0 && errno != EINTR) {
      kill(pid, SIGKILL);
      break; // NotRun: checked here as before
    }
  }
  close(fds[0]);
  while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
  return run;
}

// The check under a hard limit, when it needs one: a query that may reach
// Z3's nonlinear arithmetic, under a budget with a time limit. Z3 4.8.12 has
// a loop there that looks at neither the interrupt nor the rlimit (it ran
// 10.4 s of CPU under a 3 s budget, docs/robustness.md), so such a query is
// run first in a child process that is killed once the time the budget had
// left when it began has passed; only when the child finished is it asked
// here, where it takes as long again and gives the same answer, model and
// reason, and leaves the solver as it always did. The budget counts the
// check here, not the child's copy: a nonlinear query costs its time twice,
// the budget sees it once. False when no child was needed (or none could be
// made): the caller checks as before.
bool checkHard(z3::solver &s, const z3::expr_vector *assumptions, z3::check_result &result) {
  Budget *budget = activeBudget();
  if (!budget || hardMode() != HardMode::Fork)
    return false;
  int64_t cpuMs = budget->remainingCpuMs(), wallMs = budget->remainingWallMs();
  if (cpuMs < 0 && wallMs < 0)
    return false;
  if (!nonlinear(s, assumptions))
    return false;
  // A millisecond past the budget's own figures (rounded down), as the
  // watcher does.
  int64_t cpuNs = cpuMs < 0 ? kNever : (cpuMs + 1) * 1'000'000;
  int64_t wallNs = wallMs < 0 ? kNever : (wallMs + 1) * 1'000'000 / wallClockScale();
  ChildRun run = runInChild(s, assumptions, cpuNs, wallNs);
  if (run.end != ChildEnd::Stopped)
    return false; // asked here now, under the watcher as always
  if (!budget->expired())
    budget->exceed(run.stoppedBy, "(a Z3 query was stopped at the deadline)");
  tStoppedSolver = s;
  result = z3::unknown;
  return true;
}

} // namespace

z3::check_result checkWithinBudget(z3::solver &s) {
  tStoppedSolver = nullptr;
  if (z3::check_result r; checkHard(s, nullptr, r))
    return r;
  WatchScope watch(s.ctx(), s);
  return s.check();
}

z3::check_result checkWithinBudget(z3::solver &s, const z3::expr_vector &assumptions) {
  tStoppedSolver = nullptr;
  if (z3::check_result r; checkHard(s, &assumptions, r))
    return r;
  WatchScope watch(s.ctx(), s);
  return s.check(assumptions);
}

z3::check_result checkWithinBudget(z3::optimize &opt) {
  WatchScope watch(opt.ctx(), nullptr);
  return opt.check();
}

OverrunExit::OverrunExit(std::function<int(const Budget &)> finish) : finish_(std::move(finish)) {
  if (hardMode() != HardMode::Off)
    Watcher::get().setOverrunFinish(&finish_);
}

OverrunExit::~OverrunExit() {
  Watcher::get().setOverrunFinish(nullptr);
}

std::string reasonUnknown(const z3::solver &s) {
  if (tStoppedSolver && tStoppedSolver == static_cast<Z3_solver>(s))
    return "canceled";
  return s.reason_unknown();
}

} // namespace tilescope
