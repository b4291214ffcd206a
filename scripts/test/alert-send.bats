#!/usr/bin/env bats
# Unit tests for scripts/omega-alert-send.sh: its functions, sourced, with a
# curl function standing in for the network. The end-to-end tests, against a
# fake Bot API with real curl, are in alert/send_test.go.

setup() {
	SCRIPT="$BATS_TEST_DIRNAME/../omega-alert-send.sh"
	# shellcheck source-path=SCRIPTDIR source=../omega-alert-send.sh disable=SC1091
	source "$SCRIPT"
	export HOME="$BATS_TEST_TMPDIR/home"
	mkdir -p "$HOME/.omega"
	CONF="$HOME/.omega/telegram.conf"
	printf 'bot_token=123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0\nchat_id=42\n' >"$CONF"
	chmod 600 "$CONF"
	unset OMEGA_TELEGRAM_CONF OMEGA_TELEGRAM_API OMEGA_MONITOR_HOME
	export OMEGA_ALERT_BACKOFF=0
}

@test "no argument: usage, exit 2" {
	run bash "$SCRIPT"
	[ "$status" -eq 2 ]
	[[ $output == "usage: omega-alert-send "* ]]
}

@test "an empty argument: usage, exit 2" {
	run bash "$SCRIPT" ok ""
	[ "$status" -eq 2 ]
}

@test "--stdin with nothing on standard input, or with more arguments: exit 2" {
	run bash "$SCRIPT" --stdin </dev/null
	[ "$status" -eq 2 ]
	[[ $output == *"no message on standard input"* ]]
	run bash "$SCRIPT" --stdin extra <<<'x'
	[ "$status" -eq 2 ]
	[[ $output == "usage: omega-alert-send "* ]]
	run bash "$SCRIPT" --document "$SCRIPT" --stdin </dev/null
	[ "$status" -eq 2 ]
}

@test "read_conf takes key=value lines, comments, spaces, quotes and CRLF" {
	printf '# bot\n\n  bot_token = "1:abc_DEF-9"\r\nchat_id=-100123\nother=x\n' >"$CONF"
	read_conf "$CONF"
	[ "$bot_token" = "1:abc_DEF-9" ]
	# shellcheck disable=SC2154 # read_conf sets it
	[ "$chat_id" = "-100123" ]
}

@test "read_conf executes nothing" {
	# shellcheck disable=SC2016 # the $( ) is the point: it must stay text.
	printf 'bot_token=$(touch %s/pwned)\nchat_id=1\n' "$BATS_TEST_TMPDIR" >"$CONF"
	run read_conf "$CONF"
	[ "$status" -eq 1 ]
	[ ! -e "$BATS_TEST_TMPDIR/pwned" ]
}

@test "read_conf refuses an example's placeholder token, whatever its spelling" {
	for token in 123456789:AAH-replace-with-your-token 123456789:AAH-your-token-from-BotFather \
		1:AA... 1:YOUR_TOKEN 1:example-token; do
		printf 'bot_token=%s\nchat_id=1\n' "$token" >"$CONF"
		run read_conf "$CONF"
		[ "$status" -eq 1 ]
		[[ $output == *"placeholder"* ]]
	done
}

@test "read_conf takes a channel name" {
	printf 'bot_token=1:abc\nchat_id=@ops_alerts\n' >"$CONF"
	read_conf "$CONF"
	[ "$chat_id" = "@ops_alerts" ]
}

@test "check_conf refuses a world-readable config and names the fix" {
	chmod 644 "$CONF"
	run check_conf "$CONF"
	[ "$status" -eq 1 ]
	[[ $output == *"chmod 600 $CONF"* ]]
}

@test "check_conf accepts 0600 and 0400" {
	check_conf "$CONF"
	chmod 400 "$CONF"
	check_conf "$CONF"
}

@test "json_number and json_string read a Bot API answer" {
	body='{"ok":false,"error_code":429,"description":"Too Many Requests: retry after 7","parameters":{"retry_after": 7}}'
	[ "$(json_number "$body" retry_after)" = 7 ]
	[ "$(json_string "$body" description)" = "Too Many Requests: retry after 7" ]
	[ -z "$(json_number '{"ok":true}' retry_after)" ]
}

