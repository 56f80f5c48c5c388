#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The kernels the qemu guest boots, where each comes from, and the suite's
# modules (kecho.ko) built for each.
#
#   vm/kernels.sh list             the versions, and whether each is here
#   vm/kernels.sh fetch VERSION... download and unpack (root)
#   vm/kernels.sh show [VERSION]   release, image, modules and build tree
#   vm/kernels.sh module DIR [VERSION]  build DIR's module (kecho) for it
#                                  (if stale); its path
#
# Versions (default: $ECHOLAB_KERNEL, else 6.1):
#   6.1    Debian 12's own kernel (the release linux-image-amd64 names)
#   6.12   Debian 12's linux-image-6.12-amd64 (bookworm-security)
#   7.2    Debian unstable's (sid) newest 7.2 (linux-image-7.2.N+debNN-amd64),
#          from a private apt list in the cache; 'newest' names it
# Each is fetched with 'apt-get download' (image, headers, kbuild) and
# unpacked with 'dpkg-deb -x' into $ECHOLAB_KERNEL_CACHE/VERSION (default
# /var/cache/echolab/kernels), never installed: /boot, /lib/modules, the
# bootloader and the host's apt sources are not touched (sid's list lives
# in $ECHOLAB_KERNEL_CACHE/apt-sid). VM_KERNEL=IMAGE boots that image instead
# of 6.1's, with the modules of its release in /lib/modules (a kernel of
# your own, or a distribution without Debian's); an image with no
# /lib/modules/RELEASE is taken to have everything built in.
#
# A module for a kernel other than the one DIR/NAME.ko was built for goes
# to DIR/build/RELEASE/ (vm/run-vm.sh puts it at DIR/NAME.ko in the guest).
# A kernel whose headers name a compiler this host lacks (7.2: gcc-16)
# gets no module: 'module' says why, status 3.
# Sourced (by vm/run-vm.sh, lib/guest.sh), it defines the
# functions below; kernel_find sets KERNEL_VERSION, KERNEL_RELEASE,
# KERNEL_IMAGE, KERNEL_MODDIR and KERNEL_KDIR.

