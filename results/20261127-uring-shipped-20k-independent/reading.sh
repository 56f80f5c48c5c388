#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# reading.sh ROUNDS "LABEL:BENCH ARGS" ... -- SERVER...: the issue's
# independent reading, done outside bench: busy = window minus idle, the
# window from the wall clock here, CPU 0's idle two ways: /proc/stat's
# idle+iowait (nohz's idle clock, 10 ms ticks) and cpuidle's residency
# (the sum of its states' time, us). Server on CPU 0 with lo's RPS there,
# bench pinned to CPU 1 by taskset. Run as root from anywhere; it starts
# and stops each server with run.sh, and puts lo's RPS mask back.
set -u
cd "$(dirname "$0")/../.." || exit 1
rounds=$1; shift
variants=()
while [[ $1 != -- ]]; do variants+=("$1"); shift; done; shift
rps=/sys/class/net/lo/queues/rx-0/rps_cpus
old=$(cat $rps)
trap 'echo "$old" > $rps; ./run.sh stop >/dev/null 2>&1' EXIT
hz=$(getconf CLK_TCK)
statidle() { awk -v hz="$hz" '$1=="cpu0"{printf "%.6f\n", ($5+$6)/hz}' /proc/stat; }
cpuidle() { cat /sys/devices/system/cpu/cpu0/cpuidle/state*/time | awk '{t+=$1} END {printf "%.6f\n", t/1e6}'; }
ticks() { awk -v hz="$hz" '$1=="cpu0"{t=0; for(i=2;i<=9;i++) if (i!=5 && i!=6) t+=$i; printf "%.6f\n", t/hz}' /proc/stat; }
now() { date +%s.%N; }
for r in $(seq 1 "$rounds"); do
  for v in "${variants[@]}"; do
   for s in "$@"; do
    ./run.sh "$s" --cpus 0 >/dev/null || exit 1
    echo 1 > $rps
    sleep 1
    w0=$(now); a0=$(statidle); c0=$(cpuidle); k0=$(ticks)
    # shellcheck disable=SC2086 # the variant's bench arguments, split
    out=$(taskset -c 1 ./bench/bench ${v#*:} -q --cpus 1 --server-cpus 0 -o /tmp/indep.tsv)
    w1=$(now); a1=$(statidle); c1=$(cpuidle); k1=$(ticks)
    ok=$(sed -n 's/.* ok=\([0-9]*\).*/\1/p' <<<"$out")
    bcpu=$(sed -n 's/.* server_cpu_us_per_echo=\([0-9.]*\).*/\1/p' <<<"$out")
    awk -v s="$s" -v r="$r" -v v="${v%%:*}" -v ok="$ok" -v b="$bcpu" \
      -v w="$(awk -v a="$w0" -v b="$w1" 'BEGIN{print b-a}')" \
      -v ia="$(awk -v a="$a0" -v b="$a1" 'BEGIN{print b-a}')" \
      -v ic="$(awk -v a="$c0" -v b="$c1" 'BEGIN{print b-a}')" \
      -v k="$(awk -v a="$k0" -v b="$k1" 'BEGIN{print b-a}')" \
      'BEGIN{printf "round=%s load=%s server=%s ok=%s window_s=%.3f stat_us_per_echo=%.2f cpuidle_us_per_echo=%.2f ticks_us_per_echo=%.2f bench_says=%s\n", r, v, s, ok, w, (w-ia)*1e6/ok, (w-ic)*1e6/ok, k*1e6/ok, b}'
    ./run.sh stop >/dev/null
    sleep 2
   done
  done
done
