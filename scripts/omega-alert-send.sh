#!/usr/bin/env bash
# omega-alert-send.sh: the alert funnel. It sends a message in Telegram's HTML
# parse mode to the operator's chat with the Bot API's sendMessage. It
# delivers; it decides nothing (the Go side renders, escapes and redacts the
# messages).
#
#   omega-alert-send.sh --stdin                    < message
#   omega-alert-send.sh --reply-markup FILE --stdin < message
#   omega-alert-send.sh --document FILE --stdin    < caption
#   omega-alert-send.sh "<html>" ["<html>" ...]
#   omega-alert-send.sh --document FILE "<html caption>"
#
# --stdin takes the message (or the caption) from standard input, read to its
# end: it is how omega-monitor calls every funnel, so that no alert, with
# the screen lines it quotes, is on a command line, which every user of the
# machine reads (ps, /proc/PID/cmdline). The message as an argument, or
# several, one message each, sent in order, is kept for a person or a script
# whose text is not private.
#
# --reply-markup FILE sends the one message with FILE as sendMessage's
# reply_markup: an inline keyboard's JSON object (the buttons of a relayed
# question), in a file of yours, mode 0600, of at most 10 KB. curl reads it
# from the file: its callback data is on no command line. A file that is
# refused, or a keyboard Telegram refuses, costs the message its buttons,
# never the message: it is sent without them, and the script says so. A
# message sent with its buttons is named on standard output, in one line,
# `message_id=N chat_id=C` (Telegram's ids), and nothing else is printed
# there: the watcher records it, to have the buttons removed when the
# question leaves the screen. A funnel of your own that prints no such line
# leaves them until they are tapped (and a tap is then refused).
#
# The document mode sends FILE as one message with the caption (Telegram's
# limit: 1024 characters once parsed) through sendDocument, as a multipart
# upload named after FILE; what could not be sent is logged as the caption
# and the file's path. The same config, retries and log serve both modes.
#
# Installed as ~/.omega/bin/omega-alert-send.sh. The bot token and the chat id
# come from $OMEGA_TELEGRAM_CONF (default ~/.omega/telegram.conf), a file of
# key=value lines, owned by you and mode 0600:
#
#   bot_token=123456789:AA...
#   chat_id=987654321   (a private chat; a group's or a channel's is negative)
#
# Neither the token nor the message reaches a command line (curl reads its
# URL from a config on its stdin, the text from a file of a private temporary
# directory), and the token is never printed. 429 and 5xx answers, and network errors, are retried with
# backoff (a 429's retry_after is honoured) within a bound; a message that
# cannot be sent is appended to $OMEGA_MONITOR_HOME/alert-failed.log
# (default ~/.omega/monitor, mode 0600).
#
# Environment: OMEGA_TELEGRAM_API (default https://api.telegram.org),
# OMEGA_ALERT_TRIES (5 requests per message), OMEGA_ALERT_DEADLINE (120 s per
# message), OMEGA_ALERT_BACKOFF (2 s, doubled on each retry),
# OMEGA_ALERT_TIMEOUT (20 s per request), OMEGA_ALERT_TEST (1 for a test
# alert: one not sent is said, not logged), OMEGA_ALERT_QUEUED (1 when the
# caller keeps the message and tries again: one not sent is said, not
# logged).
#
# Exit status: 0 sent, 1 not sent (and logged), 2 usage.

PROG=omega-alert-send
tmp='' # the temporary directory of one run, removed on exit

say() { printf '%s: %s\n' "$PROG" "$*" >&2; }

usage() {
	printf 'usage: %s --stdin  < message\n' "$PROG" >&2
	printf '       %s --reply-markup FILE --stdin  < message\n' "$PROG" >&2
	printf '       %s --document FILE --stdin  < caption\n' "$PROG" >&2
	printf '       %s "<html>" ["<html>" ...]\n' "$PROG" >&2
	printf '       %s --document FILE "<html caption>"\n' "$PROG" >&2
	printf '  sends each message to Telegram (sendMessage, parse_mode=HTML);\n' >&2
	printf '  --stdin reads it from standard input, off the command line that ps shows;\n' >&2
	printf '  config: %s (bot_token=..., chat_id=..., mode 0600)\n' "$(conf_path)" >&2
}

