"""cpu-of.py LIMIT_S CAP_S CMD...: runs CMD with a processor-time cap of CAP_S
seconds (RLIMIT_CPU, each process) and prints its exit status (or the signal
that ended it) and whether the processor time it used, its child processes
included (user + system), stayed under LIMIT_S seconds."""
import resource
import subprocess
import sys

limit, cap = float(sys.argv[1]), int(sys.argv[2])


def capped():
    resource.setrlimit(resource.RLIMIT_CPU, (cap, cap))


before = resource.getrusage(resource.RUSAGE_CHILDREN)
run = subprocess.run(sys.argv[3:], preexec_fn=capped, stdout=subprocess.PIPE,
                     stderr=subprocess.STDOUT, text=True)
after = resource.getrusage(resource.RUSAGE_CHILDREN)
used = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
sys.stdout.write(run.stdout)
print(f"exit {run.returncode}" if run.returncode >= 0 else f"signal {-run.returncode}")
print(f"cpu {'under' if used < limit else 'over'} {limit:g} s ({used:.2f} s)")
