# Shared by scripts/test.sh, scripts/main.sh, scripts/tour.sh and .ci/run: install what is missing (Debian 12),
# configure once, build. Sourced, not run.

# Debian packages the build, the tests and the benchmarks need.
SPYRE_CI_PACKAGES=(
	build-essential meson ninja-build pkg-config git clang clang-format
	libgit2-dev libyaml-dev libcurl4-openssl-dev libjansson-dev libcriterion-dev
	libmicrohttpd-dev libsqlite3-dev libssl-dev libpcre2-dev libopenblas-dev valgrind
	chromium # the dashboard's browser test (tests/daemon/browser.py)
)

ensure_packages() {
	local missing=() p
	for p in "${SPYRE_CI_PACKAGES[@]}" "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
			missing+=("$p")
	done
	((${#missing[@]} == 0)) && return 0
	echo "installing missing packages: ${missing[*]}" >&2
	local sudo=()
	[[ $(id -u) == 0 ]] || sudo=(sudo)
	"${sudo[@]}" apt-get update -qq
	DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends \
		"${missing[@]}" >/dev/null
}

# configure_and_build DIR [meson setup options...]: sets up DIR once (again only when the
# options change), then builds it.
configure_and_build() {
	local dir=$1
	shift
	local stamp="$dir/.spyre-ci-setup-args" want="$*"
	if [[ ! -f $dir/build.ninja || ! -f $stamp || $(cat "$stamp") != "$want" ]]; then
		rm -rf "$dir"
		meson setup "$dir" "$@" >"${dir%/}.setup.log" 2>&1 || {
			cat "${dir%/}.setup.log" >&2
			return 1
		}
		echo "$want" >"$stamp"
	fi
	ninja -C "$dir" >"${dir%/}.build.log" 2>&1 || {
		tail -n 60 "${dir%/}.build.log" >&2
		return 1
	}
}

# summarize DIR [LOGBASE...]: one closing line for the whole run, from meson's logs of it
# (default testlog; `meson test --logbase NAME` writes NAME.txt): Criterion's per-binary
# syntheses, the shell checks' own counts, and one for every other test.
summarize() {
	local dir=$1 base log=()
	shift
	for base in "${@:-testlog}"; do
		[[ -f $dir/meson-logs/$base.txt ]] && log+=("$dir/meson-logs/$base.txt")
	done
	((${#log[@]})) || return 0
	awk '
		/Synthesis: Tested:/ { for (i = 1; i <= NF; i++) { if ($i == "Passing:") p += $(i+1); if ($i == "Failing:") f += $(i+1); if ($i == "Crashing:") f += $(i+1); if ($i == "Tested:") t += $(i+1) } }
		/^[a-z-]+: [0-9]+ passed, [0-9]+ failed$/ { p += $2; f += $4; t += $2 + $4 }
		/^replayed [0-9]+ inputs$/ { p += $2; t += $2 }
		END { printf "Criterion and checks: Tested: %d | Passing: %d | Failing: %d\n", t, p, f;
		      printf "%d passed, %d failed\n", p, f }
	' "${log[@]}"
}
