#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# run.sh - the suite's command line: parses a command and hands it on.
#
# Starting, stopping and inspecting a server is lib/lifecycle.sh's; which
# servers there are, lib/registry.sh's (servers/*.sh declares them); the
# guest, lib/guest.sh's. compare, knee and soak are commands of their own
# (cmd/compare.sh, cmd/knee.sh, cmd/soak.sh), run from here with exec.
set -euo pipefail

# shellcheck source=lib/lifecycle.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/lifecycle.sh"
# shellcheck source=lib/guest.sh
source "$ECHOLAB_ROOT/lib/guest.sh"
prog_name run.sh "./run.sh --help"

# usage: the --help text, the commands then the options.
usage() {
	usage_commands
	usage_options
}

usage_commands() {
	cat <<EOF
Usage: sudo ./run.sh SERVER [--port N] [--addr ADDR] [--cpus LIST] [--bypass | --proxy PATH] [-- SERVER-ARGS...]
       sudo ./run.sh bench SERVER [--port N] [--addr ADDR] [--cpus LIST] [--bypass | --proxy PATH] [--out DIR] [BENCH-ARGS...]
       sudo ./run.sh command [--port N] [--addr ADDR] [--cpus LIST] [--bypass] -- SERVER-COMMAND [ARGS...]
       sudo ./run.sh client COMMAND [ARGS...]
       sudo ./run.sh --vm [--kernel VERSION] SERVER [--port N] [BENCH-ARGS...]
       sudo ./run.sh compare [--loopback | --vm [--kernel VERSION]] [--netem SPEC] [--bypass] [--workload W] [--repeat N] [--servers L,...] [--sweep K=V,...] [--cpus auto|none|LIST] [BENCH-ARGS...]
       sudo ./run.sh knee [VARIANT... | --running] [--bound US] [--precision PCT] [--repeat N] [-- BENCH-ARGS]
       sudo ./run.sh soak [--runs N] [--vm [--kernel VERSION]] [VARIANT...]
       sudo ./run.sh stop
       ./run.sh status
       ./run.sh list

Servers: ${SERVERS[*]} (declared in servers/); as people deploy
them: ${DEPLOYED[*]} (make peers builds them)

  SERVER        stop any running server of the suite, start SERVER detached,
                wait until an echo round trip succeeds, print its pid,
                address and port
  command       the same for any local server's command line: {port} and
                {addr} in it become --port and --addr; it serves once it
                listens (it need not echo). With --bypass, the bypass goes
                in front of it: sudo ./run.sh command --bypass -- sockperf
                server --tcp -i {addr} -p {port}
  bench SERVER  start SERVER, run bench/bench against it (default -t 1000
                -r 10), print the summary and the raw file, stop SERVER;
                with --bypass: user without and then with the bypass, side
                by side, with plots (compare --bypass --repeat 1)
  client CMD    run a client command where the server's bypass reaches it
                (in its cgroup); without --bypass it just runs CMD. Not
                for programs that receive with splice(): on 6.1 and 6.18
                their bytes never arrive over the bypass
  --vm SERVER   the same inside a qemu guest running a kernel that loads
                modules (how kecho runs where insmod cannot)
  --kernel V    with --vm: the guest's kernel, ${KERNEL_VERSIONS[*]} (default
                $KERNEL_DEFAULT; newest: $KERNEL_NEWEST, Debian sid's: no
                kecho.ko for it here); each is fetched into a cache on
                first use (vm/kernels.sh, never into /boot); raw files
                record it
  compare       every server this machine can run, measured alike, into
                results/DATE-PLACEMENT/ (raw files, verdicts in summary.md,
                plots); see './run.sh compare --help'
  knee          each server's knee, searched: the highest offered load it
                carries with its p99 under a bound, to 3%, with a range
                over searches; see './run.sh knee --help'
  soak          every server, N x (bench -t 1000 -r 10) in a row, and what
                it holds after each run: nothing may grow; see
                './run.sh soak --help'
  stop          stop the server and check that nothing is left behind
  status        show the running server
  list          the variants compare measures (its --servers takes these
                labels): server, start options, and when each runs

EOF
}

