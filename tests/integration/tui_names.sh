#!/bin/sh
# tui_names.sh — long C++ names shortened (the screen's p key, --names): on cxxnames, whose two
# hot functions' demangled names fill a line before they end, p shows them without parameter
# lists and return types (shop::gather<double>), p again also without template arguments
# (shop::Ledger<>::tally, shop::gather<>), in Top, Tree, Callers, Flame and Lines alike, and p a
# third time whole again; the help lists p. --names starts the screen so, and gives batch mode's
# tables (--tree too) the same names; --annotate finds a function by its short name. A Rust
# program's names (rsdeep) have no hash at any level, and bare writes their generic arguments
# "<>". Every wait is bounded.
. "$(dirname "$0")/lib.sh"
need "$PROFTOP_BIN" "$WL/cxxnames"
. "$(dirname "$0")/lib_tmux.sh"

ROW='^ +[0-9.]+ +[0-9.]+ +[0-9]+ +'
STR='std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >'

# --- the p key ---------------------------------------------------------------------------------
pane names 200 70 -- "$WL/cxxnames" 60
check "full-tally" wait_screen names "${ROW}shop::Ledger<$STR, long>::tally\\(std::__cxx11::basic_string<char, "
check "full-gather" wait_screen names "${ROW}std::vector<double, std::allocator<double> > shop::gather<double>\\(std::map<"
tm send-keys -t names p
check "short-message" wait_screen names 'short names: no parameter lists or return types'
check "short-tally" wait_screen names "${ROW}shop::Ledger<$STR, long>::tally +cxxnames *\$"
check "short-gather" wait_screen names "${ROW}shop::gather<double> +cxxnames *\$"
check "short-no-parameters" wait_gone names 'tally\(|gather<double>\('
tm send-keys -t names p
check "bare-message" wait_screen names 'bare names: no parameter lists, return types or template arguments'
check "bare-tally" wait_screen names "${ROW}shop::Ledger<>::tally +cxxnames *\$"
check "bare-gather" wait_screen names "${ROW}shop::gather<> +cxxnames *\$"
# Every view draws the names so.
tm send-keys -t names 2 '*'
check "bare-tree" wait_screen names "${ROW}(▸|▾|\\+|-)? *shop::gather<> +cxxnames *\$"
tm send-keys -t names 3
check "bare-callers-tab" wait_screen names ' callers of shop::Ledger<>::tally'
check "bare-callers-row" wait_screen names "${ROW}(▸|▾|\\+|-) shop::Ledger<>::tally +cxxnames *\$"
tm send-keys -t names 5
check "bare-flame" wait_screen names '(^| )shop::Ledger<>::tally  '
tm send-keys -t names 1 Home a
check "bare-lines-heading" wait_screen names '^ shop::Ledger<>::tally  cxxnames  self [0-9]+'
tm send-keys -t names Escape p
check "full-again-message" wait_screen names 'names in full'
check "full-again-tally" wait_screen names "${ROW}shop::Ledger<$STR, long>::tally\\(std::__cxx11::basic_string<char, "
tm send-keys -t names '?'
check "help-lists-p" wait_screen names ' p {2,}names: full / without parameter lists and return types / also without'
tm send-keys -t names Escape q
check "q-ends" ended names
check "restores-terminal" restored names
check "no-sanitizer-report" no_sanitizer_report names

# --- --names: the screen starts so ----------------------------------------------------------------
pane opt 200 30 --names short -- "$WL/cxxnames" 60
check "option-short-gather" wait_screen opt "${ROW}shop::gather<double> +cxxnames *\$"
check "option-short-tally" wait_screen opt "${ROW}shop::Ledger<$STR, long>::tally +cxxnames *\$"
tm send-keys -t opt q
check "option-q-ends" ended opt

# --- batch mode ------------------------------------------------------------------------------------
run_proftop bare -b -n 0 --names bare -- "$WL/cxxnames" 2
check "batch-bare-status" status "$RC" 0 "$ERR"
check "batch-bare-tally" between "$(self_pct "$OUT" 'shop::Ledger<>::tally' cxxnames)" 50 70
check "batch-bare-gather" between "$(self_pct "$OUT" 'shop::gather<>' cxxnames)" 30 50
run_proftop tree -b -n 0 --tree --names short -- "$WL/cxxnames" 2
check "batch-tree-short" has "$OUT" "^ +[0-9.]+ +[0-9.]+ +[0-9]+ +shop::gather<double>  cxxnames\$"
check "batch-tree-no-parameters" sh -c "! grep -q 'gather<double>(' '$OUT'"
run_proftop annotate -b -n 0 --annotate 'shop::gather<double>' -- "$WL/cxxnames" 2
check "batch-annotate-short-name" has "$OUT" '^--- annotate  std::vector<double, std::allocator<double> > shop::gather<double>\(std::map<.*  self [1-9][0-9]*  total'

# --- Rust names ----------------------------------------------------------------------------------
need "$WL/rsdeep" # make builds it with rustc -O -g
for level in full short bare; do
	run_proftop "rust-$level" -b -n 0 --names "$level" -- "$WL/rsdeep" 2
	check "rust-$level-status" status "$RC" 0 "$ERR"
	check "rust-$level-hash_phase" has "$OUT" '  rsdeep::hash_phase  rsdeep$'
	check "rust-$level-no-hash" sh -c '! grep -Eq "::h[0-9a-f]{16}( |\$)" "$1"' sh "$OUT"
done
check "rust-full-generics" has "$TMPD/rust-full.out" '[A-Za-z_]<[A-Za-z(&*]'
check "rust-full-no-empty-generics" sh -c "! grep -q '<>' '$TMPD/rust-full.out'"
check "rust-bare-generics" has "$TMPD/rust-bare.out" '[A-Za-z_]<>'
check "rust-bare-no-generic-arguments" sh -c "! grep -Eq '[A-Za-z_]<[A-Za-z(&*]' '$TMPD/rust-bare.out'"
finish
