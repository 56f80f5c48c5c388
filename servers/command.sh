# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# command: any local server, its command line given after --, run by
# run.sh's lifecycle as ours are (on its CPUs, stopped, its port checked
# free, nothing left), so that the bypass can go in front of a server that
# is not ours. Seed 004 measured the sk_msg bypass with sockperf, whose
# ping-pong needs sockperf's own server:
#
#   sudo ./run.sh command --bypass -- sockperf server --tcp -i {addr} -p {port}
#   sudo ./run.sh client sockperf ping-pong --tcp -i 127.0.0.1 -p 12345 -m 64 -t 5
#
# {addr} and {port} in the command become run.sh's --addr and --port
# (127.0.0.1 and 12345 unless given); the command must listen there. It
# need not echo: it serves once something listens on the port. It must
# stay in the foreground (a daemon that forks away leaves run.sh nothing
# to watch or stop). No variant: compare cannot measure it, and no test
# holds it to our contract (it is not ours).

peer command binary=/nonexistent/given-after-dashes

# PORT ADDR COMMAND [ARG...]: COMMAND detached, {port} and {addr}
# replaced; an ELF program is watched by its executable, a script by
# its pid alone (its /proc/PID/exe is the interpreter).
command_start() {
	local port=$1 addr=$2 a argv=() bin
	shift 2
	if ((!$#)); then
		echo "run.sh command: give the server's command line after --, e.g. sudo ./run.sh command -- sockperf server --tcp -i {addr} -p {port}"
		return 1
	fi
	for a; do
		a=${a//\{port\}/$port}
		argv+=("${a//\{addr\}/$addr}")
	done
	bin=$(command -v "${argv[0]}") || {
		echo "run.sh command: '${argv[0]}' is not a command here (not in PATH, nor a path to a program)"
		return 1
	}
	bin=$(readlink -f "$bin")
	start_program "$bin" "${argv[@]:1}"
	[[ $(head -c 4 "$bin" | od -An -c | tr -d ' ') == '177ELF' ]] || state_set exe ""
}

command_ready() { [[ -n $(port_listening "$1") ]]; }
