#!/bin/bash
# In the guest: five consecutive 1000 x 10 runs per kecho mode.
cd /lab
for mode in unbound bound kthread; do
	./run.sh kecho -- mode=$mode || exit 1
	for i in 1 2 3 4 5; do
		./bench/bench -t 1000 -r 10 -q -l kecho-$mode -o /out/kecho-$mode-$i.tsv --meta where=vm --meta repeat=$i
	done
	cat /proc/kecho
	./run.sh stop || exit 1
done
