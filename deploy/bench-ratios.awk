# bench-ratios.awk: appends to every benchmark line of an analytics run its ratio to
# the bare scan (FullScanRaw) of the same run: the same prefix (bench.sh's round,
# load average and label) and the same benchmark. The ratio is the figure issue 27
# states its targets in, so it is printed beside the times it comes from, never
# computed from another round's scan. Other lines pass unchanged.
#
#   ... | awk -f deploy/bench-ratios.awk
{
  ns = ""
  name = ""
  for (i = 1; i <= NF; i++) {
    if ($i == "ns/op" && i > 1) ns = $(i - 1)
    if (name == "" && $i ~ /^Benchmark[A-Za-z0-9_]+\//) name = $i
  }
  if (ns == "" || name == "") { print; fflush(); next }
  at = index($0, name)
  family = substr(name, 1, index(name, "/") - 1)
  sub_ = substr(name, index(name, "/") + 1)
  sub(/-[0-9]+$/, "", sub_)
  key = substr($0, 1, at - 1) family
  if (sub_ == "FullScanRaw") {
    scan[key] = ns
    print
  } else if (key in scan && scan[key] > 0) {
    printf "%s  (%.2f× FullScanRaw)\n", $0, ns / scan[key]
  } else {
    print
  }
  fflush()
}
