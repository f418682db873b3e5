"""Prints the code block that follows a heading of a Markdown page.

doc-example.py PAGE HEADING  -- the first ``` block after the line '## HEADING'.
"""
import sys

page, heading = sys.argv[1], sys.argv[2]
lines = open(page, encoding="utf-8").read().split("\n")
start = lines.index("## " + heading)
begin = next(i for i in range(start, len(lines)) if lines[i].startswith("```"))
end = next(i for i in range(begin + 1, len(lines)) if lines[i].startswith("```"))
print("\n".join(lines[begin + 1:end]))
