package fakeapi

// This file is the fake OpenAI Responses API that Codex CLI talks to
// (a custom model provider with wire_api = "responses"): POST /v1/responses
// answered with a stream of response.* events. The same rules and replies
// as the Messages API choose the answer; a Bash tool call becomes Codex's
// exec_command.

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// NewResponses starts a fake Responses API on 127.0.0.1 answering by rules
// (DefaultRules when none are given), closed when the test ends. Its URL
// ends without /v1: Codex's base_url is URL+"/v1".
func NewResponses(t testing.TB, rules ...Rule) *Server {
	t.Helper()
	s := startWith(rules, (*Server).serveResponses)
	t.Cleanup(s.Close)
	return s
}

// startWith starts a server whose requests handle answers.
func startWith(rules []Rule, handle func(*Server, http.ResponseWriter, *http.Request)) *Server {
	if len(rules) == 0 {
		rules = DefaultRules()
	}
	s := &Server{rules: rules, done: make(chan struct{})}
	s.srv = httptest.NewUnstartedServer(s.hear(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handle(s, w, r) })))
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

// Prompts returns the last user text of every request that carried one and
// offered tools (the agent's own turns, not its side requests), oldest
// first, whatever the API.
func (s *Server) Prompts() []string {
	var out []string
	for _, r := range s.Requests() {
		if r.HasText && r.Tools > 0 {
			out = append(out, r.Text)
		}
	}
	return out
}

func (s *Server) unknownRequest(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.unknown = append(s.unknown, r.Method+" "+r.URL.Path)
	s.mu.Unlock()
	s.record(Request{Method: r.Method, Path: r.URL.Path, Status: 404, Time: time.Now()})
	writeJSON(w, 404, map[string]any{"error": map[string]any{"type": "not_found", "message": "fakeapi: no such endpoint: " + r.URL.Path}})
}

// responsesRequest is the part of a Responses API request the server reads.
type responsesRequest struct {
	Model  string            `json:"model"`
	Stream bool              `json:"stream"`
	Tools  []json.RawMessage `json:"tools"`
	Input  []struct {
		Type    string          `json:"type"`
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
		Output  json.RawMessage `json:"output"`
	} `json:"input"`
}

// lastInputText returns the text of the last user input item, skipping the
// context blocks Codex adds itself (<environment_context>, AGENTS.md
// instructions); toolResult says a function call's output came after it.
func lastInputText(req *responsesRequest) (text string, ok, toolResult bool) {
	for i := len(req.Input) - 1; i >= 0; i-- {
		it := req.Input[i]
		if it.Type == "function_call_output" || it.Type == "custom_tool_call_output" {
			if !ok {
				toolResult = true
			}
			return "", false, toolResult
		}
		if it.Role != "user" {
			continue
		}
		var parts []block
		if json.Unmarshal(it.Content, &parts) != nil {
			continue
		}
		for j := len(parts) - 1; j >= 0; j-- {
			t := strings.TrimSpace(parts[j].Text)
			if parts[j].Type == "input_text" && t != "" && !strings.HasPrefix(t, "<") && !strings.HasPrefix(t, "# AGENTS.md") {
				return parts[j].Text, true, false
			}
		}
	}
	return "", false, false
}

// lastOutputs returns the output of each function call after the last
// user input item, as text: a string output as it is, any other JSON as
// its text.
func lastOutputs(req *responsesRequest) []string {
	var out []string
	for i := len(req.Input) - 1; i >= 0; i-- {
		it := req.Input[i]
		if it.Role == "user" {
			break
		}
		if it.Type != "function_call_output" && it.Type != "custom_tool_call_output" {
			continue
		}
		var s string
		if json.Unmarshal(it.Output, &s) != nil {
			s = string(it.Output)
		}
		out = append([]string{s}, out...)
	}
	return out
}

func (s *Server) serveResponses(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/responses") {
		s.unknownRequest(w, r)
		return
	}
	var req responsesRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<20)).Decode(&req); err != nil {
		s.record(Request{Method: r.Method, Path: r.URL.Path, Status: 400, Time: time.Now()})
		writeJSON(w, 400, map[string]any{"error": map[string]any{"type": "invalid_request_error", "message": "fakeapi: " + err.Error()}})
		return
	}
	text, hasText, toolResult := lastInputText(&req)
	rec := Request{
		Method: r.Method, Path: r.URL.Path, Model: req.Model, Stream: req.Stream, Tools: len(req.Tools),
		Text: text, HasText: hasText, ToolResult: toolResult, Results: lastOutputs(&req), Time: time.Now(),
	}
	reply := s.choose(rec)
	if s.recordAnswer(rec, reply) != 200 {
		if reply.RetryAfter > 0 {
			w.Header().Set("retry-after", strconv.Itoa(int(reply.RetryAfter/time.Second)))
		}
		e := map[string]any{"type": reply.ErrorType, "message": reply.ErrorMessage, "code": reply.ErrorType}
		for k, v := range reply.ErrorFields {
			e[k] = v
		}
		for k, v := range reply.Header {
			w.Header().Set(k, v)
		}
		writeJSON(w, reply.Status, map[string]any{"error": e})
		return
	}
	s.streamResponses(w, r, req.Model, reply)
}

