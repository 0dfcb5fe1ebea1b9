# --help, the man pages and bash completion agree: every option a --help
# lists is offered by completion and described in the man page, for every
# command of hermetic and for hermeticd; both man pages carry VERSION.
source "$(dirname "$0")/../lib.sh"
cd "$TOP"
COMPLETION=packaging/bash-completion/hermetic

# complete_words WORD...: what completion offers for the last WORD, one a line.
complete_words() {
	bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=()
		"_${1}"; [ ${#COMPREPLY[@]} = 0 ] || printf "%s\n" "${COMPREPLY[@]}"' _ "$TOP/$COMPLETION" "$@"
}
# The long options a help text names, by a plain grep independent of the
# completion's own parser.
help_opts() { grep -oE -- '--[a-z][a-z0-9-]*' | sort -u; }
# A roff man page spells --foo-bar as \-\-foo\-bar.
man_has() { grep -qF -- "$(printf '%s' "$2" | sed 's/-/\\-/g')" "$1"; }

# agree NAME MANPAGE HELP OFFERED: PASS/FAIL lines for one --help text.
agree() {
	local name=$1 man=$2 help=$3 offered=$4 o missing_c='' missing_m=''
	for o in $(printf '%s\n' "$help" | help_opts); do
		printf '%s\n' "$offered" | grep -qx -- "$o" || missing_c+=" $o"
		man_has "$man" "$o" || missing_m+=" $o"
	done
	if [ -z "$missing_c" ]; then pass "completion offers every option of '$name --help'"; else
		fail "completion offers every option of '$name --help'" "missing:$missing_c"; fi
	if [ -z "$missing_m" ]; then pass "$(basename "$man") describes every option of '$name --help'"; else
		fail "$(basename "$man") describes every option of '$name --help'" "missing:$missing_m"; fi
}

cmds=("" enroll replay status journals "journals list" "journals show" "journals fetch"
	"journals rm" "journals gc" hunt check-determinism)
for c in "${cmds[@]}"; do
	# shellcheck disable=SC2086
	if ! help=$("$HERMETIC" $c --help 2>&1); then
		fail "hermetic $c --help" "exit status $?"
		continue
	fi
	# shellcheck disable=SC2086
	agree "hermetic${c:+ $c}" docs/hermetic.1 "$help" "$(complete_words hermetic $c -- | sed 's/=$//' | sort -u)"
done
agree hermeticd docs/hermeticd.8 "$("$HERMETICD" --help)" "$(complete_words hermeticd -- | sort -u)"

# expect NAME WANT WORD...: completion of WORD... is exactly WANT.
expect() {
	local name=$1 want=$2 got
	shift 2
	got=$(complete_words "$@" | tr '\n' ' ')
	if [ "$got" = "$want" ]; then pass "$name"; else fail "$name" "got '$got', want '$want'"; fi
}
expect "completion offers the commands" \
	"$("$HERMETIC" --help | sed -n '/^Commands:/,/^$/s/^  \([a-z-]*\).*/\1/p' | tr '\n' ' ')" hermetic ''
expect "completion offers the journals commands" "list show fetch rm gc " hermetic journals ''
expect "completion offers --network's values" "block audit off " hermetic enroll --network ''
expect "completion offers --stragglers=VALUE" "kill keep " hermetic enroll --stragglers = k
mkdir -p "$T/jdir" && touch "$T/jfile"
expect "completion offers directories for --record=DIR" "$T/jdir " hermetic enroll --record = "$T/jd"
expect "completion offers files for hermeticd --socket" "$T/jfile " hermeticd --socket "$T/jf"
expect "nothing to offer for --seed N" "" hermetic enroll --seed ''
got=$(complete_words hermetic enroll --seed 3 -- ls --n | tr '\n' ' ')
case "$got" in
*--network*) fail "options after -- belong to CMD, not to enroll" "got '$got'" ;;
*) pass "options after -- belong to CMD, not to enroll" ;;
esac

v=$(cat VERSION)
check "hermetic --version prints VERSION" sh -c "'$HERMETIC' --version | grep -qx 'hermetic $v'"
check "hermeticd --version prints VERSION" sh -c "'$HERMETICD' --version | grep -qx 'hermeticd $v'"
check "hermetic --help lists --version" sh -c "'$HERMETIC' --help | grep -q -- --version"
for m in docs/hermetic.1 docs/hermeticd.8; do
	check "$m carries version $v" grep -q "^\.TH .*\"hermetic $v\"" "$m"
done
check "the completion script is valid bash" bash -n "$COMPLETION"
