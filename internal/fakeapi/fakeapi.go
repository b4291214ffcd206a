// Package fakeapi is a fake Anthropic Messages API for tests: an HTTP server
// on 127.0.0.1 that answers POST /v1/messages with scripted server-sent event
// streams, so that a real agent (Claude Code) can be driven through every
// state its screen shows: a slow turn, a tool call that asks for permission,
// a question dialog, API errors and their retry loop, a short answer.
//
// Replies are chosen by the text of the last user message in each request,
// through a table of rules (a substring and the reply it brings). Every
// request is recorded, with that text exactly as it arrived, so a test can see
// what reached the model.
//
// It is a test helper, not a model: it does not read the conversation beyond
// the last user message, count tokens or check keys, and it answers the other
// endpoints a client calls at start with something harmless.
package fakeapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// A Rule chooses a reply: the first rule whose Match is a substring of the
// request's last user text answers it. An empty Match matches every text.
type Rule struct {
	Match string
	Reply Reply
}

// A Reply is what the fake model answers.
type Reply struct {
	// Status, when not 0 or 200, answers with that HTTP status and an
	// Anthropic error body of type ErrorType saying ErrorMessage, instead
	// of a stream.
	Status       int
	ErrorType    string
	ErrorMessage string
	// RetryAfter, when positive, is sent as the retry-after header of an
	// error reply, in whole seconds.
	RetryAfter time.Duration
	// Header is sent with an error reply as well: the rate-limit headers
	// a real service sends with its 429 (UsageLimit).
	Header map[string]string
	// ErrorFields are more fields of the error object, as a real service
	// sends them (CodexUsageLimit: the plan, the reset).
	ErrorFields map[string]any

	// Text is streamed as a text block, in Chunks deltas of about equal
	// size (at least one), Delay apart.
	Text   string
	Chunks int
	Delay  time.Duration
	// Tool, when set, follows the text as a tool_use block, and the
	// message stops with stop_reason tool_use instead of end_turn.
	Tool *ToolUse
}

// A ToolUse is a tool call the fake model makes.
type ToolUse struct {
	Name  string
	Input any // marshalled to JSON and streamed as input_json_delta
}

// Text returns a reply streaming text quickly.
func Text(s string) Reply { return Reply{Text: s, Chunks: 3, Delay: 20 * time.Millisecond} }

// Slow returns a reply that streams for about d: words trickle in, one delta
// a second, so the agent shows its spinner for the whole time.
func Slow(d time.Duration) Reply {
	n := max(int(d/time.Second), 1)
	words := make([]string, n)
	for i := range words {
		words[i] = fmt.Sprintf("step%d", i+1)
	}
	return Reply{Text: strings.Join(words, " ") + ".", Chunks: n, Delay: time.Second}
}

// Bash returns a reply calling the Bash tool with command, which a client in
// a prompting permission mode asks the human to approve.
func Bash(command, description string) Reply {
	return Reply{
		Text:   "I will run a command.",
		Chunks: 1,
		Tool:   &ToolUse{Name: "Bash", Input: map[string]any{"command": command, "description": description}},
	}
}

// A Question is one question of an AskUserQuestion call.
type Question struct {
	Question    string   `json:"question"`
	Header      string   `json:"header"`
	MultiSelect bool     `json:"multiSelect"`
	Options     []Option `json:"options"`
}

// An Option is one answer offered by a Question.
type Option struct {
	Label       string `json:"label"`
	Description string `json:"description"`
}

// Ask returns a reply calling the AskUserQuestion tool, which brings the
// client's question dialog.
func Ask(questions ...Question) Reply {
	return Reply{
		Text:   "I have a question.",
		Chunks: 1,
		Tool:   &ToolUse{Name: "AskUserQuestion", Input: map[string]any{"questions": questions}},
	}
}

// Error returns a reply failing with an HTTP status and an Anthropic error
// body.
func Error(status int, typ, message string) Reply {
	return Reply{Status: status, ErrorType: typ, ErrorMessage: message}
}

