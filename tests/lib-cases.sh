# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034 # the variables are for the tests
# Part of tests/lib.sh, which sources it (source that, not this): every
# declared variant here or in the guest, cases by name (ALL_TESTS, TESTS),
# and the tracefs state the ftrace scripts must restore.

# ---- every declared variant, here or in the guest ---------------------------

# each_variant FUNC [LISTER]: FUNC LABEL SERVER [START-OPTIONS...] for each
# variant LISTER prints (default variants; all_variants adds the bypass)
# that runs here: where the platform has what its declaration needs
# (needs=, detected above, not by the server's own hook). The variants
# that cannot run here run in the qemu guest: this same file, there, for
# those variants only (ONLY_SERVERS), its results relayed. The
# server's hook must agree with the platform: one that refused a server
# this machine can run would drop its cases without a failure.
each_variant() {
	local func=$1 lister=${2:-variants} label server args why lacks labels t0
	local guest=()
	labels=" $("$lister" | cut -d' ' -f1 | tr '\n' ' ') "
	while read -r label server args; do
		if [[ -n ${ONLY_SERVERS:-} && " $ONLY_SERVERS " != *" $server "* &&
			" $ONLY_SERVERS " != *" $label "* ]]; then
			continue
		fi
		# TESTS=FILE:CASE: a label is that variant; a server that is no
		# label (kecho) is all of its variants.
		case_selected "$label" ||
			{ [[ $labels != *" $server "* ]] && case_selected "$server"; } || continue
		why=$(server_unavailable "$server")
		lacks=$(platform_lacks "$server")
		if [[ -n $why && -n $(server_get "$server" deployed) ]]; then
			# Built by make peers, not make all: not a platform fact.
			skip "$label: $(basename "$0" .t)" "not-built: $why"
		elif [[ -n $why && -z $lacks ]] || [[ -z $why && -n $lacks ]]; then
			ok 1 "$label: run.sh's availability agrees with the platform"
			diag "$label: run.sh says '${why:-it runs here}'; the platform: ${lacks:-has all it needs ($(server_get "$server" needs))}"
		elif [[ -z $why ]]; then
			_case=$label
			t0=$SECONDS
			# shellcheck disable=SC2086 # args: zero or more start options
			"$func" "$label" "$server" $args
			_case=
			took "$label" "$t0"
		elif [[ ${ECHOLAB_WHERE:-} == vm ]]; then
			skip "$label: $(basename "$0" .t)" "$lacks"
		else
			guest+=("$label")
		fi
	done < <("$lister")
	t0=$SECONDS
	((${#guest[@]} == 0)) || { _relay_from_guest "${guest[@]}"; took "guest ${guest[*]}" "$t0"; }
}

# _relay_from_guest VARIANT...: this file in the guest for those variants.
_relay_from_guest() {
	relay_from_guest "${0##*/}" ONLY_SERVERS="$*"
}

# relay_from_guest FILE [NAME=VALUE...]: tests/FILE in the guest (within
# GUEST_TIMEOUT seconds, default 1800), with that environment; each of its
# results one of ours, and one more: that it ran to its planned end.
#
# A guest whose kernel dies (run-vm.sh: "the guest ended without reporting
# an exit status") is told with the kernel's last words and run again,
# once: under load the emulated guest has died at random places (a double
# fault in the slab allocator, a NULL dereference in net_rx_action), with
# an EFLAGS no real CPU holds, which points at TCG; docs/guest.md says
# more. The first run's results stand; the second must run to its end.
relay_from_guest() {
	local file=$1 try
	shift
	need_guest
	for try in 1 2; do
		_relay_once "$file" "$@"
		case $? in
		0) return 0 ;;
		2)
			((try == 1)) || break
			diag "guest: the guest's kernel died during tests/$file (its last words above): running it again, once"
			;;
		*) break ;;
		esac
	done
	ok 1 "guest: tests/$file ran to its end${*:+ with $*}"
}

