# Commands (run from the repository root, git 9088d5f; raw samples not committed: 4-5 MB each)

R=results
mkdir -p $R/20261123-native-throughput-sqpoll
for rep in 1 2 3; do
	sudo ./run.sh uring --cpus 0 -- --sqpoll
	sudo ./bench/bench --cpus 1 -t 50 -d 10 -s 128 -l uring-sqpoll -q --meta where=native --meta server_cpus=0 --meta repeat=$rep -o $R/20261123-native-throughput-sqpoll/uring-sqpoll-$rep.tsv
	sudo ./run.sh stop
done
