#!/bin/bash
# In the guest: five consecutive 1000 x 10 runs per kecho mode, with the
# packets the per-CPU input queues dropped during each run.
cd /lab || exit 1
# Column 2 of softnet_stat, per CPU, in hex: packets dropped because the
# CPU's input queue (net.core.netdev_max_backlog) was full.
drops() {
	local sum=0 d
	while read -r _ d _; do sum=$((sum + 16#$d)); done </proc/net/softnet_stat
	echo "$sum"
}
for mode in unbound bound kthread; do
	./run.sh kecho -- mode=$mode || exit 1
	for i in 1 2 3 4 5; do
		before=$(drops)
		./bench/bench -t 1000 -r 10 -q -l kecho-$mode -o /out/kecho-$mode-$i.tsv \
			--meta where=vm --meta repeat=$i
		echo "kecho-$mode-$i $(($(drops) - before))" >>/out/drops.txt
	done
	cat /proc/kecho
	./run.sh stop || exit 1
done
