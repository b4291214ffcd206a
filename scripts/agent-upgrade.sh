#!/usr/bin/env bash
# agent-upgrade.sh: try the newest release of each agent program against the
# tour the real-program tests take the pinned one through, before bumping a
# pin. It never changes a pin, the golden corpus or the pinned caches: the
# new release goes into a cache of its own, and the tour runs in a scratch
# copy of the working tree.
set -uo pipefail
# The whole script is one block, parsed before it runs: an edit to this file
# while it runs (a tour takes minutes) cannot change what it does.
{

usage() {
	cat <<'EOF'
usage: scripts/agent-upgrade.sh [options]

For each agent (Claude Code, Codex CLI, Gemini CLI): find the newest release
on the npm registry, install it into a cache of its own, and run the same
tour as the real-program tests against it, in a scratch copy of the working
tree (TestCaptureGolden -capture with OMEGA_<AGENT>_VERSION set, then
TestRealGolden on what it captured). Then check every flag of the agent's
audit argv (auditrun) against the new binary: it must show in its --help and
the argv must not be refused as an unknown option or an invalid value.

It prints, per agent, the pinned and the newest version, each screen whose
reading differs from what the tour made the program do, and each flag the
program refuses. When the newest release is the pinned one it says "no newer
release" and runs only the quick part: the stored captures and the argv
check against the pinned binary (--force runs the whole tour anyway).

Options:
  -a, --agent NAME        claude, codex, gemini, pi, copilot, qwen or opencode;
                          repeatable (default: all)
  --version NAME=VERSION  try VERSION instead of the registry's newest
  --cache DIR             the cache for new releases
                          (default: ~/.cache/omega-monitor/upgrade/<agent>)
  --timeout MINUTES       bound of one agent's capture tour (default 40)
  --force                 run the capture tour even with no newer release
  --argv-only             only the argv check: no tour, no stored captures
  --e2e                   also run cmd/omega-monitor's real-agent tests
                          (TestRealAgents*, TestRealCodex*, TestRealGemini*,
                          TestRealClaude*, TestAudit*) with the new release
  --keep                  keep the scratch copy (kept anyway when something
                          differs: its golden/real* hold the new captures)
  -h, --help              this help

Exit status: 0 when every screen reads the same and every flag is
accepted; 1 when something differs (listed); 2 for a usage error; 3 when a
check could not run (no registry, a failed install, a tree that does not
build).

Environment: GO (default go), NPM (default npm).
EOF
}

die_usage() {
	echo "agent-upgrade: $*" >&2
	echo "try: scripts/agent-upgrade.sh --help" >&2
	exit 2
}

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd) || exit 3
GO=${GO:-go}
NPM=${NPM:-npm}

agents=()
declare -A forced=()
cache_base=
tour_minutes=40
force=false
argv_only=false
e2e=false
keep=false

while (($#)); do
	case $1 in
	-h | --help)
		usage
		exit 0
		;;
	-a | --agent)
		(($# >= 2)) || die_usage "$1 needs an agent name"
		case $2 in
		claude | codex | gemini | pi | copilot | qwen | opencode) agents+=("$2") ;;
		*) die_usage "unknown agent '$2' (claude, codex, gemini, pi, copilot, qwen or opencode)" ;;
		esac
		shift 2
		;;
	--version)
		(($# >= 2)) || die_usage "--version needs NAME=VERSION"
		name=${2%%=*} ver=${2#*=}
		[[ $2 == *=* && $name =~ ^(claude|codex|gemini|pi|copilot|qwen|opencode)$ ]] || die_usage "--version takes claude=V, codex=V, gemini=V, pi=V, copilot=V, qwen=V or opencode=V, not '$2'"
		[[ $ver =~ ^[0-9A-Za-z][0-9A-Za-z.+-]*$ ]] || die_usage "'$ver' is not a version"
		forced[$name]=$ver
		shift 2
		;;
	--cache)
		(($# >= 2)) || die_usage "--cache needs a directory"
		cache_base=$2
		shift 2
		;;
	--timeout)
		(($# >= 2)) || die_usage "--timeout needs minutes"
		[[ $2 =~ ^[1-9][0-9]*$ ]] || die_usage "--timeout takes whole minutes, not '$2'"
		tour_minutes=$2
		shift 2
		;;
	--force) force=true && shift ;;
	--argv-only) argv_only=true && shift ;;
	--e2e) e2e=true && shift ;;
	--keep) keep=true && shift ;;
	*) die_usage "unknown argument '$1'" ;;
	esac
