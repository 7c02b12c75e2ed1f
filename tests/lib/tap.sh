# SPDX-License-Identifier: LGPL-2.1-or-later
#
# TAP helpers for the shell tests (sourced): ok, not_ok, diag, skip (a
# failure under FSGATE_TESTS_MUST_RUN), is, check, done_testing.

_n=0
_failed=0

ok () { _n=$((_n + 1)); echo "ok $_n - $*"; }
not_ok () { _n=$((_n + 1)); _failed=1; echo "not ok $_n - $*"; }
diag () { echo "# $*" | sed '2,$s/^/# /'; }
# skip DESC WHAT: a skip, or a failure under FSGATE_TESTS_MUST_RUN
skip () {
  _n=$((_n + 1))
  if [ -n "${FSGATE_TESTS_MUST_RUN:-}" ]; then
    _failed=1
    echo "not ok $_n - $1 # needs $2, and FSGATE_TESTS_MUST_RUN is set"
  else
    echo "ok $_n - $1 # SKIP needs $2"
  fi
}
# is DESC GOT EXPECTED
is () {
  if [ "$2" = "$3" ]; then ok "$1"; else
    not_ok "$1"; diag "got:      '$2'"; diag "expected: '$3'"
  fi
}
# check DESC COMMAND...
check () { local d=$1; shift; if "$@"; then ok "$d"; else not_ok "$d"; fi; }
done_testing () { echo "1..$_n"; exit $_failed; }
