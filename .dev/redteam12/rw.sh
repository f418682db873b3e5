#!/bin/bash
# usage: rw.sh FILE KERNEL "PROBLEM" [seeds...]: prints verdict, score, simulate status/sizes per seed
f=$1; k=$2; p=$3; shift 3
seeds=${@:-20261125 1 2}
for s in $seeds; do
  /work/wt-redteam12/build/tools/tilescope reward "$f" --kernel "$k" --problem "$p" --seed $s --json > /tmp/rt12_$$.json 2>/dev/null
  python3 - "$s" /tmp/rt12_$$.json <<'PY'
import json,sys
s=sys.argv[1]; r=json.load(open(sys.argv[2]))
k=r["kernels"][0]
st={x["name"]:x for x in k["stages"]}
sim=st.get("simulate",{})
bad=[(n,x["status"]) for n,x in st.items() if x["status"] not in("pass","skipped")]
sizes=["%s[%s]%s %s %.0fms"%(z["role"],z["sizes"],"" if z.get("ctas")=="all" else "ctas="+str(z.get("ctas")),z["outcome"],z["ms"]) for z in k.get("simulated") or []]
print(f"seed {s}: verdict {r['verdict']} score {k['score']:.4f} bad {bad}")
print("   ", "; ".join(sizes))
d=[x.get("message","")[:200] for x in sim.get("diagnostics",[])][:2]
if d: print("   ", d)
PY
done
rm -f /tmp/rt12_$$.json