usage_options() {
	cat <<EOF
Options:
  --port N      port to serve on (default $DEFAULT_PORT)
  --addr ADDR   IPv4 address to listen on (default $DEFAULT_ADDR: clients on
                this machine only). A client on another machine (bench -H)
                needs an address of an interface it can reach, or 0.0.0.0:
                every interface, open to any host that can reach this
                machine (run.sh warns). kecho takes it as addr=
  --cpus LIST   the server's CPUs (taskset -c syntax: 0, 0-1): its process
                runs there, and so does the loopback's receive processing
                (RPS), which carries ebpf's and kecho's echo. auto
                (default): the first half of the CPUs, rounded up; all: no
                placement. bench run by hand while a server placed so runs
                takes the other CPUs itself, as 'run.sh bench' does
  --bypass      user or command only: also start sockredir/sockredir, whose sk_msg
                program moves the payload of local connections to the port
                straight to the peer socket, around TCP/IP. Only processes
                in its cgroup take the bypass: the server, and clients run
                with 'run.sh client' (bench, in 'bench user --bypass')
  --proxy PATH  SERVER behind a relay (proxy/proxy): the proxy listens on
                --addr and --port, SERVER on the next port, and each client
                the proxy accepts gets a connection of its own to SERVER.
                PATH: copy (read and write), splice (through a pipe),
                uring (io_uring) or sockmap (an sk_skb verdict redirects
                in the kernel). With
                --cpus the proxy takes those CPUs and SERVER the others,
                with bench. compare --proxy measures every path
  -h, --help    this text

SERVER-ARGS for kecho are module parameters: mode=unbound|bound|kthread,
backlog=N (--addr and --port become its addr= and port=). State lives in
$STATE_DIR. While a server runs, net.core.somaxconn and
net.ipv4.tcp_max_syn_backlog are raised to at least $WANT_BACKLOG,
net.ipv4.tcp_max_tw_buckets to $WANT_TW_BUCKETS and net.core.netdev_max_backlog
to $WANT_NETDEV_BACKLOG if they are lower; stop restores them.
EOF
}