@test "plain_text strips tags and unescapes" {
	printf '<b>x</b> &lt;a&gt; &amp;lt; &quot;q&quot;' >"$BATS_TEST_TMPDIR/m"
	[ "$(plain_text "$BATS_TEST_TMPDIR/m")" = 'x <a> &lt; "q"' ]
}

@test "scrub masks the token" {
	bot_token=1:secretpart
	[ "$(scrub "curl: bad URL https://x/bot1:secretpart/send")" = "curl: bad URL https://x/bot[redacted]/send" ]
}

@test "uint keeps whole numbers and defaults the rest" {
	[ "$(uint 7 5)" = 7 ]
	[ "$(uint 007 5)" = 7 ]
	[ "$(uint '' 5)" = 5 ]
	[ "$(uint 1.5 5)" = 5 ]
	[ "$(uint '-1' 5)" = 5 ]
}

@test "api_base refuses what is not a plain http(s) address" {
	OMEGA_TELEGRAM_API='https://api.example.org/' run api_base
	[ "$output" = https://api.example.org ]
	OMEGA_TELEGRAM_API='https://x" -o /etc/passwd' run api_base
	[ "$status" -eq 1 ]
	OMEGA_TELEGRAM_API='file:///etc/passwd' run api_base
	[ "$status" -eq 1 ]
}

@test "api_base refuses plain http to another machine, and takes it to this one" {
	for api in http://api.telegram.org http://10.0.0.7:8080/ http://127.0.0.1.evil.example/ http://localhost.evil.example http://127.0.0.1:9@evil.example/; do
		OMEGA_TELEGRAM_API=$api run api_base
		[ "$status" -eq 1 ]
		[[ $output == *"in clear"* ]]
	done
	for api in http://127.0.0.1:9 http://localhost:8080/ 'http://[::1]:80' https://api.telegram.org; do
		OMEGA_TELEGRAM_API=$api run api_base
		[ "$status" -eq 0 ]
		[ "$output" = "${api%/}" ]
	done
}

# curl stands in for the network: it answers from ANSWERS, one per call,
# and records its arguments, the config it read on stdin, and the text it
# was to read from a file.
curl() {
	local out='' n
	printf '%s\n' "$@" >>"$BATS_TEST_TMPDIR/argv"
	while (($#)); do
		case $1 in
		--output)
			out=$2
			shift
			;;
		--data-urlencode)
			if [[ $2 == text@* ]]; then
				cat -- "${2#text@}" >>"$BATS_TEST_TMPDIR/text"
			fi
			if [[ $2 == reply_markup@* ]]; then
				cat -- "${2#reply_markup@}" >>"$BATS_TEST_TMPDIR/markup"
			fi
			shift
			;;
		esac
		shift
	done
	local config caption
	config=$(cat)
	printf '%s\n' "$config" >>"$BATS_TEST_TMPDIR/stdin"
	caption=$(sed -n 's/^form = "caption=<\(.*\)"$/\1/p' <<<"$config")
	if [[ -n $caption ]]; then
		cat -- "$caption" >>"$BATS_TEST_TMPDIR/text"
	fi
	n=$(($(cat "$BATS_TEST_TMPDIR/calls" 2>/dev/null || echo 0) + 1))
	echo "$n" >"$BATS_TEST_TMPDIR/calls"
	read -r code body < <(sed -n "${n}p" "$BATS_TEST_TMPDIR/answers")
	printf '%s' "$body" >"$out"
	printf '%s' "$code"
}

@test "main retries a 5xx and succeeds" {
	printf '500 {"ok":false}\n200 {"ok":true}\n' >"$BATS_TEST_TMPDIR/answers"
	run main '<b>hi</b>'
	[ "$status" -eq 0 ]
	[ "$(cat "$BATS_TEST_TMPDIR/calls")" = 2 ]
	grep -q 'url = ".*/bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0/sendMessage"' "$BATS_TEST_TMPDIR/stdin"
	[[ $output != *AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0* ]]
}

@test "main --stdin sends standard input, whole, and puts it on no command line" {
	printf '200 {"ok":true}\n' >"$BATS_TEST_TMPDIR/answers"
	printf '<b>secret</b> hunter2\n\nlast line\n\n' >"$BATS_TEST_TMPDIR/msg"
	run main --stdin <"$BATS_TEST_TMPDIR/msg"
	[ "$status" -eq 0 ]
	cmp "$BATS_TEST_TMPDIR/msg" "$BATS_TEST_TMPDIR/text"
	[ "$(grep -c hunter2 "$BATS_TEST_TMPDIR/argv")" = 0 ]
	grep -qx 'text@.*/text' "$BATS_TEST_TMPDIR/argv"
}

@test "main --stdin keeps the message in the failed log when it gives up" {
	printf '503 {}\n503 {}\n' >"$BATS_TEST_TMPDIR/answers"
	OMEGA_ALERT_TRIES=2 run main --stdin <<<'<b>lost on stdin</b>'
	[ "$status" -eq 1 ]
	grep -q '<b>lost on stdin</b>' "$HOME/.omega/monitor/alert-failed.log"
}

@test "main with OMEGA_ALERT_TEST=1 says what was not sent and logs nothing" {
	printf '503 {}\n503 {}\n' >"$BATS_TEST_TMPDIR/answers"
	OMEGA_ALERT_TEST=1 OMEGA_ALERT_TRIES=2 run main --stdin <<<'<b>a test</b>'
	[ "$status" -eq 1 ]
	[[ $output == *"not sent"* ]]
	[ ! -e "$HOME/.omega/monitor/alert-failed.log" ]
}

@test "main gives up after OMEGA_ALERT_TRIES and logs the message 0600" {
	printf '503 {}\n503 {}\n503 {}\n' >"$BATS_TEST_TMPDIR/answers"
	OMEGA_ALERT_TRIES=2 run main '<b>lost</b>'
	[ "$status" -eq 1 ]
	[ "$(cat "$BATS_TEST_TMPDIR/calls")" = 2 ]
	grep -q '<b>lost</b>' "$HOME/.omega/monitor/alert-failed.log"
	[ "$(file_mode "$HOME/.omega/monitor/alert-failed.log")" = 600 ]
}

@test "document_name keeps only safe characters" {
	[ "$(document_name /a/b/report.md)" = report.md ]
	# shellcheck disable=SC2016 # the $( ) is the point: it must stay text.
	[ "$(document_name 'x/re"port;type=x $(id).md')" = 're_port_type_x___id_.md' ]
	[ "$(document_name 'dir/')" = document.txt ]
	[ "$(document_name '..')" = document.txt ]
}

@test "main --document uploads the file with its caption through sendDocument" {
	printf '# report\n' >"$BATS_TEST_TMPDIR/report.md"
	printf '500 {"ok":false}\n200 {"ok":true}\n' >"$BATS_TEST_TMPDIR/answers"
	run main --document "$BATS_TEST_TMPDIR/report.md" '<b>AUDIT</b>'
	[ "$status" -eq 0 ]
	[ "$(cat "$BATS_TEST_TMPDIR/calls")" = 2 ]
	grep -q 'url = ".*/bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0/sendDocument"' "$BATS_TEST_TMPDIR/stdin"
	grep -q 'form = "document=@.*/doc/report.md"' "$BATS_TEST_TMPDIR/stdin"
	grep -q 'form = "caption=<' "$BATS_TEST_TMPDIR/stdin"
	grep -q 'form-string = "parse_mode=HTML"' "$BATS_TEST_TMPDIR/stdin"
	[ "$(grep -c sendMessage "$BATS_TEST_TMPDIR/stdin")" = 0 ]
	[[ $output != *AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0* ]]
}

@test "main --document FILE --stdin takes the caption from standard input" {
	printf '# report\n' >"$BATS_TEST_TMPDIR/report.md"
	printf '200 {"ok":true}\n' >"$BATS_TEST_TMPDIR/answers"
	run main --document "$BATS_TEST_TMPDIR/report.md" --stdin <<<'<b>AUDIT</b> hunter2'
	[ "$status" -eq 0 ]
	[ "$(cat "$BATS_TEST_TMPDIR/text")" = '<b>AUDIT</b> hunter2' ]
	# curl's config names the caption's file; neither it nor any argument
	# holds the text.
	[ "$(cat "$BATS_TEST_TMPDIR/argv" "$BATS_TEST_TMPDIR/stdin" | grep -c hunter2)" = 0 ]
}

@test "main --document: usage errors exit 2 and send nothing" {
	run main --document
	[ "$status" -eq 2 ]
	run main --document "$BATS_TEST_TMPDIR/missing.md" caption
	[ "$status" -eq 2 ]
	[[ $output == *"is not a readable file"* ]]
	printf 'x' >"$BATS_TEST_TMPDIR/r.md"
	run main --document "$BATS_TEST_TMPDIR/r.md" ''
	[ "$status" -eq 2 ]
	[ ! -e "$BATS_TEST_TMPDIR/calls" ]
}

@test "main --document gives up and logs the caption and the file's path" {
	printf 'x' >"$BATS_TEST_TMPDIR/r.md"
	printf '503 {}\n503 {}\n' >"$BATS_TEST_TMPDIR/answers"
	OMEGA_ALERT_TRIES=2 run main --document "$BATS_TEST_TMPDIR/r.md" '<b>lost report</b>'
	[ "$status" -eq 1 ]
	grep -q '<b>lost report</b>' "$HOME/.omega/monitor/alert-failed.log"
	grep -q "document: $BATS_TEST_TMPDIR/r.md" "$HOME/.omega/monitor/alert-failed.log"
}

# markup FILE: writes an inline keyboard to FILE, mode 0600.
markup() {
	printf '{"inline_keyboard":[[{"text":"Yes","callback_data":"%s"}]]}' "$(printf '1a%.0s' {1..16})" >"$1"
	chmod 600 "$1"
}

@test "main --reply-markup FILE --stdin sends the keyboard from its file, on no command line" {
	printf '200 {"ok":true}\n' >"$BATS_TEST_TMPDIR/answers"
	markup "$BATS_TEST_TMPDIR/kb.json"
	run main --reply-markup "$BATS_TEST_TMPDIR/kb.json" --stdin <<<'<b>QUESTION</b>'
	[ "$status" -eq 0 ]
	cmp "$BATS_TEST_TMPDIR/kb.json" "$BATS_TEST_TMPDIR/markup"
	[ "$(cat "$BATS_TEST_TMPDIR/text")" = '<b>QUESTION</b>' ]
	grep -qx 'reply_markup@.*/markup' "$BATS_TEST_TMPDIR/argv"
	run grep -q 1a1a1a "$BATS_TEST_TMPDIR/argv" "$BATS_TEST_TMPDIR/stdin"
	[ "$status" -eq 1 ]
}

@test "main --reply-markup refuses a keyboard file open to others, and sends the message without it" {
	printf '200 {"ok":true}\n' >"$BATS_TEST_TMPDIR/answers"
	markup "$BATS_TEST_TMPDIR/kb.json"
	chmod 644 "$BATS_TEST_TMPDIR/kb.json"
	run main --reply-markup "$BATS_TEST_TMPDIR/kb.json" --stdin <<<'<b>QUESTION</b>'
	[ "$status" -eq 0 ]
	[[ $output == *"open to other users"* && $output == *"without its buttons"* ]]
	[ ! -e "$BATS_TEST_TMPDIR/markup" ]
	[ "$(cat "$BATS_TEST_TMPDIR/text")" = '<b>QUESTION</b>' ]
}

@test "check_markup refuses a link, what is no JSON object, and a big file" {
	markup "$BATS_TEST_TMPDIR/kb.json"
	check_markup "$BATS_TEST_TMPDIR/kb.json"
	ln -s "$BATS_TEST_TMPDIR/kb.json" "$BATS_TEST_TMPDIR/link.json"
	run check_markup "$BATS_TEST_TMPDIR/link.json"
	[ "$status" -eq 1 ]
	printf '[1]' >"$BATS_TEST_TMPDIR/arr.json"
	chmod 600 "$BATS_TEST_TMPDIR/arr.json"
	run check_markup "$BATS_TEST_TMPDIR/arr.json"
	[ "$status" -eq 1 ]
	[[ $output == *"does not hold a JSON object"* ]]
	head -c 10241 /dev/zero | tr '\0' '{' >"$BATS_TEST_TMPDIR/big.json"
	chmod 600 "$BATS_TEST_TMPDIR/big.json"
	run check_markup "$BATS_TEST_TMPDIR/big.json"
	[ "$status" -eq 1 ]
	[[ $output == *"more than 10 KB"* ]]
}

@test "main sends again without the buttons when Telegram refuses them" {
	printf '400 {"ok":false,"error_code":400,"description":"Bad Request: can'"'"'t parse reply markup JSON object"}\n200 {"ok":true}\n' >"$BATS_TEST_TMPDIR/answers"
	markup "$BATS_TEST_TMPDIR/kb.json"
	run main --reply-markup "$BATS_TEST_TMPDIR/kb.json" --stdin <<<'<b>QUESTION</b>'
	[ "$status" -eq 0 ]
	[ "$(cat "$BATS_TEST_TMPDIR/calls")" = 2 ]
	[ "$(grep -c '^reply_markup@' "$BATS_TEST_TMPDIR/argv")" = 1 ]
	[[ $output == *"sending the message without them"* ]]
}

@test "main --reply-markup: usage errors exit 2 and send nothing" {
	markup "$BATS_TEST_TMPDIR/kb.json"
	run main --reply-markup
	[ "$status" -eq 2 ]
	run main --reply-markup "$BATS_TEST_TMPDIR/kb.json" one two
	[ "$status" -eq 2 ]
	run main --reply-markup "$BATS_TEST_TMPDIR/kb.json" --document "$BATS_TEST_TMPDIR/kb.json" cap
	[ "$status" -eq 2 ]
	[ ! -e "$BATS_TEST_TMPDIR/calls" ]
}

@test "main --reply-markup names the message it sent on standard output, and only that" {
	printf '200 {"ok":true,"result":{"message_id":77,"from":{"id":5,"is_bot":true},"chat":{"id":-100123,"type":"supergroup"},"date":1,"text":"x \\"chat\\":{\\"id\\":9} \\"message_id\\":3"}}\n' >"$BATS_TEST_TMPDIR/answers"
	markup "$BATS_TEST_TMPDIR/kb.json"
	main --reply-markup "$BATS_TEST_TMPDIR/kb.json" --stdin <<<'<b>QUESTION</b>' >"$BATS_TEST_TMPDIR/out" 2>"$BATS_TEST_TMPDIR/err"
	[ "$(cat "$BATS_TEST_TMPDIR/out")" = 'message_id=77 chat_id=-100123' ]
}

@test "main names no message sent without buttons, nor one whose answer lacks an id" {
	printf '200 {"ok":true,"result":{"message_id":77,"chat":{"id":42,"type":"private"}}}\n' >"$BATS_TEST_TMPDIR/answers"
	main --stdin <<<'<b>no buttons</b>' >"$BATS_TEST_TMPDIR/out" 2>/dev/null
	[ ! -s "$BATS_TEST_TMPDIR/out" ]
	rm -f "$BATS_TEST_TMPDIR/calls"
	markup "$BATS_TEST_TMPDIR/kb.json"
	for answer in '{"ok":true}' '{"ok":true,"result":{"message_id":77}}' '{"ok":true,"result":{"message_id":0,"chat":{"id":42}}}' \
		'{"ok":true,"result":{"message_id":77,"chat":{"type":"private","id":42}}}' '{"ok":true,"result":{"message_id":"77; rm -rf /","chat":{"id":42}}}'; do
		printf '200 %s\n' "$answer" >"$BATS_TEST_TMPDIR/answers"
		rm -f "$BATS_TEST_TMPDIR/calls"
		main --reply-markup "$BATS_TEST_TMPDIR/kb.json" --stdin <<<'<b>QUESTION</b>' >"$BATS_TEST_TMPDIR/out" 2>/dev/null
		[ ! -s "$BATS_TEST_TMPDIR/out" ]
	done
}

@test "main names no message whose buttons Telegram refused" {
	printf '400 {"ok":false,"error_code":400,"description":"Bad Request: can'"'"'t parse reply markup JSON object"}\n200 {"ok":true,"result":{"message_id":78,"chat":{"id":42,"type":"private"}}}\n' >"$BATS_TEST_TMPDIR/answers"
	markup "$BATS_TEST_TMPDIR/kb.json"
	main --reply-markup "$BATS_TEST_TMPDIR/kb.json" --stdin <<<'<b>QUESTION</b>' >"$BATS_TEST_TMPDIR/out" 2>/dev/null
	[ ! -s "$BATS_TEST_TMPDIR/out" ]
	[ "$(cat "$BATS_TEST_TMPDIR/calls")" = 2 ]
}