// UsageLimit is the 429 the service answers when a subscription's limit
// stops the agent: the unified rate-limit headers name the limit that
// bound (claim: "five_hour", "seven_day", "seven_day_opus", ...) and when
// it resets. Claude Code words its limit line from them.
func UsageLimit(claim string, reset time.Time) Reply {
	return Reply{Status: 429, ErrorType: "rate_limit_error", ErrorMessage: "This request would exceed your account's rate limit. Please try again later.",
		Header: map[string]string{
			"anthropic-ratelimit-unified-status":               "rejected",
			"anthropic-ratelimit-unified-representative-claim": claim,
			"anthropic-ratelimit-unified-reset":                strconv.FormatInt(reset.Unix(), 10),
			"anthropic-ratelimit-unified-" + strings.ReplaceAll(strings.ReplaceAll(claim, "five_hour", "5h"), "seven_day", "7d") + "-status": "rejected",
		}}
}

// CodexUsageLimit is the 429 the ChatGPT backend answers Codex CLI when a
// plan's usage limit stops it: the error's type is usage_limit_reached,
// with the plan and when the limit resets (Unix seconds, and seconds from
// now), from which Codex words its "try again at" line.
func CodexUsageLimit(plan string, reset time.Time) Reply {
	return Reply{Status: 429, ErrorType: "usage_limit_reached", ErrorMessage: "The usage limit has been reached",
		ErrorFields: map[string]any{"plan_type": plan, "resets_at": reset.Unix(), "resets_in_seconds": int(time.Until(reset).Seconds())}}
}

// Trigger words the default rules react to. Each is a substring of the user
// text that brings its reply.
const (
	TriggerSlow     = "work slowly"
	TriggerBash     = "run the command"
	TriggerLongBash = "run a long command"
	TriggerAsk      = "ask me"
	TriggerAskMany  = "many questions"
	TriggerError500 = "fail with 500"
	TriggerError429 = "fail with 429"
)

// BashCommand is the command the default Bash rule asks to run. It leaves a
// file named BashMarker in the working directory, so a test can tell whether
// it ran.
const (
	BashMarker  = "omega-bash-ran"
	BashCommand = "touch " + BashMarker
	// LongBashCommand is what the long Bash rule runs: it keeps the agent
	// busy in a tool for a while.
	LongBashCommand = "timeout 25 tail -f /dev/null"
)

// DefaultRules returns the standard script: one rule per trigger word, and a
// short answer for anything else.
func DefaultRules() []Rule {
	return []Rule{
		{TriggerSlow, Slow(90 * time.Second)},
		{TriggerBash, Bash(BashCommand, "Leave a marker file")},
		{TriggerLongBash, Bash(LongBashCommand, "Wait for the build")},
		{TriggerAskMany, Ask(
			Question{
				Question:    "Which outputs should the report include?",
				Header:      "Outputs",
				MultiSelect: true,
				Options: []Option{
					{"Summary", "One line per session."},
					{"Timeline", "Every state change, in order."},
					{"Alerts", "Only what needed a human."},
				},
			},
			Question{
				Question: "Where should the report go?",
				Header:   "Target",
				Options: []Option{
					{"Terminal", "Print it."},
					{"File", "Write report.md."},
				},
			},
		)},
		{TriggerAsk, Ask(Question{
			Question: "Which format should the history use?",
			Header:   "History",
			Options: []Option{
				{"JSON Lines", "One JSON object per line, appended."},
				{"SQLite", "A single database file."},
			},
		})},
		{TriggerError500, Error(http.StatusInternalServerError, "api_error", "Internal server error")},
		{TriggerError429, Reply{
			Status:       http.StatusTooManyRequests,
			ErrorType:    "rate_limit_error",
			ErrorMessage: "Number of request tokens has exceeded your per-minute rate limit",
			RetryAfter:   15 * time.Second,
		}},
		{"", Text("Done: nothing more to do here.")},
	}
}

// A Request is one request the server received.
type Request struct {
	Method, Path string
	// Model, Stream and Tools are read from a messages request's body;
	// Tools counts the tools it offered. A client's side requests (titles,
	// quota checks) offer none.
	Model  string
	Stream bool
	Tools  int
	// Text is the text of the last user message, exactly as it arrived,
	// without the system reminders a client adds as blocks of their own;
	// HasText says there was any. A message carrying only tool results
	// has none.
	Text    string
	HasText bool
	// ToolResult says the last user message carries a tool result;
	// Results holds the text of its tool results (for the Responses API,
	// the outputs of the function calls after the last user input).
	ToolResult bool
	Results    []string
	// Status is the HTTP status the server answered.
	Status int
	Time   time.Time
}

