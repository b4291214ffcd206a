#!/usr/bin/env bash
# The test command: formatting, vet, every Go test (the end-to-end ones
# against real tmux and sshd included), shellcheck and bats. It runs every
# step, then fails if any failed.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
# Nothing past stderr is inherited, so that a run here is a run in CI: a
# descriptor the caller left open once hid a test's clash with bash's own.
for fd in "/proc/$$/fd/"*; do
	fd=${fd##*/}
	((fd <= 2 || fd == 255)) || exec {fd}>&-
done
failed=()

mapfile -t gofiles < <(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.git/*')
unformatted=$(gofmt -l "${gofiles[@]}")
[[ -z $unformatted ]] || { echo "gofmt would change: $unformatted"; failed+=(gofmt); }

go vet ./... || failed+=("go vet")
go mod tidy -diff || failed+=("go mod tidy")
# Most of cmd/omega-monitor's end-to-end tests wait (on tmux, sshd, an
# agent's turn, a loop's interval) rather than compute, so more of them run
# at once than the default of one per core; those that drive a real agent
# program still take two turns among themselves (realProgram). The other
# packages keep the default: their tests are timed for it.
# The two run side by side, as one go test of ./... would run them.
cmd_log=$(mktemp)
go test -count=1 -parallel 8 -timeout 40m ./cmd/omega-monitor >"$cmd_log" 2>&1 &
cmd_test=$!
mapfile -t others < <(go list ./... | grep -vx 'github.com/omega-monitor/omega-monitor/cmd/omega-monitor')
go test -count=1 -timeout 40m "${others[@]}" || failed+=("go test")
wait "$cmd_test" || failed+=("go test ./cmd/omega-monitor")
cat -- "$cmd_log" && rm -f -- "$cmd_log"

mapfile -t shells < <(git ls-files '*.sh' '.ci/run' 'scripts/*' 2>/dev/null | while read -r f; do
	[[ -f $f ]] && head -1 "$f" | grep -q 'bash' && echo "$f"
done)
if command -v shellcheck >/dev/null; then
	shellcheck "${shells[@]}" || failed+=(shellcheck)
else
	echo "shellcheck is not installed"; failed+=(shellcheck)
fi

mapfile -t suites < <(git ls-files '*.bats' 2>/dev/null)
if ((${#suites[@]})); then
	if command -v bats >/dev/null; then
		bats "${suites[@]}" || failed+=(bats)
	else
		echo "bats is not installed"; failed+=(bats)
	fi
fi

if ((${#failed[@]})); then
	echo "FAILED: ${failed[*]}"
	exit 1
fi
echo "all tests passed"
