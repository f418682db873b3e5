#!/bin/sh
# Usage: expect-exit.sh STATUS CMD [ARGS...]: run CMD and succeed only when it
# exits with STATUS (its output passes through unchanged).
want="$1"; shift
"$@"
got=$?
if [ "$got" -ne "$want" ]; then
  echo "expect-exit: '$*' exited with $got, expected $want" >&2
  exit 1
fi
exit 0
