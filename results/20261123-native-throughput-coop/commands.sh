# Commands (run from the repository root; /tmp/blog/uring-coop is uring-echo-server built at git 2b674a9, before DEFER_TASKRUN; raw samples not committed: 4-5 MB each)

R=results
mkdir -p $R/20261123-native-throughput-coop
for rep in 1 2 3; do
	echo 1 >/sys/class/net/lo/queues/rx-0/rps_cpus
	taskset -c 0 /tmp/blog/uring-coop -p 12345 2>/tmp/blog/coop.err & pid=$!
	sleep 0.5
	./bench/bench --cpus 1 -t 50 -d 10 -s 128 -l uring-coop -q --meta where=native --meta server_cpus=0 --meta repeat=$rep -o $R/20261123-native-throughput-coop/uring-coop-$rep.tsv
	kill $pid; wait $pid
	echo 0 >/sys/class/net/lo/queues/rx-0/rps_cpus
	cat /tmp/blog/coop.err
done