KERNEL_VERSIONS=(6.1 6.12 7.2)
KERNEL_DEFAULT=6.1
# newest: the newest version above (--kernel newest).
KERNEL_NEWEST=7.2
# What make deps fetches: Debian 12's, which CI boots (7.2: on first use).
# shellcheck disable=SC2034 # scripts/deps.sh reads it
KERNEL_DEPS=(6.1 6.12)
# Where sid's packages come from (7.2): a list of our own, never the host's.
KERNEL_SID_MIRROR=${ECHOLAB_SID_MIRROR:-http://deb.debian.org/debian}
KERNEL_CACHE=${ECHOLAB_KERNEL_CACHE:-/var/cache/echolab/kernels}
_kernels_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# kernel_check VERSION: 0 if the suite knows VERSION (or 'newest'), else
# a message.
kernel_check() {
	local v
	for v in "${KERNEL_VERSIONS[@]}" newest; do
		[[ $1 == "$v" ]] && return 0
	done
	echo "unknown kernel '$1': the guest boots ${KERNEL_VERSIONS[*]} (or newest)" \
		"(vm/kernels.sh list)" >&2
	return 2
}

# kernel_name VERSION: the version itself, 'newest' the newest one's.
kernel_name() {
	if [[ $1 == newest ]]; then echo "$KERNEL_NEWEST"; else echo "$1"; fi
}

# kernel_meta VERSION: Debian's metapackage that names the newest release
# (6.1 is Debian 12's own kernel: the plain one; sid has none per version).
kernel_meta() {
	if [[ $1 == 6.1 ]]; then
		echo linux-image-amd64
	else
		echo "linux-image-$1-amd64"
	fi
}

# kernel_apt_opts VERSION: apt's options for where VERSION's packages are:
# none for Debian 12's (the host's sources), else a sources list, lists
# and cache of our own in the kernel cache (sid for 7.2), updated here.
kernel_apt_opts() {
	local dir=$KERNEL_CACHE/apt-sid
	[[ $1 == 7.* ]] || return 0
	mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial"
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $KERNEL_SID_MIRROR sid main" \
		>"$dir/sources.list"
	APT_OPTS=(-o "Dir::Etc::SourceList=$dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
		-o "Dir::State::Lists=$dir/lists" -o "Dir::Cache=$dir/cache")
	apt-get "${APT_OPTS[@]}" update -q >/dev/null || {
		echo "kernels: apt-get update of sid's list ($dir/sources.list) failed" >&2
		return 1
	}
}

# kernel_release VERSION: the newest release of VERSION apt knows.
kernel_release() {
	local meta
	if [[ $1 == 7.* ]]; then
		apt-cache "${APT_OPTS[@]}" pkgnames "linux-image-$1." 2>/dev/null |
			sed -n "s/^linux-image-\(${1//./\\.}\.[0-9]*+deb[0-9]*-amd64\)\$/\1/p" | sort -V | tail -n 1
		return
	fi
	meta=$(kernel_meta "$1")
	apt-cache show "$meta" >/dev/null 2>&1 || apt-get update -q >/dev/null
	apt-cache depends "$meta" 2>/dev/null |
		sed -n 's/^ *Depends: linux-image-\([0-9].*-amd64\)$/\1/p' | head -n 1
}

# kernel_packages RELEASE: the image and what it depends on of its own
# (7.2: linux-binary, linux-modules, linux-base: the image package is
# empty), the headers and theirs (common headers, kbuild).
kernel_packages() {
	local r=$1 deps
	mapfile -t deps < <(apt-cache "${APT_OPTS[@]}" depends "linux-headers-$r" 2>/dev/null |
		sed -n 's/^ *Depends: \(linux-headers-.*-common\|linux-kbuild-[0-9].*\)$/\1/p' | sort -u)
	((${#deps[@]} == 2)) || {
		echo "kernels: linux-headers-$r does not name its common headers and kbuild" \
			"(apt-cache depends linux-headers-$r)" >&2
		return 1
	}
	echo "linux-image-$r" "linux-headers-$r" "${deps[@]}"
	apt-cache "${APT_OPTS[@]}" depends "linux-image-$r" 2>/dev/null |
		sed -n "s/^ *Depends: \(linux-\(binary\|modules\|base\)-${r//./\\.}\)\$/\1/p" | sort -u
}

# kernel_find [VERSION]: the kernel's files, when they are here (status 1
# and a message saying how to get them when not).
kernel_find() {
	local v=${1:-${ECHOLAB_KERNEL:-$KERNEL_DEFAULT}} dir
	kernel_check "$v" || return 2
	v=$(kernel_name "$v")
	KERNEL_VERSION=$v
	if [[ $v == 6.1 && -n ${VM_KERNEL:-} ]]; then
		KERNEL_IMAGE=$VM_KERNEL
		[[ -f $KERNEL_IMAGE ]] || {
			echo "VM_KERNEL=$VM_KERNEL: no such kernel image" >&2
			return 1
		}
		KERNEL_RELEASE=${KERNEL_IMAGE##*/vmlinuz-}
		KERNEL_MODDIR=/lib/modules/$KERNEL_RELEASE
	else
		dir=$KERNEL_CACHE/$v/root
		KERNEL_RELEASE=$(cat "$KERNEL_CACHE/$v/release" 2>/dev/null) || KERNEL_RELEASE=
		KERNEL_MODDIR=$dir/lib/modules/$KERNEL_RELEASE
		# 7.2's packages put it beside its modules, not in /boot.
		KERNEL_IMAGE=$dir/boot/vmlinuz-$KERNEL_RELEASE
		[[ -f $KERNEL_IMAGE ]] || KERNEL_IMAGE=$KERNEL_MODDIR/vmlinuz
		[[ -n $KERNEL_RELEASE && -f $KERNEL_IMAGE ]] || {
			echo "kernel $v is not in $KERNEL_CACHE/$v: fetch it with" \
				"'sudo vm/kernels.sh fetch $v' (or 'sudo make deps')" >&2
			return 1
		}
	fi
	KERNEL_KDIR=$KERNEL_MODDIR/build
	# VM_KERNEL with no /lib/modules/RELEASE: a kernel with everything
	# built in (CONFIG_MODULES=n); the guest loads nothing.
	[[ -n ${VM_KERNEL:-} && $v == 6.1 && ! -e $KERNEL_MODDIR ]] && return 0
	[[ -f $KERNEL_MODDIR/modules.dep ]] || {
		echo "no modules for $KERNEL_RELEASE in $KERNEL_MODDIR" \
			"(sudo vm/kernels.sh fetch $v)" >&2
		return 1
	}
}

# kernel_fetch VERSION: apt-get download the image, headers and kbuild of
# the newest release apt knows (kernel_release); dpkg-deb -x them into the
# cache; point the build tree's absolute links and include into the
# cache; depmod -b. Nothing is installed.
kernel_fetch() {
	local v release tmp dir deb pkgs APT_OPTS=()
	kernel_check "$1" || return 2
	v=$(kernel_name "$1")
	[[ $(id -u) -eq 0 ]] || {
		echo "kernels: fetching $v writes $KERNEL_CACHE: run it as root (sudo make deps)" >&2
		return 1
	}
	kernel_apt_opts "$v" || return 1
	release=$(kernel_release "$v")
	[[ -n $release ]] || {
		echo "kernels: apt knows no release of $v (6.1, 6.12: Debian 12 and bookworm-security;" \
			"7.2: sid; run 'apt-get update')" >&2
		return 1
	}
	read -ra pkgs <<<"$(kernel_packages "$release" | tr '\n' ' ')"
	((${#pkgs[@]} >= 4)) || return 1
	echo "kernels: fetching $v ($release) into $KERNEL_CACHE/$v: ${pkgs[*]}" >&2
	mkdir -p "$KERNEL_CACHE/$v"
	tmp=$(mktemp -d "$KERNEL_CACHE/$v/fetch.XXXXXX")
	chmod 755 "$tmp"
	dir=$tmp/root
	if ! (cd "$tmp" && apt-get "${APT_OPTS[@]}" download -q "${pkgs[@]}" 2>&1 |
		grep -v '^W: Download is performed unsandboxed' >&2) ||
		! compgen -G "$tmp/*.deb" >/dev/null; then
		echo "kernels: apt-get download ${pkgs[*]} failed" >&2
		rm -rf "$tmp"
		return 1
	fi
	for deb in "$tmp"/*.deb; do
		dpkg-deb -x "$deb" "$dir" || { rm -rf "$tmp"; return 1; }
	done
	rm -f "$tmp"/*.deb
	# Merged /usr (7.2: usr/lib/modules): /lib as on the host, for depmod -b.
	[[ -e $dir/lib || ! -d $dir/usr/lib/modules ]] || ln -s usr/lib "$dir/lib"
	kernel_fix_tree "$dir" "$release" "$KERNEL_CACHE/$v/root" || { rm -rf "$tmp"; return 1; }
	depmod -b "$dir" "$release" || { rm -rf "$tmp"; return 1; }
	rm -rf "$KERNEL_CACHE/$v/root"
	mv "$dir" "$KERNEL_CACHE/$v/root"
	echo "$release" >"$KERNEL_CACHE/$v/release"
	rm -rf "$tmp"
	echo "kernels: $v is $release, in $KERNEL_CACHE/$v/root" >&2
}

# kernel_fix_tree DIR RELEASE FINAL: the packages assume they sit at /:
# the build and source links are absolute, and the build tree's Makefile
# includes the common headers (and 7.2's sets KBUILD_OUTPUT) by absolute
# path. Point them at FINAL.
kernel_fix_tree() {
	local dir=$1 release=$2 final=$3 link target mk
	while IFS= read -r -d '' link; do
		target=$(readlink "$link")
		ln -sfn "$final$target" "$link"
	done < <(find "$dir" -type l -lname '/*' -print0)
	mk=$dir/usr/src/linux-headers-$release/Makefile
	[[ -f $mk ]] || { echo "kernels: no $mk in the headers package" >&2; return 1; }
	sed -i "s#^\(include \|KBUILD_OUTPUT=\)/usr/src/#\1$final/usr/src/#" "$mk"
}

# kernel_cc_missing: the compiler KERNEL_KDIR's headers build modules with
# (Debian's .kernelvariables: CC = ...gcc-N) when this host lacks it, and
# why another will not do; status 1 (nothing) when the host has it.
kernel_cc_missing() {
	local cc
	cc=$(sed -n 's/^CC = .*\(gcc-[0-9][0-9]*\)$/\1/p' "$KERNEL_KDIR/.kernelvariables" 2>/dev/null)
	[[ -n $cc ]] || return 1
	command -v "$cc" >/dev/null || command -v "x86_64-linux-gnu-$cc" >/dev/null && return 1
	echo "its headers build modules with $cc, which this host lacks" \
		"($(gcc -dumpfullversion 2>/dev/null | sed 's/^/gcc /') here: its kernel's flags are" \
		"$cc's, e.g. -fmin-function-alignment, and its objtool needs a newer glibc)"
}

# kernel_module DIR [VERSION]: the path of the module built from DIR (a
# Kbuild directory of the repository: one .ko, named after DIR) for the
# kernel: DIR/NAME.ko when it was built for that kernel and is newer than
# its source, else DIR/build/RELEASE/NAME.ko, built when missing or stale.
# Its source is DIR's C files and common/defaults.h, the suite's defaults,
# which the copy in DIR/build/RELEASE gets beside them. Status 3, saying
# why, when the kernel's compiler is not here (kernel_cc_missing).
kernel_module() {
	local src=$_kernels_root/$1 name=${1##*/} ko build newest f why
	local defaults=$_kernels_root/common/defaults.h
	kernel_find "${2:-}" || return 1
	[[ -f $src/Kbuild ]] || { echo "kernels: $1 has no Kbuild: not a module's source" >&2; return 1; }
	newest=$src/Kbuild
	for f in "$src"/*.[ch] "$defaults"; do
		[[ $f -nt $newest ]] && newest=$f
	done
	ko=$src/$name.ko
	if [[ -f $ko && $(modinfo -F vermagic "$ko" 2>/dev/null | cut -d' ' -f1) == "$KERNEL_RELEASE" &&
		$ko -nt $newest ]]; then
		echo "$ko"
		return 0
	fi
	build=$src/build/$KERNEL_RELEASE
	ko=$build/$name.ko
	if why=$(kernel_cc_missing); then
		echo "kernels: no $name.ko for $KERNEL_RELEASE: $why (docs/guest.md)" >&2
		return 3
	fi
	if [[ ! -f $ko || $newest -nt $ko ]]; then
		echo "kernels: building $name.ko for $KERNEL_RELEASE in $1/build/$KERNEL_RELEASE" >&2
		mkdir -p "$build"
		cp "$src"/*.[ch] "$src/Kbuild" "$defaults" "$build/" 2>/dev/null ||
			cp "$src"/*.c "$src/Kbuild" "$defaults" "$build/"
		make -C "$KERNEL_KDIR" M="$build" modules >"$build/build.log" 2>&1 || {
			echo "kernels: building $name.ko for $KERNEL_RELEASE failed ($1/build/$KERNEL_RELEASE/build.log):" >&2
			tail -n 20 "$build/build.log" >&2
			return 1
		}
	fi
	echo "$ko"
}

kernels_usage() {
	sed -n '/^# The kernels the qemu/,/^# functions below/{s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"
}

kernels_main() {
	local cmd=${1:-} v
	shift || true
	case $cmd in
	list)
		for v in "${KERNEL_VERSIONS[@]}"; do
			if kernel_find "$v" 2>/dev/null; then
				echo "$v $KERNEL_RELEASE $KERNEL_IMAGE"
			else
				echo "$v (not here: sudo vm/kernels.sh fetch $v)"
			fi
		done
		;;
	fetch)
		(($#)) || { echo "kernels: fetch which? ${KERNEL_VERSIONS[*]}" >&2; return 2; }
		for v in "$@"; do
			kernel_fetch "$v" || return
		done
		;;
	show)
		kernel_find "${1:-}" || return
		printf 'version=%s\nrelease=%s\nimage=%s\nmodules=%s\nkdir=%s\n' "$KERNEL_VERSION" \
			"$KERNEL_RELEASE" "$KERNEL_IMAGE" "$KERNEL_MODDIR" "$KERNEL_KDIR"
		;;
	module)
		(($#)) || { echo "kernels: module needs a module's directory (kecho)" >&2; return 2; }
		kernel_module "$@"
		;;
	-h | --help)
		kernels_usage
		;;
	*)
		kernels_usage >&2
		return 2
		;;
	esac
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
	set -euo pipefail
	kernels_main "$@"
fi