// A Server is a running fake API.
type Server struct {
	// URL is the base URL, for ANTHROPIC_BASE_URL.
	URL string

	srv   *httptest.Server
	rules []Rule
	done  chan struct{}
	once  sync.Once

	mu       sync.Mutex
	requests []Request
	unknown  []string
	nextID   int
	// afterResults are the replies to the next requests that carry only
	// a tool result, in order (AfterResults); then the default.
	afterResults []Reply
	heard        []Heard
}

// A Heard is one request as it arrived, whole: for a test that must know
// everything a client sent (that a secret never left), and with which
// credential.
type Heard struct {
	Method, Path string
	// Credential is what the request's credential headers held:
	// x-api-key, Authorization and x-goog-api-key, in that order, the
	// empty ones left out, joined by a space.
	Credential string
	Header     http.Header
	Body       []byte
}

// hear records each request whole before next answers it.
func (s *Server) hear(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
		r.Body = io.NopCloser(bytes.NewReader(body))
		var cred []string
		for _, h := range []string{"x-api-key", "Authorization", "x-goog-api-key"} {
			if v := r.Header.Get(h); v != "" {
				cred = append(cred, v)
			}
		}
		s.mu.Lock()
		s.heard = append(s.heard, Heard{Method: r.Method, Path: r.URL.RequestURI(), Credential: strings.Join(cred, " "), Header: r.Header.Clone(), Body: body})
		s.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

// Heard returns every request the server received, whole, oldest first.
func (s *Server) Heard() []Heard {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Heard(nil), s.heard...)
}

// AfterResults has the model answer the next requests that carry only a
// tool's result with replies, one each, in order: Bash again, as a model
// that retries the same command does, asks the same question again.
func (s *Server) AfterResults(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.afterResults = append(s.afterResults, replies...)
}

// New starts a fake API on 127.0.0.1 answering by rules (DefaultRules when
// none are given). It is closed when the test ends.
func New(t testing.TB, rules ...Rule) *Server {
	t.Helper()
	s := Start(rules...)
	t.Cleanup(s.Close)
	return s
}

// Start starts a fake API on 127.0.0.1 answering by rules (DefaultRules when
// none are given). The caller closes it.
func Start(rules ...Rule) *Server {
	if len(rules) == 0 {
		rules = DefaultRules()
	}
	s := &Server{rules: rules, done: make(chan struct{})}
	s.srv = httptest.NewUnstartedServer(s.hear(http.HandlerFunc(s.serve)))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic("fakeapi: " + err.Error())
	}
	s.srv.Listener.Close()
	s.srv.Listener = l
	s.srv.Start()
	s.URL = s.srv.URL
	return s
}

// Close ends every stream in progress and stops the server.
func (s *Server) Close() {
	s.once.Do(func() {
		close(s.done)
		s.srv.CloseClientConnections()
		s.srv.Close()
	})
}

// Requests returns every request received so far, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Texts returns the last user text of every messages request that carried
// one and offered tools (the agent's own turns, not its side requests),
// oldest first.
func (s *Server) Texts() []string {
	var out []string
	for _, r := range s.Requests() {
		if r.Path == "/v1/messages" && r.HasText && r.Tools > 0 {
			out = append(out, r.Text)
		}
	}
	return out
}

// Unknown returns the method and path of every request the server had no
// handler for, oldest first.
func (s *Server) Unknown() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.unknown...)
}

func (s *Server) record(r Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, r)
}

func (s *Server) id(prefix string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	return fmt.Sprintf("%s_fake%018d", prefix, s.nextID)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	path := r.URL.Path
	switch {
	case r.Method == http.MethodPost && path == "/v1/messages":
		s.messages(w, r, body)
	case r.Method == http.MethodPost && path == "/v1/messages/count_tokens":
		s.record(Request{Method: r.Method, Path: path, Status: 200, Time: time.Now()})
		writeJSON(w, 200, map[string]any{"input_tokens": 1 + len(body)/4})
	case r.Method == http.MethodGet && strings.HasPrefix(path, "/v1/models"):
		s.record(Request{Method: r.Method, Path: path, Status: 200, Time: time.Now()})
		writeJSON(w, 200, map[string]any{"data": []any{}, "has_more": false, "first_id": nil, "last_id": nil})
	default:
		s.mu.Lock()
		s.unknown = append(s.unknown, r.Method+" "+path)
		s.mu.Unlock()
		s.record(Request{Method: r.Method, Path: path, Status: 404, Time: time.Now()})
		writeJSON(w, 404, errorBody("not_found_error", "fakeapi: no such endpoint: "+path))
	}
}