done
((${#agents[@]})) || agents=(claude codex gemini pi copilot qwen opencode)

for tool in "$GO" "$NPM" node tmux timeout tar; do
	command -v "$tool" >/dev/null || {
		echo "agent-upgrade: $tool is not installed" >&2
		exit 3
	}
done
[[ -n $cache_base ]] || cache_base=${XDG_CACHE_HOME:-$HOME/.cache}/omega-monitor/upgrade
mkdir -p "$cache_base" || exit 3
cache_base=$(cd "$cache_base" && pwd) || exit 3

# What each agent is: its npm package, the file holding its Version const,
# its test package, its golden directory, the variables naming its cache and
# its version, where npm puts its binary, and how it prints its options.
declare -A pkg=([claude]=@anthropic-ai/claude-code [codex]=@openai/codex [gemini]=@google/gemini-cli [pi]=@mariozechner/pi-coding-agent [copilot]=@github/copilot [qwen]=@qwen-code/qwen-code [opencode]=opencode-ai)
declare -A pinfile=([claude]=internal/claudecode/install.go [codex]=internal/codex/codex.go [gemini]=internal/gemini/gemini.go [pi]=internal/pi/pi.go [copilot]=internal/copilot/copilot.go [qwen]=internal/qwen/qwen.go [opencode]=internal/opencode/opencode.go)
declare -A testpkg=([claude]=./internal/claudecode/ [codex]=./internal/codex/ [gemini]=./internal/gemini/ [pi]=./internal/pi/ [copilot]=./internal/copilot/ [qwen]=./internal/qwen/ [opencode]=./internal/opencode/)
declare -A golden=([claude]=golden/real [codex]=golden/real-codex [gemini]=golden/real-gemini [pi]=golden/real-pi [copilot]=golden/real-copilot [qwen]=golden/real-qwen [opencode]=golden/real-opencode)
declare -A cacheenv=([claude]=OMEGA_CLAUDE_CACHE [codex]=OMEGA_CODEX_CACHE [gemini]=OMEGA_GEMINI_CACHE [pi]=OMEGA_PI_CACHE [copilot]=OMEGA_COPILOT_CACHE [qwen]=OMEGA_QWEN_CACHE [opencode]=OMEGA_OPENCODE_CACHE)
declare -A pincache=([claude]=claude-code [codex]=codex [gemini]=gemini-cli [pi]=pi [copilot]=copilot [qwen]=qwen-code [opencode]=opencode)
declare -A versionenv=([claude]=OMEGA_CLAUDE_VERSION [codex]=OMEGA_CODEX_VERSION [gemini]=OMEGA_GEMINI_VERSION [pi]=OMEGA_PI_VERSION [copilot]=OMEGA_COPILOT_VERSION [qwen]=OMEGA_QWEN_VERSION [opencode]=OMEGA_OPENCODE_VERSION)
declare -A helpargs=([claude]=--help [codex]="exec --help" [gemini]=--help [pi]=--help [copilot]=--help [qwen]=--help [opencode]=--help)
declare -A e2eruns=([claude]='^Test(RealClaude|AuditRealClaude)' [codex]='^Test(RealAgents|RealCodex|AuditHostile)' [gemini]='^Test(RealAgents|RealGemini|AuditHostile|AuditGeminiPolicy)' [pi]='^TestRealAgents' [copilot]='^TestRealAgents' [qwen]='^TestRealAgents' [opencode]='^TestRealAgents')
# The agents an audit runs; the others have no audit argv to check.
declare -A auditor=([claude]=1 [codex]=1 [gemini]=1)
# A program refusing an argv says so in one of these ways (commander,
# clap, yargs, Codex's feature flags).
refusal="unknown option|unexpected argument|unknown argument|invalid value|argument '[^']*' is invalid|unknown feature|unrecognized (option|argument)"

work=$(mktemp -d "${TMPDIR:-/tmp}/agent-upgrade.XXXXXX") || exit 3
tree=$work/tree
differs=false
broken=false
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
	if [[ $keep == true || $differs == true || $broken == true ]]; then
		echo "the scratch copy, with the new captures and every log: $work"
	else
		rm -rf "$work"
	fi
}
trap cleanup EXIT

# note prints an indented line; list prints at most 40 lines of a file.
note() { printf '    %s\n' "$*"; }
list() {
	local n
	n=$(wc -l <"$1")
	head -40 "$1" | cut -c1-300 | sed 's/^/      /'
	((n <= 40)) || note "  ... $((n - 40)) more in $1"
}

echo "copying the working tree into $tree"
if ! mkdir -p "$tree" || ! tar -C "$root" --exclude=./.git -cf - . | tar -C "$tree" -xf -; then
	echo "agent-upgrade: could not copy $root" >&2
	exit 3
fi
# The tours of Codex and Gemini label their captures with the pinned Version;
# in the copy they say the release they ran.
sed -i 's/"Codex CLI", codex\.Version,/"Codex CLI", codex.Pin.Release(),/' "$tree/internal/codex/golden_test.go"
sed -i 's/"Gemini CLI", gemini\.Version,/"Gemini CLI", gemini.Pin.Release(),/' "$tree/internal/gemini/golden_test.go"
sed -i 's/"Pi", pi\.Version,/"Pi", pi.Pin.Release(),/' "$tree/internal/pi/golden_test.go"
sed -i 's/"Copilot CLI", copilot\.Version,/"Copilot CLI", copilot.Pin.Release(),/' "$tree/internal/copilot/golden_test.go"
sed -i 's/"Qwen Code", qwen\.Version,/"Qwen Code", qwen.Pin.Release(),/' "$tree/internal/qwen/golden_test.go"
sed -i 's/"OpenCode", opencode\.Version,/"OpenCode", opencode.Pin.Release(),/' "$tree/internal/opencode/golden_test.go"
# The argv check's helper: the audit argv exactly as auditrun builds it,
# with the agent's sandbox home filled in. It lives in the scratch copy only.
cat >"$tree/internal/auditrun/zz_agent_upgrade_test.go" <<'EOF'
package auditrun

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Written by scripts/agent-upgrade.sh into its scratch copy.
func TestAgentUpgradeArgv(t *testing.T) {
	agent, bin, out := os.Getenv("AGENT_UPGRADE_AGENT"), os.Getenv("AGENT_UPGRADE_BIN"), os.Getenv("AGENT_UPGRADE_OUT")
	setup, ok := agents[agent]
	if !ok || bin == "" || out == "" {
		t.Skip("run by scripts/agent-upgrade.sh")
	}
	home, work := filepath.Join(out, "home"), filepath.Join(out, "tree")
	for _, d := range []string{home, work} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	env, err := setup.home("", []string{"GEMINI_API_KEY=upgrade-check"}, home, work)
	if err != nil {
		t.Fatal(err)
	}
	s := &Sandbox{Tree: work, Home: home, agent: setup}
	for name, list := range map[string][]string{"argv": s.Argv(bin, "Say OK."), "env": env} {
		if err := os.WriteFile(filepath.Join(out, name), []byte(strings.Join(list, "\x00")), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}
EOF

# install AGENT VERSION: the release under the upgrade cache; prints the
# binary.
install() {
	local a=$1 v=$2 dir tmp bin got
	dir=$cache_base/$a/$v
	bin=$dir/node_modules/.bin/$a
	if [[ ! -x $bin ]]; then
		mkdir -p "$cache_base/$a" || return 1
		tmp=$(mktemp -d "$cache_base/$a/.install-$v-XXXXXX") || return 1
		note "installing ${pkg[$a]}@$v under $cache_base/$a" >&2
		if ! npm_config_cache=$cache_base/$a/.npm npm_config_update_notifier=false timeout -k 10 600 \
			"$NPM" install --prefix "$tmp" --no-audit --no-fund --no-save --loglevel=error "${pkg[$a]}@$v" >"$work/$a-install.log" 2>&1; then
			note "npm install ${pkg[$a]}@$v failed (or took over 10 minutes):" >&2
			list "$work/$a-install.log" >&2
			rm -rf "$tmp"
			return 1
		fi
		rm -rf "$dir" && mv "$tmp" "$dir" || return 1
	fi
	# Pi prints its version on standard error.
	got=$(DISABLE_AUTOUPDATER=1 NO_COLOR=1 timeout -k 5 60 "$bin" --version 2>&1 </dev/null)
	if [[ $got != *"$v"* ]]; then
		note "$bin --version printed '$got', not $v" >&2
		return 1
	fi
	echo "$bin"
}

# capture_fails LOG OUT: what went wrong in a capture run: the moments that
# read differently as it captured them, the steps that never showed, the
# failed tests.
capture_fails() {
	grep -E '^\s+\S+\.go:[0-9]+: |^\s*--- FAIL|^panic:|test timed out|^FAIL' "$1" |
		grep -vE ': captured |the fake API (saw|had no answer)|: installing |: installed in ' |
		sed -E 's/^\s+//' >"$2"
}

# golden_fails LOG OUT: each capture TestRealGolden reads differently, with
# its message's first line (want ... ; the classifier says ...).
golden_fails() {
	grep -E '^\s+\S+\.go:[0-9]+: |^\s*--- FAIL: TestRealGolden/|^panic:|test timed out' "$1" |
		grep -vE '^\s*--- FAIL: TestRealGolden \(' | sed -E 's/^\s+//' >"$2"
}

# argv_check AGENT BIN: the audit argv against BIN. Prints what it refuses.
argv_check() {
	local a=$1 bin=$2
	local out=$work/$a-argv help flag arg refused
	mkdir -p "$out"
	if ! (cd "$tree" && AGENT_UPGRADE_AGENT=$a AGENT_UPGRADE_BIN=$bin AGENT_UPGRADE_OUT=$out \
		timeout -k 10 300 "$GO" test -count=1 -run '^TestAgentUpgradeArgv$' ./internal/auditrun/ >"$out/go.log" 2>&1) || [[ ! -s $out/argv ]]; then
		note "could not build the audit argv (go test ./internal/auditrun -run TestAgentUpgradeArgv):"
		list "$out/go.log"
		return 2
	fi
	local -a argv env
	mapfile -d '' -t argv <"$out/argv"
	mapfile -d '' -t env <"$out/env"
	refused=0
	# 1. Every flag shows in the program's own help.
	# shellcheck disable=SC2086 # helpargs holds words
	help=$(HOME=$out/home NO_COLOR=1 DISABLE_AUTOUPDATER=1 timeout -k 5 60 "$bin" ${helpargs[$a]} 2>&1 </dev/null)
	if [[ $help != *--* ]]; then
		note "'$a ${helpargs[$a]}' printed no options: ${help:0:300}"
		return 2
	fi
	for arg in "${argv[@]:1}"; do
		[[ $arg == -* && $arg != -- ]] || continue
		flag=${arg%%=*}
		if ! grep -qE -- "(^|[^A-Za-z0-9-])${flag}([^A-Za-z0-9-]|\$)" <<<"$help"; then
			note "flag $flag is not in '$a ${helpargs[$a]}'"
			refused=1
		fi
	done
	# 2. The argv itself, headless with a trivial prompt, against an API
	# that does not answer: a refused option shows within seconds.
	(cd "$out/tree" && env -i PATH="$PATH" HOME="$out/home" TMPDIR="$out" LANG=C.UTF-8 NO_COLOR=1 \
		DISABLE_AUTOUPDATER=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 CLAUDE_CODE_MAX_RETRIES=0 \
		ANTHROPIC_BASE_URL=http://127.0.0.1:9 ANTHROPIC_API_KEY=sk-ant-upgrade-check \
		OPENAI_BASE_URL=http://127.0.0.1:9/v1 OPENAI_API_KEY=sk-upgrade-check CODEX_API_KEY=sk-upgrade-check \
		GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:9 GEMINI_API_KEY=upgrade-check \
		"${env[@]}" timeout -k 5 30 "${argv[@]}" </dev/null >"$out/run.log" 2>&1)
	grep -iE -- "$refusal" "$out/run.log" >"$out/refused.log"
	case $? in
	0)
		note "the audit argv is refused:"
		note "  $(printf '%q ' "${argv[@]}" | cut -c1-300)"
		list "$out/refused.log"
		refused=1
		;;
	1) ;;
	*)
		note "could not read what the audit argv printed ($out/run.log)"
		return 2
		;;
	esac
	return "$refused"
}

for a in "${agents[@]}"; do
	echo
	pinned=$(sed -n 's/^const Version = "\(.*\)"$/\1/p' "$root/${pinfile[$a]}")
	if [[ -z $pinned ]]; then
		echo "$a: no const Version in ${pinfile[$a]}"
		broken=true
		continue
	fi
	if [[ -n ${forced[$a]:-} ]]; then
		newest=${forced[$a]}
		how="forced with --version"
	else
		newest=$(timeout -k 5 60 "$NPM" view "${pkg[$a]}" version 2>"$work/$a-view.log" </dev/null)
		how="newest on the registry"
		if [[ ! $newest =~ ^[0-9A-Za-z][0-9A-Za-z.+-]*$ ]]; then
			echo "$a: pinned $pinned; npm view ${pkg[$a]} version failed:"
			list "$work/$a-view.log"
			broken=true
			continue
		fi
	fi
	echo "$a (${pkg[$a]}): pinned $pinned, $how $newest"
	full=true
	if [[ $argv_only == true ]]; then
		note "--argv-only: checking the audit argv against $newest only"
		full=false
	elif [[ $newest == "$pinned" ]]; then
		if [[ $force == true ]]; then
			note "no newer release; --force: running the whole tour against $pinned"
		else
			note "no newer release: checking the stored captures and the audit argv against $pinned"
			full=false
		fi
	fi

	# The binary: the pinned cache's when it holds the pinned release
	# (only read), else an install into the upgrade cache.
	bin=
	if [[ $newest == "$pinned" ]]; then
		pc=${!cacheenv[$a]:-${XDG_CACHE_HOME:-$HOME/.cache}/omega-monitor/${pincache[$a]}}
		[[ -x $pc/$pinned/node_modules/.bin/$a ]] && bin=$pc/$pinned/node_modules/.bin/$a
	fi
	if [[ -z $bin ]] && ! bin=$(install "$a" "$newest"); then
		note "could not install ${pkg[$a]}@$newest: nothing checked"
		broken=true
		continue
	fi
	cache=$(cd "$(dirname "$bin")/../../.." && pwd)

	# The tour: capture every moment with the new release into the scratch
	# copy's golden directory (emptied first, so that only its captures
	# are read), then read each capture.
	agent_differs=false
	if [[ $full == true ]]; then
		rm -f "$tree/${golden[$a]}"/*
		note "the capture tour (at most $tour_minutes minutes): go test -run TestCaptureGolden ${testpkg[$a]} -capture"
		start=$SECONDS
		(cd "$tree" && env "${cacheenv[$a]}=$cache" "${versionenv[$a]}=$newest" \
			timeout -k 30 $((tour_minutes * 60 + 60)) "$GO" test -count=1 -timeout "${tour_minutes}m" \
			-run '^TestCaptureGolden$' "${testpkg[$a]}" -capture -v >"$work/$a-capture.log" 2>&1)
		rc=$?
		note "  took $((SECONDS - start)) s, exit $rc; $(find "$tree/${golden[$a]}" -name '*.pane' | wc -l) captures"
		capture_fails "$work/$a-capture.log" "$work/$a-capture.fails"
		if ((rc != 0)) || grep -q DISAGREEMENT "$work/$a-capture.fails"; then
			note "the tour did not go as it does with $pinned (moments that never showed, readings that differ):"
			list "$work/$a-capture.fails"
			agent_differs=true
		fi
	fi
	if [[ $argv_only != true ]]; then
		rc=0
		(cd "$tree" && timeout -k 10 600 "$GO" test -count=1 -run '^TestRealGolden$' "${testpkg[$a]}" -v >"$work/$a-golden.log" 2>&1) || rc=$?
		golden_fails "$work/$a-golden.log" "$work/$a-golden.fails"
		if ((rc == 0)); then
			note "every capture reads as the tour meant ($(grep -c -- '--- PASS: TestRealGolden/' "$work/$a-golden.log") cases)"
		elif [[ ! -s $work/$a-golden.fails ]]; then
			note "go test -run TestRealGolden ${testpkg[$a]} did not run:"
			list "$work/$a-golden.log"
			broken=true
		else
			note "screens that read differently from what the tour made $a $newest do ($(grep -c -- '--- FAIL' "$work/$a-golden.fails") failing):"
			list "$work/$a-golden.fails"
			agent_differs=true
		fi
	fi

	rc=3
	[[ -z ${auditor[$a]:-} ]] || { argv_check "$a" "$bin" && rc=0 || rc=$?; }
	case $rc in
	3) ;;
	0) note "every flag of the audit argv is accepted" ;;
	1) agent_differs=true ;;
	*) broken=true ;;
	esac

	if [[ $e2e == true ]]; then
		note "the real-agent end-to-end tests: go test -run '${e2eruns[$a]}' ./cmd/omega-monitor/"
		if ! (cd "$tree" && env "${cacheenv[$a]}=$cache" "${versionenv[$a]}=$newest" \
			timeout -k 30 $((tour_minutes * 60 + 60)) "$GO" test -count=1 -timeout "${tour_minutes}m" \
			-run "${e2eruns[$a]}" ./cmd/omega-monitor/ -v >"$work/$a-e2e.log" 2>&1); then
			grep -E '^\s*--- FAIL|^\s+\S+\.go:[0-9]+: |^panic:|test timed out' "$work/$a-e2e.log" | sed -E 's/^\s+//' >"$work/$a-e2e.fails"
			note "end-to-end failures:"
			list "$work/$a-e2e.fails"
			agent_differs=true
		fi
	fi
	if [[ $agent_differs == true ]]; then
		differs=true
		echo "$a $newest: DIFFERS from $pinned (see above; logs in $work)"
	else
		echo "$a $newest: reads the same as $pinned"
	fi
done

echo
if [[ $differs == true ]]; then
	echo "something differs: see docs/credibility.md, When an agent ships a release"
	exit 1
fi
if [[ $broken == true ]]; then
	echo "some check could not run"
	exit 3
fi
echo "every screen reads the same and every flag is accepted"
exit 0
}