# _relay_once FILE [NAME=VALUE...]: one run of it in the guest; 0 when it
# ran to its planned end (that result told), 2 when the guest died, 1
# otherwise (both with what the guest printed that is not TAP).
_relay_once() {
	local _case=	# the guest's names carry their own cases
	local line name n=0 out planned=none file=tests/$1 rest=() died=0 from
	shift
	out=$(mktemp -d)
	while IFS= read -r line; do
		# What is not TAP (run-vm.sh's word, the kernel's last lines when
		# the guest died) is told when the file did not run to its end.
		case $line in
		"ok "* | "not ok "* | "# "* | 1..*) ;;
		*"the guest ended without reporting an exit status"*) died=1; rest+=("$line") ;;
		*) rest+=("$line") ;;
		esac
		case $line in
		"ok "*" # SKIP "*)
			# The guest detected its facts itself.
			name=${line#ok * - }
			skip_relayed "${name%% # SKIP *}" "${name#* # SKIP }"
			;;
		"ok "*) ok 0 "${line#ok * - }" ;;
		"not ok "*) ok 1 "${line#not ok * - }" ;;
		"# "*) echo "$line"; continue ;;
		1..*) planned=${line#1..}; continue ;;
		*) continue ;;
		esac
		n=$((n + 1))
	done < <(in_guest "$out" "${GUEST_TIMEOUT:-1800}" env "$@" bash "$file" 2>&1)
	rm -rf "$out"
	diag "guest: $file: $n results of $planned planned"
	if [[ $n == "$planned" && $n -gt 0 ]]; then
		ok 0 "guest: $file ran to its end${*:+ with $*}"
		return 0
	fi
	from=$((${#rest[@]} - ${GUEST_TAIL_LINES:-80}))
	((${#rest[@]} == 0)) || printf '# | %s\n' "${rest[@]:$((from > 0 ? from : 0))}"
	((died)) && return 2
	return 1
}

# guest_run CMD...: CMD, a command that boots the qemu guest (run.sh --vm,
# compare --vm), with its output (stderr included) on stdout and its
# status. When the guest's kernel died under it (run-vm.sh says so), that
# is told on stderr with the kernel's last words and CMD runs again, once,
# as relay_from_guest does; CMD must be fine to run twice.
guest_run() {
	local out rc
	out=$("$@" 2>&1)
	rc=$?
	if [[ $out == *"the guest ended without reporting an exit status"* ]]; then
		{
			echo "# guest: the guest's kernel died under: $*; its last words:"
			grep 'kernel|' <<<"$out" | tail -n "${GUEST_TAIL_LINES:-80}" | sed 's/^/# | /'
			echo "# guest: running it again, once"
		} >&2
		out=$("$@" 2>&1)
		rc=$?
	fi
	printf '%s\n' "$out"
	return "$rc"
}

# The guest tests: make check installs the guest's packages first, so a
# missing kernel or a failed build is a failure here, not a reason to skip.
need_guest() {
	local kver
	if ! kver=$("$ROOT/vm/run-vm.sh" --print-kernel 2>&1); then
		echo "Bail out! no guest kernel: $kver"
		exit 1
	fi
	if ! guest_build >&2; then
		echo "Bail out! cannot build the guest's modules for its kernel $kver"
		exit 1
	fi
}

# ---- cases by name: ALL_TESTS and TESTS --------------------------------------
#
# Every file declares its cases in the order they run, as kselftest's net
# tests do, and lets TESTS pick some of them:
#
#     source "$(dirname "$0")/lib.sh"
#     ALL_TESTS="interrupted keep-connection workers-2"
#     select_cases "$@"	# first, before anything that has an effect
#     root_or_bail_out
#     ...setup...
#     run_tests		# test_interrupted, test_keep_connection, ...
#     plan_at_end
#
# A case NAME runs as the function test_NAME, its hyphens as underscores.
# Where the cases are the declared variants of the servers (each_variant),
# ALL_TESTS=$(variant_cases) and each_variant runs them instead.
#
# TESTS names files and cases (make check TESTS=..., or the environment):
# 'contract user' runs those two files whole (tests/prove.sh picks them);
# 'user:interrupted,workers-2' two cases of user.t; 'contract:kecho' every
# variant of kecho. A name a file does not have is a usage error, exit 2
# with the file's cases listed, before anything runs; `bash tests/FILE.t
# --list` prints a file's cases, one a line.
#
# Every result's name starts with its case: 'CASE: what' or 'CASE/sub:
# what' (ok adds 'CASE: ' to a name that does not), so a failure names
# what to run again: TESTS=FILE:CASE.

SELECTED=()	# the cases to run, in ALL_TESTS's order
_case=	# the case running now (run_tests, each_variant)

# _named_cases: the cases TESTS names for this file, one a line; nothing
# when it names none, or names the file whole.
_named_cases() {
	local e f me=${0##*/} entries cases=() some
	me=${me%.t}
	read -ra entries <<<"${TESTS:-}"
	for e in "${entries[@]}"; do
		f=${e%%:*}
		f=${f##*/}
		[[ ${f%.t} == "$me" ]] || continue
		[[ $e == *:* ]] || return 0
		IFS=, read -ra some <<<"${e#*:}"
		cases+=("${some[@]}")
	done
	((${#cases[@]} == 0)) || printf '%s\n' "${cases[@]}"
}

# select_cases [--list]: SELECTED from ALL_TESTS and TESTS. --list prints
# ALL_TESTS and exits. A case TESTS names that ALL_TESTS lacks: the usage
# error, exit 2.
select_cases() {
	local me=${0##*/} c named all=() unknown=()
	me=${me%.t}
	read -d '' -ra all <<<"${ALL_TESTS:-}"
	if ((${#all[@]} == 0)); then
		echo "Bail out! $me.t declares no cases (ALL_TESTS)"
		exit 1
	fi
	named=$(_named_cases)
	for c in $named; do
		[[ " ${all[*]} " == *" $c "* ]] || unknown+=("$c")
	done
	if ((${#unknown[@]})); then
		{
			echo "$me.t: no case named '${unknown[*]}'. Its cases:"
			printf '  %s\n' "${all[@]}"
			echo "Run some with TESTS=$me:CASE[,CASE...], or all with TESTS=$me."
		} >&2
		exit 2
	fi
	if [[ ${1:-} == --list ]]; then
		printf '%s\n' "${all[@]}"
		exit 0
	fi
	SELECTED=()
	for c in "${all[@]}"; do
		[[ -z $named ]] || grep -qxF -- "$c" <<<"$named" || continue
		SELECTED+=("$c")
	done
}

# case_selected NAME: NAME is one of the cases to run.
case_selected() {
	[[ " ${SELECTED[*]} " == *" $1 "* ]]
}

# run_tests: each selected case's function, in order; a case without its
# function is a failure, not a silent pass.
run_tests() {
	local c f t0
	for c in "${SELECTED[@]}"; do
		_case=$c
		f=test_${c//-/_}
		t0=$SECONDS
		if declare -F "$f" >/dev/null; then
			"$f"
		else
			ok 1 "has its function $f"
		fi
		took "$c" "$t0"
	done
	_case=
}

# took WHAT T0: a diagnostic of how long WHAT took since $SECONDS was T0,
# so a log tells where a tier's minutes go (docs/testing.md, CI's time).
took() {
	diag "time: $1 took $((SECONDS - $2)) s"
}

# variant_cases [LISTER]: the cases of a file that runs each_variant: each
# variant's label, then each server that is no label (kecho: all three of
# its variants).
variant_cases() {
	local label server labels=() servers=() s
	while read -r label server _; do
		labels+=("$label")
		[[ " ${servers[*]} " == *" $server "* ]] || servers+=("$server")
	done < <("${1:-variants}")
	for s in "${servers[@]}"; do
		[[ " ${labels[*]} " == *" $s "* ]] || labels+=("$s")
	done
	echo "${labels[*]}"
}

# tracefs_state: what the ftrace scripts must leave as they found it:
# tracefs mounted or not, the top-level files they may write, the trace
# instances and kernel.bpf_stats_enabled.
tracefs_state() {
	local tr=/sys/kernel/tracing f
	if [[ ! -e $tr/trace ]]; then
		echo unmounted
		return
	fi
	for f in current_tracer tracing_on buffer_size_kb set_event set_ftrace_filter \
		set_graph_function options/funcgraph-tail; do
		# buffer_size_kb "7 (expanded: 1408)" reads "1410" once the kernel has
		# allocated the buffer (at the first use of a tracer): same size
		echo "$f=$(sed 's/^[0-9]* (expanded: \([0-9]*\))$/\1/' "$tr/$f" 2>/dev/null |
			awk '/^[0-9]+$/ { $0 = int($0 / 8) * 8 } 1' || echo '(unreadable)')"
	done
	echo "instances=$(ls "$tr/instances")"
	sysctl kernel.bpf_stats_enabled
}
