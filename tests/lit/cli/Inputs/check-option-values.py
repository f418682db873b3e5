"""Every option of every subcommand that takes a value, given a value that
is not a number: the command line never answers with LLVM's option-parser
message ("'abc' value invalid for long argument!"), and a numeric option
answers with tilescope's diagnostic (`<threads>:1:1: error: expected an
integer, not 'abc'`, tools/OptionValues.h) and exit 2. The subcommands and
their options are read from `tilescope --help` and `tilescope SUB
--help-hidden`. Usage: check-option-values.py TILESCOPE. Prints each bad
answer and a summary; exits 1 when there is one."""
import re
import subprocess
import sys

tilescope = sys.argv[1]


def run(args):
    try:
        p = subprocess.run([tilescope] + args, capture_output=True, text=True, timeout=60,
                           stdin=subprocess.DEVNULL)
        return p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        return None, "timed out"


help_text = run(["--help"])[1]
section = help_text.split("SUBCOMMANDS:", 1)[1].split("OPTIONS:", 1)[0]
subcommands = re.findall(r"^  (\w+)\s+- ", section, re.M)
if not subcommands:
    sys.exit("no subcommands in --help")

bad = numeric = valued = 0
for sub in subcommands:
    options = re.findall(r"^\s+--?([\w-]+)=<", run([sub, "--help-hidden"])[1], re.M)
    for option in options:
        if option in ("help-list", "print-all-options", "print-options"):
            continue
        valued += 1
        code, out = run([sub, "--%s=abc" % option])
        if "value invalid for" in out or "invalid value for" in out:
            print("%s --%s: LLVM's message: %s" % (sub, option, out.strip().splitlines()[0]))
            bad += 1
        elif re.search(r"^<%s>:1:1: error: expected (an integer|a number), not 'abc'$" % option,
                       out, re.M):
            numeric += 1
            if code != 2:
                print("%s --%s: exit %s, not 2" % (sub, option, code))
                bad += 1
print("%d subcommands, %d options with a value, %d numeric: %d answered by LLVM or without exit 2"
      % (len(subcommands), valued, numeric, bad))
sys.exit(1 if bad else 0)
