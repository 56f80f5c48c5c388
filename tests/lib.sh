# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034 # the variables are for the tests
# TAP helpers for the suite's tests (kselftest style: named cases, a plan,
# '# SKIP reason'). Source it, call plan, then the assertions.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# The servers, their declarations and run.sh's state (STATE_DIR, state).
# shellcheck source=servers/lib.sh
source "$ROOT/servers/lib.sh"
# shellcheck source=vm/lib.sh
source "$ROOT/vm/lib.sh"
BENCH=$ROOT/bench/bench
PROBE=$ROOT/tests/build/probe
RUN=$ROOT/run.sh
PORT=${TEST_PORT:-12345}	# run.sh's default
SPARE_PORT=${TEST_SPARE_PORT:-12399}	# for servers started by hand

_tap_n=0
_tap_failed=0

plan() { echo "1..$1"; }

# ok CONDITION-STATUS NAME: pass when the status is 0 (a number: an empty
# or garbled status is a failure, never a pass).
ok() {
	local status=$1 name=$2
	_tap_n=$((_tap_n + 1))
	if [[ $status =~ ^[0-9]+$ && $status -eq 0 ]]; then
		echo "ok $_tap_n - $name"
	else
		echo "not ok $_tap_n - $name"
		_tap_failed=$((_tap_failed + 1))
	fi
}

# is GOT WANT NAME
is() {
	local got=$1 want=$2 name=$3
	[[ $got == "$want" ]]
	ok $? "$name"
	[[ $got == "$want" ]] || diag "$name: got '$got', want '$want'"
}

# like GOT REGEX NAME
like() {
	local got=$1 re=$2 name=$3
	[[ $got =~ $re ]]
	ok $? "$name"
	[[ $got =~ $re ]] || diag "$name: '$got' does not match /$re/"
}

skip() {
	_tap_n=$((_tap_n + 1))
	echo "ok $_tap_n - $1 # SKIP $2"
}

# shellcheck disable=SC2001 # prefix every line of a multi-line message
diag() { sed 's/^/# /' <<<"$*"; }

done_testing() { exit $((_tap_failed > 0)); }

# For a file whose number of cases is known only at its end.
plan_at_end() {
	echo "1..$_tap_n"
	done_testing
}

# field SUMMARY-LINE KEY: a value from bench's summary line.
field() { sed -n "s/.*\\b$2=\\([^ ]*\\).*/\\1/p" <<<"$1"; }

# summary_rows SUMMARY.MD [Client|Server]: 'label samples failed' of each
# row of compare's table of that side (default Client: rtt_us, in every
# summary; Server: arrival_us, where every echo was stamped), every sweep
# value's table in turn.
summary_rows() {
	awk -v side="${2:-Client}" '
		/^[A-Z][a-z]+ side/ { on = ($1 == side); next }
		on && /^\| / && !/^\| server / && !/^\|---/ { print $2, $4, $6 }
		/^## / { on = 0 }' "$1"
}

need_root_or_skip_all() {
	if [[ $(id -u) -ne 0 ]]; then
		echo "1..0 # SKIP needs root: run 'sudo make check'"
		exit 0
	fi
}

# port_free PORT: nothing listens on it; false too when ss cannot tell.
port_free() {
	local out
	out=$(ss -Htln "sport = :$1") || return 1
	[[ -z $out ]]
}

# Runs a command with a time bound; status 124 when it had to be killed.
bounded() { timeout -k 5 "$@"; }	# -k: busybox (the guest) knows it too

# ---- shared by the tests that start servers -------------------------------

PIDS=()	# helper processes (probes) to kill on exit

# Kills the probes and stops any server run.sh started; trapped on EXIT.
# shellcheck disable=SC2317 # called by the EXIT trap
stop_all() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	"$RUN" stop >/dev/null 2>&1
}

# bench_ok NAME ARGS...: bench against $PORT, no sample may fail.
bench_ok() {
	local name=$1 out
	shift
	out=$(bounded 180 "$BENCH" -p "$PORT" -q -o /dev/null "$@")
	ok $? "$name: exit 0"
	is "$(field "$out" failed)" 0 "$name: failed=0"
	[[ $(field "$out" failed) == 0 ]] || diag "$out"
}

server_pid() { state pid; }

# The guest tests: make check installs the guest's packages first, so a
# missing kernel or a failed build is a failure here, not a reason to skip.
need_guest() {
	local kver
	if ! kver=$("$ROOT/vm/run-vm.sh" --print-kernel 2>&1); then
		echo "Bail out! no guest kernel: $kver"
		exit 1
	fi
	if ! guest_build >&2; then
		echo "Bail out! cannot build kecho.ko for the guest kernel $kver"
		exit 1
	fi
}