# split_options ARGS...: run.sh's own options (the lifecycle's start
# options, --out DIR) into START and OUT, up to the first other word; the
# rest into REST.
split_options() {
	local f
	START=()
	OUT=
	while (($#)); do
		case $1 in
		--port | --addr | --cpus)
			(($# >= 2)) || usage_error "$1 needs a value"
			START+=("$1" "$2")
			shift 2
			;;
		--out)
			(($# >= 2)) || usage_error "--out needs a directory"
			OUT=$2
			shift 2
			;;
		*)
			f=$(front_of_flag "$1") || break
			START+=("$1")
			if [[ -n $(server_get "$f" value) ]]; then
				(($# >= 2)) || usage_error "$1 needs a $(server_get "$f" value) ($(server_get "$f" values))"
				START+=("$2")
				shift
			fi
			shift
			;;
		esac
	done
	REST=("$@")
	# The server on its half of the CPUs unless told otherwise: bench run
	# by hand takes the other half, as a client on another machine would.
	[[ " ${START[*]} " == *" --cpus "* ]] || START+=(--cpus auto)
}

# start SERVER [OPTIONS] [-- SERVER-ARGS...]
cmd_start() {
	local server=$1
	shift
	split_options "$@"
	[[ -z $OUT ]] || usage_error "$server: --out goes with bench"
	if ((${#REST[@]})) && [[ ${REST[0]} != -- ]]; then
		usage_error "$server: unknown option '${REST[0]}' (server arguments go after --)"
	fi
	server_start "$server" "${START[@]}" "${REST[@]}"
}

# bench SERVER [OPTIONS] [BENCH-ARGS...]: the main job in one command.
cmd_bench() {
	local server=$1 port=$DEFAULT_PORT addr=$DEFAULT_ADDR cpus='' bypass=0 i dir out rc=0
	shift
	split_options "$@"
	set -- "${REST[@]}"
	for ((i = 0; i < ${#START[@]}; i++)); do
		case ${START[i]} in
		--port) port=${START[i + 1]} ;;
		--addr) addr=${START[i + 1]} ;;	# server_start checks it
		--cpus) cpus=$(parse_cpus "${START[i + 1]}") ;;	# auto by default
		--bypass) bypass=1 ;;
		esac
	done
	if ((bypass)); then
		front_serves bypass "$server" || usage_error "--bypass goes with the user server only"
		# The bypass joins two sockets of one stack: compare's loopback.
		[[ $addr == "$DEFAULT_ADDR" ]] ||
			usage_error "--bypass runs on $DEFAULT_ADDR (one network stack): leave out --addr"
		# Without and with, same flags, one after the other, waiting
		# out the first run's TIME_WAIT sockets: what compare does.
		say "bench $server --bypass: $server without, then with the bypass (run.sh compare --bypass --repeat 1)"
		ECHOLAB_PORT=$port exec "$ECHOLAB_ROOT/cmd/compare.sh" --bypass --repeat 1 ${OUT:+--out "$OUT"} "$@"
	fi
	if [[ -n $cpus ]]; then
		[[ -n $(other_cpus "$cpus") ]] || usage_error "--cpus $cpus leaves no CPU for bench"
		set -- --cpus "$(other_cpus "$cpus")" "$@"
	fi
	server_start "$server" "${START[@]}"
	# Beside hand-run benches (bench's own default), where make plots
	# draws the day's newest run of each server.
	dir=${OUT:-${ECHOLAB_RUNS_DIR:-$ECHOLAB_ROOT/results/runs}/$(date +%Y%m%d)}
	out=$dir/$server-$(date +%H%M%S).tsv
	[[ -z $OUT ]] || out=$dir/$server-1.tsv
	mkdir -p "$dir"
	say "bench against $server: ${*:--t 1000 -r 10}"
	# Defaults first: flags given later on the command line win.
	"$BENCH" -t 1000 -r 10 -H "$(reach_addr "$addr")" -p "$port" -l "$server" -o "$out" \
		--meta "where=${ECHOLAB_WHERE:-native}" "$@" || rc=$?
	[[ " $* " != *" -q "* && " $* " != *" --quiet "* ]] || say "raw samples: $out"
	server_stop
	return "$rc"
}

# --vm SERVER [OPTIONS] [BENCH-ARGS...]: bench SERVER in the qemu guest;
# the raw file comes back to results/runs/.
cmd_vm() {
	local server=$1 dir rc=0
	shift
	need_root --vm
	dir=$ECHOLAB_ROOT/results/runs/$(date +%Y%m%d-%H%M%S)-vm-$server
	in_guest "$dir" "${VM_TIMEOUT:-1800}" ./run.sh bench "$server" --out /out "$@" || rc=$?
	# bench user --bypass is a comparison: the guest has no gnuplot.
	if [[ -e $dir/summary.md ]]; then
		"$ECHOLAB_ROOT/cmd/plot.sh" "$dir" | sed 's/^/  /'
		echo "results: $dir"
	fi
	return "$rc"
}

# list: every variant, as compare --servers knows them.
cmd_list() {
	local label server args when w=7 rows
	rows=$(every_variant)
	# The first column as wide as the longest label.
	while read -r label _; do ((${#label} <= w)) || w=${#label}; done <<<"$rows"
	printf '%-*s %-9s %-26s %s\n' "$w" VARIANT SERVER 'START OPTIONS' MEASURED
	while read -r label server args; do
		when="every compare"
		[[ $(variant_get "$label" bypass) != 1 ]] || when="compare --bypass"
		[[ $(variant_get "$label" proxy) != 1 ]] || when="compare --proxy"
		[[ -z $(variant_get "$label" extra) ]] || when="only when --servers names it"
		if [[ -n $(server_get "$server" deployed) ]]; then
			when="only when --servers names it; as deployed (make peers builds it)"
		elif [[ -n $(variant_get "$label" deployed) ]]; then
			when="only when --servers names it; as deployed (Debian's ${args##* })"
		fi
		[[ $(server_get "$server" kind) != module ]] || when="$when, in the guest (--vm)"
		[[ -z $(server_get "$server" peer) ]] || when="$when; a public peer (cmd/peers.sh build)"
		printf '%-*s %-9s %-26s %s\n' "$w" "$label" "$server" "${args:--}" "$when"
	done <<<"$rows"
}

main() {
	local cmd server
	guest_kernel_option "$@"
	set -- "${ARGS_WITHOUT_KERNEL[@]}"
	cmd=${1:-}
	[[ -n $cmd ]] || usage_error "no command: name a server (${SERVERS[*]}), or bench, stop, status"
	shift
	case $cmd in
	-h | --help | help) usage ;;
	stop)
		(($# == 0)) || usage_error "stop takes no arguments"
		need_root stop
		server_stop
		;;
	status)
		(($# == 0)) || usage_error "status takes no arguments"
		server_status
		;;
	list)
		(($# == 0)) || usage_error "list takes no arguments"
		cmd_list
		;;
	compare) exec "$ECHOLAB_ROOT/cmd/compare.sh" "$@" ;;
	knee) exec "$ECHOLAB_ROOT/cmd/knee.sh" "$@" ;;
	soak) exec "$ECHOLAB_ROOT/cmd/soak.sh" "$@" ;;
	--vm)
		server=${1:-}
		shift || true
		[[ $server != compare ]] || exec "$ECHOLAB_ROOT/cmd/compare.sh" --vm "$@"
		is_server "$server" || usage_error "--vm: name a server (${SERVERS[*]}) or compare"
		cmd_vm "$server" "$@"
		;;
	client)
		(($#)) || usage_error "client: name a command, e.g. sudo ./run.sh client ./bench/bench -t 1000"
		[[ -z $(state fronts) ]] || need_root client
		# run.sh becomes the client: its pid, its signals, its status.
		FRONT_IN_PLACE=1
		front_enter "$@"
		;;
	bench)
		server=${1:-}
		is_server "$server" || usage_error "bench: unknown server '$server' (servers: ${SERVERS[*]})"
		shift
		cmd_bench "$server" "$@"
		;;
	*)
		is_server "$cmd" || usage_error "unknown server or command '$cmd' (servers: ${SERVERS[*]})"
		cmd_start "$cmd" "$@"
		;;
	esac
}

main "$@"