conf_path() { printf '%s\n' "${OMEGA_TELEGRAM_CONF:-$HOME/.omega/telegram.conf}"; }

failed_log() { printf '%s\n' "${OMEGA_MONITOR_HOME:-$HOME/.omega/monitor}/alert-failed.log"; }

# uint VALUE DEFAULT: VALUE when it is a whole number, else DEFAULT.
uint() {
	if [[ $1 =~ ^[0-9]+$ ]]; then printf '%s\n' "$((10#$1))"; else printf '%s\n' "$2"; fi
}

# file_mode FILE: the permission bits in octal of FILE, or of the file it
# links to (GNU stat, then BSD stat).
file_mode() {
	stat -L -c '%a' -- "$1" 2>/dev/null || stat -L -f '%Lp' -- "$1" 2>/dev/null
}

# link_target FILE: the file a symlink FILE resolves to, as a path.
link_target() {
	readlink -f -- "$1" 2>/dev/null || readlink -- "$1" 2>/dev/null || printf '%s\n' "$1"
}

# check_conf FILE: refuses a config that others could read or change. A
# symlink is allowed: the file it resolves to is what is checked, and what
# the advice names (a chmod on the link would change the target anyway, and a
# link to a file that is not yours cannot be fixed by any chmod).
check_conf() {
	local f=$1 mode real=$1 via=''
	if [[ -L $f ]]; then
		real=$(link_target "$f")
		via=" (a symlink to $real)"
	fi
	if [[ ! -e $f ]]; then
		if [[ -n $via ]]; then
			say "$f$via points at nothing: make it point at your config, or replace it with the file itself (bot_token=... and chat_id=... lines, mode 600)"
		else
			say "no config at $f: create it with bot_token=... and chat_id=... lines, then chmod 600 $f"
		fi
		return 1
	fi
	if [[ ! -f $f || ! -r $f ]]; then
		say "$f$via is not a readable file"
		return 1
	fi
	# A link may lead to a file of the system that happens to be yours (as
	# root, /etc/passwd is): no advice may be to chmod that. Links are for a
	# config kept elsewhere in your own home.
	local home_real
	home_real=$(cd -- "${HOME:-/}" 2>/dev/null && pwd -P) || home_real=${HOME:-}
	if [[ -n $via && -n ${HOME:-} && $real != "$HOME"/* && $real != "$home_real"/* ]]; then
		say "$f$via leads outside your home ($HOME); the bot token belongs in a file of your own: point the link at one in your home, mode 600, or set OMEGA_TELEGRAM_CONF to one"
		return 1
	fi
	if [[ ! -O $f ]]; then
		if [[ -n $via ]]; then
			say "$f$via: $real is not owned by you ($(id -un)) and it would hold the bot token; point the link at a config file of your own, mode 600, or set OMEGA_TELEGRAM_CONF to one"
		else
			say "$f is not owned by you ($(id -un)): it holds the bot token; recreate it as yourself, then chmod 600 $f"
		fi
		return 1
	fi
	mode=$(file_mode "$f")
	if [[ ! $mode =~ ^[0-7]+$ ]]; then
		say "cannot read the mode of $f$via"
		return 1
	fi
	if (((8#$mode & 8#077) != 0)); then
		say "$f$via is mode $mode, open to other users, and it holds the bot token; fix it with: chmod 600 $real"
		return 1
	fi
}

# check_markup FILE: refuses a reply markup file that is not a regular file
# of yours, mode 0600 (others could plant buttons under an alert), larger
# than 10 KB, or not a JSON object; says why.
check_markup() {
	local f=$1 mode size
	if [[ -L $f || ! -f $f || ! -r $f ]]; then
		say "--reply-markup: $f is not a readable regular file"
		return 1
	fi
	if [[ ! -O $f ]]; then
		say "--reply-markup: $f is not owned by you ($(id -un))"
		return 1
	fi
	mode=$(file_mode "$f")
	if [[ ! $mode =~ ^[0-7]+$ ]] || (((8#$mode & 8#077) != 0)); then
		say "--reply-markup: $f is mode ${mode:-unknown}, open to other users; it must be 600"
		return 1
	fi
	size=$(wc -c <"$f")
	if ((size > 10240)); then
		say "--reply-markup: $f is $((size)) bytes, more than 10 KB"
		return 1
	fi
	if ! LC_ALL=C grep -q '^[[:space:]]*{' "$f"; then
		say "--reply-markup: $f does not hold a JSON object"
		return 1
	fi
}

# read_conf FILE: sets bot_token and chat_id from key=value lines. Nothing in
# the file is executed.
read_conf() {
	local line key value
	bot_token='' chat_id=''
	while IFS= read -r line || [[ -n $line ]]; do
		line=${line%$'\r'}
		[[ $line =~ ^[[:space:]]*(#|$) ]] && continue
		[[ $line == *=* ]] || continue
		key=${line%%=*} value=${line#*=}
		key=${key//[[:space:]]/}
		value=${value#"${value%%[![:space:]]*}"}
		value=${value%"${value##*[![:space:]]}"}
		if [[ $value =~ ^\"(.*)\"$ || $value =~ ^\'(.*)\'$ ]]; then
			value=${BASH_REMATCH[1]}
		fi
		case $key in
		bot_token) bot_token=$value ;;
		chat_id) chat_id=$value ;;
		esac
	done <"$1"
	# An example's token (the README's, this script's) is not a token: sent,
	# it would be a 401 after every retry, said only at the end.
	case ${bot_token,,} in
	*replace* | *your* | *botfather* | *example* | *...*)
		say "$1: bot_token is the example's placeholder, not a token: put the token @BotFather gave your bot"
		return 1
		;;
	esac
	if [[ ! $bot_token =~ ^[0-9]+:[A-Za-z0-9_-]+$ ]]; then
		say "$1: bot_token is missing or not a bot token (123456789:AA...)"
		return 1
	fi
	if [[ ! $chat_id =~ ^-?[0-9]+$ && ! $chat_id =~ ^@[A-Za-z0-9_]+$ ]]; then
		say "$1: chat_id is missing or not a chat id (a number, or @channelname)"
		return 1
	fi
	set_token_forms
}

# api_base: OMEGA_TELEGRAM_API without a trailing slash; or it says why
# not and fails, when it is not a plain http(s) address, or is plain http to
# a host other than this machine (the bot token is in every URL).
api_base() {
	local api=${OMEGA_TELEGRAM_API:-https://api.telegram.org}
	api=${api%/}
	if [[ ! $api =~ ^https?://[^[:space:]\"\\]+$ ]]; then
		say "OMEGA_TELEGRAM_API is not an http(s) address"
		return 1
	fi
	if [[ $api == http://* && ! $api =~ ^http://(localhost|127\.[0-9.]+|\[::1\])(:[0-9]+)?(/|$) ]]; then
		say "OMEGA_TELEGRAM_API is plain http to another machine: the bot token would cross the network in clear; use https"
		return 1
	fi
	printf '%s\n' "$api"
}

# token_forms are the forms a server may echo the bot token in: as written,
# URL-escaped (its colon as %3A or %3a), its secret half alone, and in base64
# of either alphabet, with and without padding; set_token_forms sets them
# once the config is read.
token_forms=()
set_token_forms() {
	local half=${bot_token#*:} b64
	token_forms=("$bot_token" "${bot_token//:/%3A}" "${bot_token//:/%3a}")
	if command -v base64 >/dev/null 2>&1; then
		b64=$(printf '%s' "$bot_token" | base64 | tr -d '\n')
		token_forms+=("$b64" "${b64%%=*}")
		b64=$(printf '%s' "$b64" | tr '+/' '-_')
		token_forms+=("$b64" "${b64%%=*}")
	fi
	# A half as short as a word would mask words: Telegram's are 35.
	((${#half} < 16)) || token_forms+=("$half")
}

# scrub TEXT: what may be said or logged of TEXT, which a server may have
# written: one line of at most 400 characters, with no control character,
# no invisible or reordering one, and no form of the bot token. The line
# breaks and controls go first, so that none inside the token hides it.
scrub() {
	local s=${1:0:4000} c f
	s=${s//[$'\r\n\t\v\f']/ }
	s=${s//[[:cntrl:]]/}
	# Line and paragraph separators are line breaks too; the others
	# (zero-width, bidi overrides and isolates, BOM) draw nothing.
	for c in $'\xe2\x80\xa8' $'\xe2\x80\xa9'; do
		s=${s//"$c"/ }
	done
	for c in $'\xe2\x80\x8b' $'\xe2\x80\x8c' $'\xe2\x80\x8d' $'\xe2\x80\x8e' $'\xe2\x80\x8f' \
		$'\xe2\x80\xaa' $'\xe2\x80\xab' $'\xe2\x80\xac' $'\xe2\x80\xad' $'\xe2\x80\xae' \
		$'\xe2\x81\xa6' $'\xe2\x81\xa7' $'\xe2\x81\xa8' $'\xe2\x81\xa9' $'\xef\xbb\xbf' $'\xc2\x85'; do
		s=${s//"$c"/}
	done
	if [[ -n ${bot_token:-} && ${#token_forms[@]} -eq 0 ]]; then
		set_token_forms
	fi
	for f in ${token_forms[@]+"${token_forms[@]}"}; do
		s=${s//"$f"/[redacted]}
	done
	((${#s} <= 400)) || s="${s:0:400}…"
	printf '%s\n' "$s"
}

# json_number BODY KEY / json_string BODY KEY: a field of a flat JSON answer,
# read without jq.
json_number() {
	printf '%s' "$1" | tr -d '\n' | grep -o "\"$2\"[[:space:]]*:[[:space:]]*[0-9][0-9]*" | head -n 1 | sed 's/.*:[[:space:]]*//'
}
json_string() {
	printf '%s' "$1" | tr -d '\n' | grep -o "\"$2\"[[:space:]]*:[[:space:]]*\"[^\"]*\"" | head -n 1 | sed 's/^[^:]*:[[:space:]]*"//; s/"$//'
}

# report_sent: the line that names the message just sent (Telegram's answer
# in body), `message_id=N chat_id=C`, on standard output; nothing when the
# answer does not hold both ids. Read without jq, as json_number does: the
# first message_id is the message's own (the text's quotes are escaped, so
# no text can forge one), and the chat's id is the first field of its chat.
report_sent() {
	local id chat
	id=$(json_number "$body" message_id)
	chat=$(printf '%s' "$body" | tr -d '\n' |
		grep -o '"chat"[[:space:]]*:[[:space:]]*{[[:space:]]*"id"[[:space:]]*:[[:space:]]*-\{0,1\}[0-9][0-9]*' |
		head -n 1 | sed 's/.*:[[:space:]]*//')
	if [[ $id =~ ^[1-9][0-9]{0,9}$ && $chat =~ ^-?[1-9][0-9]{0,18}$ ]]; then
		printf 'message_id=%s chat_id=%s\n' "$id" "$chat"
	fi
}

# plain_text FILE: the HTML message as plain text, for when Telegram refuses
# to parse it.
plain_text() {
	sed -e 's/<[^>]*>//g' -e 's/&lt;/</g; s/&gt;/>/g; s/&quot;/"/g; s/&amp;/\&/g' "$1"
}

# post TEXTFILE PARSEMODE SECONDS: one sendMessage request, within SECONDS
# at most. Sets code (the HTTP status, 000 when there was no answer), body and
# err.
post() {
	local text=$1 mode=$2 timeout
	timeout=$(uint "${OMEGA_ALERT_TIMEOUT:-}" 20)
	((timeout <= $3)) || timeout=$3
	((timeout >= 1)) || timeout=1
	if [[ -n ${document:-} ]]; then
		post_document "$text" "$mode" "$timeout"
		return
	fi
	local buttons=()
	if [[ -n ${markup:-} ]]; then
		buttons=(--data-urlencode "reply_markup@$markup")
	fi
	: >"$tmp/body"
	{
		printf 'url = "%s/bot%s/sendMessage"\n' "$api" "$bot_token"
		printf 'data-urlencode = "chat_id=%s"\n' "$chat_id"
		if [[ -n $mode ]]; then
			printf 'data-urlencode = "parse_mode=%s"\n' "$mode"
		fi
		printf 'data-urlencode = "disable_web_page_preview=true"\n'
	} | curl --silent --show-error --config - \
		--max-time "$timeout" --connect-timeout 10 \
		--data-urlencode "text@$text" \
		${buttons[@]+"${buttons[@]}"} \
		--output "$tmp/body" --write-out '%{http_code}' \
		>"$tmp/code" 2>"$tmp/err"
	code=$(<"$tmp/code")
	[[ $code =~ ^[0-9]{3}$ ]] || code=000
	body=$(<"$tmp/body")
	err=$(scrub "$(<"$tmp/err")")
}

# document_name FILE: FILE's base name with only safe characters, for the
# upload's file name (it travels inside a curl config line and a header).
document_name() {
	local name=${1##*/}
	name=${name//[^A-Za-z0-9._-]/_}
	[[ -n $name && $name != . && $name != .. ]] || name=document.txt
	printf '%s\n' "$name"
}

# post_document CAPTIONFILE PARSEMODE SECONDS: one sendDocument request, a
# multipart upload of $document with the caption. Sets code, body and err
# as post does.
post_document() {
	local caption=$1 mode=$2 timeout=$3
	: >"$tmp/body"
	{
		printf 'url = "%s/bot%s/sendDocument"\n' "$api" "$bot_token"
		printf 'form-string = "chat_id=%s"\n' "$chat_id"
		if [[ -n $mode ]]; then
			printf 'form-string = "parse_mode=%s"\n' "$mode"
		fi
		printf 'form = "caption=<%s"\n' "$caption"
		printf 'form = "document=@%s"\n' "$tmp/doc/$(document_name "$document")"
	} | curl --silent --show-error --config - \
		--max-time "$timeout" --connect-timeout 10 \
		--output "$tmp/body" --write-out '%{http_code}' \
		>"$tmp/code" 2>"$tmp/err"
	code=$(<"$tmp/code")
	[[ $code =~ ^[0-9]{3}$ ]] || code=000
	body=$(<"$tmp/body")
	err=$(scrub "$(<"$tmp/err")")
}

# send_document FILE CAPTION: sends FILE with CAPTION as one message, within
# the retry bound of send_one. The file is copied first, so that what is
# retried is what was asked for.
send_document() {
	document=$1
	if ! { mkdir -p -- "$tmp/doc" && cp -- "$1" "$tmp/doc/$(document_name "$1")"; }; then
		why="cannot read $1"
		return 1
	fi
	send_one "$2"
}

# log_failed REASON MESSAGE...: appends what could not be sent.
log_failed() {
	local reason=$1 log dir m
	shift
	# A test's failure is said to the one who ran it; kept, it would read
	# as an alert lost. A queued alert (OMEGA_ALERT_QUEUED=1: the
	# watcher's deliverer) is tried again by its caller, which keeps it
	# when it expires.
	if [[ ${OMEGA_ALERT_TEST:-} == 1 || ${OMEGA_ALERT_QUEUED:-} == 1 ]]; then
		return 0
	fi
	log=$(failed_log)
	dir=${log%/*}
	if ! (umask 077 && mkdir -p -- "$dir") || ! (umask 077 && : >>"$log") || ! chmod 600 -- "$log"; then
		say "cannot write $log; the message is lost"
		return 1
	fi
	for m in "$@"; do
		printf -- '--- %s · %s\n%s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$(scrub "$reason")" "$m" >>"$log"
	done
	say "logged what was not sent to $log"
}

# send_one MESSAGE: sends one message within the retry bound. Sets why when
# it gives up.
send_one() {
	local tries max deadline delay pause start mode=HTML desc after
	max=$(uint "${OMEGA_ALERT_TRIES:-}" 5)
	((max >= 1)) || max=1
	deadline=$(uint "${OMEGA_ALERT_DEADLINE:-}" 120)
	delay=$(uint "${OMEGA_ALERT_BACKOFF:-}" 2)
	start=$SECONDS
	printf '%s' "$1" >"$tmp/text"
	for ((tries = 1; ; tries++)); do
		post "$tmp/text" "$mode" $((deadline - (SECONDS - start)))
		desc=$(scrub "$(json_string "$body" description)")
		case $code in
		2??)
			if [[ $body =~ \"ok\"[[:space:]]*:[[:space:]]*true ]]; then
				return 0
			fi
			why="HTTP $code without ok:true${desc:+: $desc}"
			return 1
			;;
		429)
			after=$(json_number "$body" retry_after)
			# An absurd retry_after (more digits than shell arithmetic
			# holds) is capped: the deadline below decides either way.
			if ((${#after} > 6)); then
				after=999999
			fi
			pause=${after:-$delay}
			why="HTTP 429 (too many requests), retry_after ${pause}s"
			;;
		5??)
			pause=$delay
			why="HTTP $code${desc:+: $desc}"
			;;
		000)
			pause=$delay
			why="no answer from the API${err:+: $err}"
			;;
		400)
			if [[ -n ${markup:-} && ($desc == *"reply markup"* || $desc == *"button"* || $desc == *"keyboard"*) ]]; then
				say "Telegram refused the buttons ($desc); sending the message without them"
				markup=''
				pause=0
				why="HTTP 400: $desc"
			elif [[ $mode == HTML && $desc == *"parse entities"* ]]; then
				say "Telegram refused the HTML ($desc); sending it as plain text"
				plain_text "$tmp/text" >"$tmp/plain" && mv -f "$tmp/plain" "$tmp/text"
				mode=''
				pause=0
				why="HTTP 400: $desc"
			else
				why="HTTP 400${desc:+: $desc}"
				# A group made a supergroup has a new id, which Telegram
				# names: said, with where to put it.
				local moved
				moved=$(printf '%s' "$body" | tr -d '\n' | grep -o '"migrate_to_chat_id"[[:space:]]*:[[:space:]]*-[0-9]*' | sed 's/.*:[[:space:]]*//')
				[[ ! $moved =~ ^-[0-9]{1,19}$ ]] || why+=" (the group became a supergroup: set chat_id=$moved in ${conf:-telegram.conf})"
				return 1
			fi
			;;
		401 | 404)
			# Telegram answers 404 for a token it does not know as well
			# as for a wrong address: say both, and what the address is.
			# Never the token: an address that holds a /bot path is cut
			# before it, and said to be wrong.
			why="${api%%/bot*}, to which /bot<token>/sendMessage is added"
			[[ $api != */bot* ]] || why+="; leave the /bot part out of it"
			why="HTTP $code${desc:+: $desc} (a bot token Telegram does not know, or OMEGA_TELEGRAM_API not the Bot API's base address: $why)"
			return 1
			;;
		*)
			why="HTTP $code${desc:+: $desc}"
			return 1
			;;
		esac
		if ((tries >= max)); then
			why="gave up after $tries tries: $why"
			return 1
		fi
		if ((pause > deadline || SECONDS - start + pause > deadline)); then
			why="gave up after $tries tries and $((SECONDS - start))s (the next try would pass ${deadline}s): $why"
			return 1
		fi
		say "try $tries: $why; retrying in ${pause}s"
		sleep "$pause"
		delay=$((delay * 2))
	done
}

# read_stdin: sets msg to all of standard input (NUL bytes aside), or says
# why not and fails when it is empty. A builtin reads it: no child process
# is handed the text.
read_stdin() {
	msg=''
	IFS= read -r -d '' msg
	if [[ -z $msg ]]; then
		say "--stdin: no message on standard input"
		return 1
	fi
}

main() {
	local i api bot_token chat_id code body err why document='' msg markup='' markup_src=''
	if [[ ${1:-} == --reply-markup ]]; then
		# One message, for one keyboard: its buttons answer that message.
		if (($# != 3)) || [[ -z $2 || $3 == --document ]]; then
			usage
			return 2
		fi
		markup_src=$2
		shift 2
	fi
	case ${1:-} in
	-h | --help)
		usage
		return 0
		;;
	--document)
		main_document "${@:2}"
		return
		;;
	--stdin)
		if (($# != 1)); then
			usage
			return 2
		fi
		read_stdin || return 2
		set -- "$msg"
		;;
	esac
	if (($# == 0)); then
		usage
		return 2
	fi
	for i in "$@"; do
		if [[ -z $i ]]; then
			usage
			return 2
		fi
	done
	umask 077
	local conf
	conf=$(conf_path)
	if ! check_conf "$conf" || ! read_conf "$conf"; then
		log_failed "config $conf refused" "$@"
		return 1
	fi
	if ! api=$(api_base); then
		log_failed "OMEGA_TELEGRAM_API refused" "$@"
		return 1
	fi
	if ! tmp=$(mktemp -d "${TMPDIR:-/tmp}/omega-alert.XXXXXX"); then
		say "cannot make a temporary directory"
		log_failed "no temporary directory" "$@"
		return 1
	fi
	trap 'rm -rf -- "$tmp"' EXIT
	if [[ -n $markup_src ]]; then
		# A copy, checked once: what is retried is what was checked.
		if check_markup "$markup_src" && cp -- "$markup_src" "$tmp/markup"; then
			markup=$tmp/markup
		else
			say "sending the message without its buttons"
		fi
	fi
	for ((i = 1; i <= $#; i++)); do
		if ! send_one "${!i}"; then
			say "not sent: $why"
			log_failed "$why" "${@:i}"
			return 1
		fi
	done
	# Sent with its buttons (Telegram took them): which message it is.
	[[ -z $markup ]] || report_sent
	# A test alert says which chat it reached.
	[[ ${OMEGA_ALERT_TEST:-} != 1 ]] || said_chat
	return 0
}

# said_chat: the chat the message just sent reached, as Telegram's answer
# in body names it (its title, @username or first name, and its id), on
# standard error. The chat's object comes before the message's text, whose
# quotes are escaped: nothing the text says is read as the chat's.
said_chat() {
	local chat=${body#*\"chat\"} name id
	[[ $chat != "$body" ]] || return 0
	name=$(json_string "$chat" title)
	if [[ -z $name ]]; then
		name=$(json_string "$chat" username)
		[[ -z $name ]] || name=@$name
	fi
	[[ -n $name ]] || name=$(json_string "$chat" first_name)
	id=$(printf '%s' "$chat" | tr -d '\n' | grep -o '"id"[[:space:]]*:[[:space:]]*-\{0,1\}[0-9][0-9]*' | head -n 1 | sed 's/.*:[[:space:]]*//')
	name=$(scrub "$name")
	say "delivered to the chat ${name:-with no name}${id:+ (id $id)}"
}

# main_document FILE CAPTION: the document mode of main; a CAPTION of
# --stdin is read from standard input.
main_document() {
	local api bot_token chat_id code body err why document='' conf msg
	if (($# != 2)) || [[ -z $1 || -z $2 ]]; then
		usage
		return 2
	fi
	if [[ $2 == --stdin ]]; then
		read_stdin || return 2
		set -- "$1" "$msg"
	fi
	if [[ ! -f $1 || ! -r $1 ]]; then
		say "$1 is not a readable file"
		return 2
	fi
	umask 077
	conf=$(conf_path)
	if ! check_conf "$conf" || ! read_conf "$conf"; then
		log_failed "config $conf refused" "$2"$'\n'"document: $1"
		return 1
	fi
	if ! api=$(api_base); then
		log_failed "OMEGA_TELEGRAM_API refused" "$2"$'\n'"document: $1"
		return 1
	fi
	if ! tmp=$(mktemp -d "${TMPDIR:-/tmp}/omega-alert.XXXXXX"); then
		say "cannot make a temporary directory"
		log_failed "no temporary directory" "$2"$'\n'"document: $1"
		return 1
	fi
	trap 'rm -rf -- "$tmp"' EXIT
	if ! send_document "$1" "$2"; then
		say "not sent: $why"
		log_failed "$why" "$2"$'\n'"document: $1"
		return 1
	fi
	return 0
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
	main "$@"
	exit
fi