// streamResponses answers with the Responses API's events: created, the
// text as output_text deltas and its finished message item, a function call
// item for a tool, completed.
func (s *Server) streamResponses(w http.ResponseWriter, r *http.Request, model string, reply Reply) {
	send, wait := s.sse(w, r)
	id := s.id("resp")
	ok := send("response.created", map[string]any{"response": map[string]any{"id": id, "model": model, "status": "in_progress"}})
	index := 0
	if ok && reply.Text != "" {
		item := s.id("msg")
		ok = send("response.output_item.added", map[string]any{"output_index": index, "item": map[string]any{
			"type": "message", "id": item, "role": "assistant", "status": "in_progress", "content": []any{},
		}})
		for _, chunk := range split(reply.Text, max(reply.Chunks, 1)) {
			if !ok || !wait(reply.Delay) {
				return
			}
			ok = send("response.output_text.delta", map[string]any{"item_id": item, "output_index": index, "content_index": 0, "delta": chunk})
		}
		ok = ok && send("response.output_item.done", map[string]any{"output_index": index, "item": map[string]any{
			"type": "message", "id": item, "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": reply.Text, "annotations": []any{}}},
		}})
		index++
	}
	if ok && reply.Tool != nil {
		name, args := codexTool(reply.Tool)
		item := map[string]any{
			"type": "function_call", "id": s.id("fc"), "call_id": s.id("call"), "status": "completed",
			"name": name, "arguments": args,
		}
		// A tool of a namespace (an MCP server's, the sub-agents') is
		// called by its namespace and its name.
		if i := strings.LastIndex(name, "__"); i > 0 {
			item["namespace"], item["name"] = name[:i], name[i+2:]
		}
		ok = send("response.output_item.done", map[string]any{"output_index": index, "item": item})
	}
	_ = ok && send("response.completed", map[string]any{"response": map[string]any{
		"id": id, "model": model, "status": "completed",
		"usage": map[string]any{
			"input_tokens": 12, "input_tokens_details": map[string]any{"cached_tokens": 0},
			"output_tokens": len(reply.Text)/4 + 1, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
			"total_tokens": 13 + len(reply.Text)/4,
		},
	}})
}

// codexTool translates a scripted tool call into Codex's own: Bash becomes
// exec_command with its command as cmd; any other passes as it is, a
// NAMESPACE__TOOL name called as TOOL of NAMESPACE.
func codexTool(tu *ToolUse) (name, args string) {
	name = tu.Name
	input := tu.Input
	if in, ok := tu.Input.(map[string]any); ok && tu.Name == "Bash" {
		name = "exec_command"
		m := map[string]any{"cmd": in["command"]}
		for k, v := range in {
			if k != "command" && k != "description" {
				m[k] = v
			}
		}
		input = m
	}
	if qs, ok := tu.Input.(map[string]any)["questions"].([]Question); ok && tu.Name == "AskUserQuestion" {
		// Codex's question tool (Plan mode only): each question has an id.
		name = "request_user_input"
		var out []map[string]any
		for i, q := range qs {
			out = append(out, map[string]any{"id": fmt.Sprintf("q%d", i+1), "header": q.Header, "question": q.Question, "options": q.Options})
		}
		input = map[string]any{"questions": out}
	}
	b, err := json.Marshal(input)
	if err != nil {
		b = []byte("{}")
	}
	return name, string(b)
}

// sse returns a function that sends one server-sent event, its type also
// in its data, and one that waits unless the client or the server goes
// away. It writes the stream's headers first.
func (s *Server) sse(w http.ResponseWriter, r *http.Request) (send func(event string, data map[string]any) bool, wait func(time.Duration) bool) {
	w.Header().Set("content-type", "text/event-stream")
	w.Header().Set("cache-control", "no-cache")
	w.WriteHeader(200)
	flusher, _ := w.(http.Flusher)
	send = func(event string, data map[string]any) bool {
		b, err := json.Marshal(data)
		if event != "" {
			data["type"] = event
			b, err = json.Marshal(data)
		}
		if err != nil {
			return false
		}
		var line string
		if event != "" {
			line = "event: " + event + "\n"
		}
		if _, err := w.Write([]byte(line + "data: " + string(b) + "\n\n")); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return true
	}
	wait = func(d time.Duration) bool {
		if d <= 0 {
			return true
		}
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return true
		case <-r.Context().Done():
		case <-s.done:
		}
		return false
	}
	return send, wait
}