// messagesRequest is the part of a messages request the server reads.
type messagesRequest struct {
	Model    string            `json:"model"`
	Stream   bool              `json:"stream"`
	Tools    []json.RawMessage `json:"tools"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

type block struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// systemReminder starts the text blocks a client adds to a user message for
// the model's eyes only.
const systemReminder = "<system-reminder>"

// lastUserText returns the text of the last user message: a string content
// as it is, or the last text block that is not a system reminder.
func lastUserText(req *messagesRequest) (text string, ok, toolResult bool) {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		m := req.Messages[i]
		if m.Role != "user" {
			continue
		}
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			return s, true, false
		}
		var blocks []block
		if json.Unmarshal(m.Content, &blocks) != nil {
			return "", false, false
		}
		for _, b := range blocks {
			if b.Type == "tool_result" {
				toolResult = true
			}
		}
		for j := len(blocks) - 1; j >= 0; j-- {
			b := blocks[j]
			if b.Type == "text" && !strings.HasPrefix(strings.TrimSpace(b.Text), systemReminder) {
				return b.Text, true, toolResult
			}
		}
		return "", false, toolResult
	}
	return "", false, false
}

// lastResults returns the text of each tool result of the last user
// message.
func lastResults(req *messagesRequest) []string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if m := req.Messages[i]; m.Role == "user" {
			var out []string
			for _, b := range blocks(m.Content) {
				if b.Type == "tool_result" {
					out = append(out, resultText(b.Content))
				}
			}
			return out
		}
	}
	return nil
}

// recordAnswer records a request with the status its reply answers it
// with, and returns that status.
func (s *Server) recordAnswer(rec Request, reply Reply) int {
	rec.Status = 200
	if reply.Status != 0 && reply.Status != 200 {
		rec.Status = reply.Status
	}
	s.record(rec)
	return rec.Status
}

func (s *Server) messages(w http.ResponseWriter, r *http.Request, body []byte) {
	var req messagesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		s.record(Request{Method: r.Method, Path: r.URL.Path, Status: 400, Time: time.Now()})
		writeJSON(w, 400, errorBody("invalid_request_error", "fakeapi: "+err.Error()))
		return
	}
	text, hasText, toolResult := lastUserText(&req)
	rec := Request{
		Method: r.Method, Path: r.URL.Path, Model: req.Model, Stream: req.Stream, Tools: len(req.Tools),
		Text: text, HasText: hasText, ToolResult: toolResult, Results: lastResults(&req), Time: time.Now(),
	}
	reply := s.choose(rec)
	if s.recordAnswer(rec, reply) != 200 {
		if reply.RetryAfter > 0 {
			w.Header().Set("retry-after", strconv.Itoa(int(reply.RetryAfter/time.Second)))
		}
		w.Header().Set("x-should-retry", "true")
		for k, v := range reply.Header {
			w.Header().Set(k, v)
		}
		writeJSON(w, reply.Status, errorBody(reply.ErrorType, reply.ErrorMessage))
		return
	}
	model := req.Model
	if model == "" {
		model = "claude-fake"
	}
	if !req.Stream {
		s.whole(w, model, reply)
		return
	}
	s.stream(w, r, model, reply)
}

// choose picks the reply for a request. Only the agent's own turns (which
// offer tools) follow the rules; a turn that only returns a tool's result,
// and a side request, get a short answer, so that a rule never loops.
func (s *Server) choose(r Request) Reply {
	if r.Tools == 0 {
		return Text("Fake title")
	}
	if !r.HasText {
		s.mu.Lock()
		defer s.mu.Unlock()
		if r.ToolResult && len(s.afterResults) > 0 {
			next := s.afterResults[0]
			s.afterResults = s.afterResults[1:]
			return next
		}
		return Text("The command finished.")
	}
	s.mu.Lock()
	rules := s.rules
	s.mu.Unlock()
	for _, ru := range rules {
		if strings.Contains(r.Text, ru.Match) {
			return ru.Reply
		}
	}
	return Text("Done.")
}

// SetRules replaces the rules the server answers by, from the next request
// on: a test that must word a reply from the moment it is asked for (a
// usage limit's reset) sets it then.
func (s *Server) SetRules(rules ...Rule) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rules = rules
}

func errorBody(typ, message string) map[string]any {
	if typ == "" {
		typ = "api_error"
	}
	return map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": message}}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("content-type", "application/json")
	w.Header().Set("request-id", "req_fake")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func usage(out int) map[string]any {
	return map[string]any{
		"input_tokens": 12, "output_tokens": out,
		"cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
	}
}

// whole answers a request that did not ask for a stream.
func (s *Server) whole(w http.ResponseWriter, model string, reply Reply) {
	var content []any
	if reply.Text != "" {
		content = append(content, map[string]any{"type": "text", "text": reply.Text})
	}
	stop := "end_turn"
	if reply.Tool != nil {
		content = append(content, map[string]any{"type": "tool_use", "id": s.id("toolu"), "name": reply.Tool.Name, "input": reply.Tool.Input})
		stop = "tool_use"
	}
	writeJSON(w, 200, map[string]any{
		"id": s.id("msg"), "type": "message", "role": "assistant", "model": model,
		"content": content, "stop_reason": stop, "stop_sequence": nil, "usage": usage(len(reply.Text)/4 + 1),
	})
}

// stream answers with server-sent events, trickling the text; it stops early
// when the client goes away or the server closes.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, model string, reply Reply) {
	w.Header().Set("request-id", "req_fake")
	send, wait := s.sse(w, r)
	ok := send("message_start", map[string]any{"message": map[string]any{
		"id": s.id("msg"), "type": "message", "role": "assistant", "model": model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": usage(1),
	}})
	index := 0
	out := 1
	if ok && reply.Text != "" {
		ok = send("content_block_start", map[string]any{"index": index, "content_block": map[string]any{"type": "text", "text": ""}})
		for _, chunk := range split(reply.Text, max(reply.Chunks, 1)) {
			if !ok || !wait(reply.Delay) {
				return
			}
			ok = send("content_block_delta", map[string]any{"index": index, "delta": map[string]any{"type": "text_delta", "text": chunk}})
			out += max(len(chunk)/4, 1)
		}
		ok = ok && send("content_block_stop", map[string]any{"index": index})
		index++
	}
	stop := "end_turn"
	if ok && reply.Tool != nil {
		stop = "tool_use"
		input, err := json.Marshal(reply.Tool.Input)
		if err != nil {
			input = []byte("{}")
		}
		ok = send("content_block_start", map[string]any{"index": index, "content_block": map[string]any{
			"type": "tool_use", "id": s.id("toolu"), "name": reply.Tool.Name, "input": map[string]any{},
		}})
		for _, chunk := range split(string(input), 2) {
			ok = ok && send("content_block_delta", map[string]any{"index": index, "delta": map[string]any{"type": "input_json_delta", "partial_json": chunk}})
		}
		ok = ok && send("content_block_stop", map[string]any{"index": index})
		out += len(input) / 4
	}
	ok = ok && send("message_delta", map[string]any{"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": out}})
	_ = ok && send("message_stop", map[string]any{})
}

// split cuts s into n pieces of about equal length, on rune boundaries.
func split(s string, n int) []string {
	runes := []rune(s)
	if n > len(runes) {
		n = max(len(runes), 1)
	}
	out := make([]string, 0, n)
	for i := range n {
		out = append(out, string(runes[i*len(runes)/n:(i+1)*len(runes)/n]))
	}
	return out
}

// Trigger words of the programs' capture tours (TourRules).
const (
	TriggerHold   = "think first"
	TriggerStream = "stream for a while"
)

// TourRules are the rules of a program's capture tour: a first token held
// 40 s (TriggerHold), an answer streamed for 60 s (TriggerStream), then
// DefaultRules.
func TourRules() []Rule {
	return append([]Rule{
		{Match: TriggerHold, Reply: Reply{Text: "Thought it through.", Chunks: 1, Delay: 40 * time.Second}},
		{Match: TriggerStream, Reply: Slow(60 * time.Second)},
	}, DefaultRules()...)
}

// NotRan fails t when the marker command (BashCommand) ran in dir: the
// approval dialog that asked for it was answered.
func NotRan(t testing.TB, dir string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, BashMarker)); err == nil {
		t.Fatalf("the marker command ran: %s exists", BashMarker)
	}
}
