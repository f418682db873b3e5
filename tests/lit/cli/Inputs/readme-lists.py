"""Reads `tilescope --help` on stdin; fails unless the README (argv[1]) shows
`tilescope NAME` for every subcommand NAME listed there."""
import re
import sys

help_text = sys.stdin.read()
section = help_text.split("SUBCOMMANDS:", 1)[1].split("OPTIONS:", 1)[0]
names = re.findall(r"^\s+(\w+)\s+- ", section, re.M)
if not names:
    sys.exit("no subcommands found in --help")
readme = open(sys.argv[1]).read()
missing = [n for n in names if not re.search(r"tilescope %s\b" % n, readme)]
if missing:
    sys.exit("README.md does not show: " + ", ".join("tilescope " + n for n in missing))
print("README lists %d subcommands" % len(names))
