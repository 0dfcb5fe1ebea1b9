# The README stands alone: every file it links or names is inside the
# repository and exists; nothing points outside it (../, /work, absolute
# paths). Same for the Markdown files in docs/.
source "$(dirname "$0")/../lib.sh"
cd "$TOP"

check "LICENSE is MIT" grep -q '^MIT License' LICENSE

# links_of FILE: the targets of [text](target) links, one a line.
links_of() { grep -o '\](\([^)]*\))' "$1" | sed 's/^](//; s/)$//; s/#.*//' | grep -v '^$'; }

for doc in README.md docs/*.md; do
	[ -f "$doc" ] || continue
	dir=$(dirname "$doc")
	bad=
	while read -r l; do
		case "$l" in
		http://* | https://*) bad+=" $l(external)"; continue ;;
		/*) bad+=" $l(absolute)"; continue ;;
		esac
		target=$(realpath -m "$dir/$l")
		case "$target" in
		"$TOP"/*) ;;
		*) bad+=" $l(outside the repository)"; continue ;;
		esac
		[ -e "$target" ] || bad+=" $l(missing)"
	done < <(links_of "$doc")
	if [ -z "$bad" ]; then pass "$doc links only files inside the repository"; else fail "$doc links" "$bad"; fi
done
# Paths in backquotes or plain text that leave the repository.
if grep -nE '\.\./shared|/work/|DESIGN\.md' README.md docs/*.md docs/*.[18] >"$T/out"; then
	fail "no document names a file outside the repository" "$(tr '\n' '|' <"$T/out")"
else
	pass "no document names a file outside the repository"
fi
