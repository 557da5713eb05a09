#!/usr/bin/env bash
# `make install` into a scratch DESTDIR, then what a user of the installed tool would try:
# - the manual page renders with no groff warning (`groff -man -ww -z`) and `man -l` shows it;
# - bash, zsh and fish load their completion scripts; bash's and fish's offer --size after `thumb --si`
#   and fill/fit/smartcrop/stretch after `thumb --fit`, batch's subcommands after `batch` and only their own
#   options after `batch export-page` and `batch report`; zsh's, bound by compinit, offers the same
#   in an interactive zsh on a pseudo-terminal;
# - the binary is stripped (no `.symtab` or `.debug_*` section, `readelf -S`) and smaller than the
#   build's, and still runs `--version` and a real `thumb` in an empty environment (`env -i`); `ldd`
#   shows no library from the Swift toolchain's folder;
# - `make uninstall` removes exactly what was installed, leaving a file of the user's untouched.
# Installs groff, man-db, bash-completion, zsh and fish with apt-get when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
need=()
command -v groff >/dev/null 2>&1 || need+=(groff-base)
command -v man >/dev/null 2>&1 || need+=(man-db)
command -v zsh >/dev/null 2>&1 || need+=(zsh)
command -v fish >/dev/null 2>&1 || need+=(fish)
if ((${#need[@]})); then
  echo "Installing: ${need[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

dest=$(mktemp -d)
work=$(mktemp -d)
trap 'rm -rf "$dest" "$work"' EXIT
prefix=/usr/local
root="$dest$prefix"
fail() { echo "check-install: $*" >&2; exit 1; }

# A file of the user's beside the installed ones must survive uninstall.
mkdir -p "$root/bin"
echo keep > "$root/bin/users-own-tool"

make --no-print-directory install DESTDIR="$dest" PREFIX="$prefix" >/dev/null
bin="$root/bin/preview-loop"
page="$root/share/man/man1/preview-loop.1"
for file in "$bin" "$page" "$root/share/bash-completion/completions/preview-loop" \
            "$root/share/zsh/site-functions/_preview-loop" "$root/share/fish/vendor_completions.d/preview-loop.fish"; do
  [ -s "$file" ] || fail "make install did not write $file"
done

# The manual page: no warning at groff's strictest, and man renders it.
warnings=$(groff -man -ww -z "$page" 2>&1 || true)
[ -z "$warnings" ] || fail "groff warns on the manual page: $warnings"
man -l "$page" 2>/dev/null | grep -- "--size" >/dev/null || fail "man -l does not show --size"
MANWIDTH=80 man -l "$page" 2>&1 >/dev/null | grep . && fail "man -l wrote warnings"

# A pipeline's grep reads all its input (no -q): with pipefail, a grep -q that exits at its first match
# can leave the writer a SIGPIPE and fail a check that held.

# bash: load the script, then complete as readline would.
bash_offers() {
  bash -c 'source "$1"; complete -p preview-loop >/dev/null || exit 3
           shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _preview_loop
           printf "%s\n" "${COMPREPLY[@]}"' _ "$root/share/bash-completion/completions/preview-loop" "$@"
}
bash_offers preview-loop thumb --si | grep -x -- "--size" >/dev/null || fail "bash does not offer --size after 'thumb --si'"
[ "$(bash_offers preview-loop thumb --fit "" | sort | tr '\n' ' ')" = "fill fit smartcrop stretch " ] \
  || fail "bash does not offer fill, fit, smartcrop, stretch after 'thumb --fit'"
bash_offers preview-loop th | grep -x thumb >/dev/null || fail "bash does not offer the subcommand thumb"
[ "$(bash_offers preview-loop batch export-page --)" = "--help" ] \
  || fail "bash does not offer export-page's options alone after 'batch export-page --'"
bash_offers preview-loop batch report -- | grep -x -- "--duplicates" >/dev/null || fail "bash does not offer --duplicates after 'batch report --'"
bash_offers preview-loop batch report -- | grep -x -- "--shard" >/dev/null && fail "bash offers batch's --shard after 'batch report --'"
bash_offers preview-loop batch ex | grep -x export-page >/dev/null || fail "bash does not offer export-page after 'batch'"

# zsh: the function loads through compinit from site-functions and is bound to the command.
zsh -f -c 'fpath=("$1" $fpath); autoload -U compinit; compinit -u -d "$2/zcompdump"; [[ $_comps[preview-loop] == _preview-loop ]]' \
  _ "$root/share/zsh/site-functions" "$work" || fail "zsh does not bind _preview-loop to preview-loop"
zsh -f -n "$root/share/zsh/site-functions/_preview-loop" || fail "zsh cannot parse _preview-loop"
# zsh: complete in an interactive zsh on a pseudo-terminal (zpty), recording every match compadd is given.
cat > "$work/zsh-offers.zsh" <<'ZSH'
zmodload zsh/zpty
zpty z zsh -f -i
zpty -w z "PROMPT=''; fpath=($1 \$fpath); autoload -U compinit; compinit -u -D; bindkey '^I' complete-word"
zpty -w z "compadd() { if (( \${@[(I)-[OAD]]} )); then builtin compadd \"\$@\"; return; fi; local -a hits;" \
          "builtin compadd -O hits \"\$@\"; print -rl -- \$hits >> $3; builtin compadd \"\$@\"; }"
zpty -w z "comppostfuncs=(finished); finished() { print -r -- '<finished>' >> $3; }"
zpty -w z "$2"$'\t'
for i in {1..200}; do grep -qx '<finished>' $3 2>/dev/null && break; sleep 0.05; done
zpty -d z
ZSH
zsh_offers() {
  rm -f "$work/zsh-offered"
  (cd "$work" && zsh -f "$work/zsh-offers.zsh" "$root/share/zsh/site-functions" "$1" "$work/zsh-offered")
  grep -qx '<finished>' "$work/zsh-offered" || fail "zsh did not finish completing '$1'"
  grep -vx '<finished>' "$work/zsh-offered" | sort -u
}
zsh_offers "preview-loop thumb --si" | grep -x -- "--size" >/dev/null || fail "zsh does not offer --size after 'thumb --si'"
[ "$(zsh_offers "preview-loop batch export-page --")" = "--help" ] \
  || fail "zsh does not offer export-page's options alone after 'batch export-page --'"
zsh_offers "preview-loop batch report --" | grep -x -- "--shard" >/dev/null && fail "zsh offers batch's --shard after 'batch report --'"
zsh_offers "preview-loop batch " | grep -x export-page >/dev/null || fail "zsh does not offer export-page after 'batch'"

# fish: complete as fish itself would.
fish_offers() { fish --no-config -c "source $root/share/fish/vendor_completions.d/preview-loop.fish; complete -C '$1'"; }
fish_offers "preview-loop thumb --si" | cut -f1 | grep -x -- "--size" >/dev/null || fail "fish does not offer --size after 'thumb --si'"
fish_offers "preview-loop thumb --fit " | cut -f1 | grep -x stretch >/dev/null || fail "fish does not offer stretch after 'thumb --fit'"
[ "$(fish_offers "preview-loop batch export-page --" | cut -f1)" = "--help" ] \
  || fail "fish does not offer export-page's options alone after 'batch export-page --'"
fish_offers "preview-loop batch report --" | cut -f1 | grep -x -- "--shard" >/dev/null && fail "fish offers batch's --shard after 'batch report --'"
fish_offers "preview-loop batch " | cut -f1 | grep -x export-page >/dev/null || fail "fish does not offer export-page after 'batch'"

# The installed binary is stripped: no symbol table, no debug information, fewer bytes than the build's.
sections=$(readelf -S -W "$bin") || fail "readelf cannot read $bin"
if grep -qE '\.symtab|\.debug_' <<<"$sections"; then fail "the installed binary is not stripped (readelf -S lists .symtab or .debug_*)"; fi
built=$(stat -c %s .build/release/preview-loop) installed=$(stat -c %s "$bin")
((installed < built)) || fail "the installed binary ($installed bytes) is not smaller than the build's ($built bytes)"

# The installed binary on its own: no environment, nothing from the toolchain; stripped, it still works.
env -i "$bin" --version | grep "^preview-loop " >/dev/null || fail "the installed binary does not run in an empty environment"
env -i "$bin" thumb "$PWD/Fixtures/landscape.mp4" -o "$work/thumb.jpg" --size 160x90 >/dev/null \
  || fail "the installed binary cannot write a thumbnail"
[ -s "$work/thumb.jpg" ] || fail "the installed binary's thumbnail is empty"
toolchain=$(dirname "$(dirname "$(command -v swift || echo /opt/swift/usr/bin/swift)")")
if ldd "$bin" | grep -F -- "$toolchain" ; then fail "the installed binary links libraries from $toolchain"; fi
ldd "$bin" | grep "libswift" >/dev/null && fail "the installed binary links a Swift runtime library"

make --no-print-directory uninstall DESTDIR="$dest" PREFIX="$prefix" >/dev/null
left=$(cd "$dest" && find . -type f | sort)
[ "$left" = "./usr/local/bin/users-own-tool" ] || fail "make uninstall left or removed the wrong files: $left"
echo "check-install: install ($((built / 1000)) kB built, $((installed / 1000)) kB stripped), manual page, bash/zsh/fish completions, plain environment and uninstall all good"
